import Foundation
import Testing
import TestSupport

/// The man pages and the bash completion the package ships, checked against what the binary itself accepts:
/// every flag `steward help <command>` prints, every section and key `config check` knows (read back from its
/// own "unknown key" refusals), rendered by groff and man without a warning, completion sourced in bash.
@Suite("man pages and bash completion: every flag and key, no groff warning, completions that work")
struct ManualPageTests {
    /// Runs a program to completion.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
        let result = try StewardProcess.runProgram(executable, arguments, environment: environment)
        return (result.exitCode, result.stdout, result.stderr)
    }

    static func page(_ name: String) throws -> String {
        let result = try StewardProcess.run(["man", name])
        #expect(result.exitCode == 0, "steward man \(name): \(result.stderr)")
        return result.stdout
    }

    static func folder() throws -> String {
        let path = NSTemporaryDirectory() + "steward-man-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The commands `steward help` lists, then each command's flags as its `--help` prints them.
    static func commandsAndFlags() throws -> [(command: String, flags: [String])] {
        let overview = try StewardProcess.run(["help"]).stdout
        let commandsBlock = overview.components(separatedBy: "Commands:\n")[1].components(separatedBy: "\n\n")[0]
        var result: [(String, [String])] = []
        for line in commandsBlock.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            guard let first = words.first, first != "help", first != "version" else { continue }
            // Commands of two or three words print as "job run", "config check", "fleet job run"; the abstract starts upper case.
            let name = words.prefix { !$0.first!.isUppercase }.joined(separator: " ")
            let help = try StewardProcess.run(["help"] + name.split(separator: " ").map(String.init))
            #expect(help.exitCode == 0, "steward help \(name)")
            let flags = help.stdout.components(separatedBy: "Options:\n").last!.split(separator: "\n")
                .compactMap { $0.split(separator: " ").first.map(String.init) }.filter { $0.hasPrefix("--") }
            result.append((name, flags))
        }
        return result
    }

    /// The names `config check` lists in a refusal: "... (known: a, b, c)" or "(known in [x]: a, b)".
    static func knownList(_ config: String, in folder: String) throws -> [String] {
        let path = folder + "/probe.ini"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try StewardProcess.run(["config", "check", "--config", path])
        #expect(result.exitCode == 78, "config check should refuse \(config): \(result.output)")
        guard let range = result.stderr.range(of: #"\(known[^:]*: [^)]*\)"#, options: .regularExpression) else {
            Issue.record("no known list in: \(result.stderr)")
            return []
        }
        let list = result.stderr[range].dropFirst().dropLast().split(separator: ":", maxSplits: 1)[1]
        return list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    @Test("steward(1) names every command and every flag steward help prints, every exit code and variable")
    func stewardPageCoversHelp() throws {
        let page = try Self.page("steward")
        let commands = try Self.commandsAndFlags()
        #expect(commands.count >= 9, "commands read from steward help: \(commands.map(\.command))")
        var checked = 0
        for (command, flags) in commands {
            guard let start = page.range(of: ".SS \"steward \(command.replacingOccurrences(of: "-", with: "\\-"))") else {
                Issue.record("steward(1) has no section for \(command)")
                continue
            }
            let section = page[start.upperBound...].components(separatedBy: "\n.SS ")[0]
            for flag in flags {
                let roff = "\\fB" + flag.replacingOccurrences(of: "-", with: "\\-") + "\\fR"
                #expect(section.contains(roff), "steward(1) lacks \(flag) under \(command)")
                checked += 1
            }
        }
        #expect(checked > 40)
        for code in ["0", "1", "2", "64", "69", "75", "78"] { #expect(page.contains(".TP\n.B \(code)\n"), "exit code \(code)") }
        // The variables the sources read with getenv.
        for variable in ["STEWARD_DATABASE_URL", "STEWARD_MIGRATIONS_DIR", "STEWARD_LOG_LEVEL", "STEWARD_CONTROL_SOCKET", "CREDENTIALS_DIRECTORY"] {
            #expect(page.contains(".B \(variable)\n"), "variable \(variable)")
        }
        for file in ["/etc/steward/steward.ini", "/run/steward/control.sock", "/usr/share/steward/migrations"] {
            #expect(page.contains(file.replacingOccurrences(of: "-", with: "\\-")), "file \(file)")
        }
    }

    @Test("steward.ini(5) has every section and key config check knows, each with a default")
    func iniPageCoversConfigCheck() throws {
        let page = try Self.page("steward.ini")
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sections = try Self.knownList("[no-such-section]\nx = 1\n", in: folder)
        #expect(sections.count >= 8, "sections: \(sections)")
        var keys = 0
        func entries(_ heading: String) -> String? {
            guard let start = page.range(of: ".SH \"\(heading)\"\n") ?? page.range(of: ".SS \"\(heading)\"\n") else { return nil }
            return page[start.upperBound...].components(separatedBy: "\n.S")[0]
        }
        for section in sections {
            let known = try Self.knownList("[\(section)]\nno_such_key = 1\n", in: folder)
            guard let text = entries("[\(section)]") else { Issue.record("steward.ini(5) has no [\(section)]"); continue }
            for key in known {
                let entry = ".TP\n.B \(key.replacingOccurrences(of: "-", with: "\\-"))\n"
                #expect(text.contains(entry), "steward.ini(5) lacks [\(section)] \(key)")
                if let at = text.range(of: entry) {
                    #expect(text[at.upperBound...].components(separatedBy: ".TP")[0].contains("Default: "), "[\(section)] \(key) has no default")
                }
                keys += 1
            }
        }
        let jobs = try Self.knownList("[job.no-such-job]\nschedule = @daily\n", in: folder)
        #expect(jobs.count >= 4, "jobs: \(jobs)")
        let common = entries("[job.NAME]") ?? ""
        for job in jobs {
            let known = try Self.knownList("[job.\(job)]\nno_such_key = 1\n", in: folder)
            let own = entries("[job.\(job.replacingOccurrences(of: "-", with: "\\-"))]")
            #expect(own != nil, "steward.ini(5) has no [job.\(job)]")
            for key in known {
                let entry = ".TP\n.B \(key)\n"
                #expect(common.contains(entry) || (own ?? "").contains(entry), "steward.ini(5) lacks [job.\(job)] \(key)")
                keys += 1
            }
        }
        // The keys of a fleet's [target.NAME] sections, as config check refuses an unknown one.
        let targetKeys = try Self.knownList("[target.a]\nurl = postgresql://h/a\nno_such_key = 1\n", in: folder)
        #expect(targetKeys.count >= 5, "target keys: \(targetKeys)")
        let targets = entries("[target.NAME]") ?? ""
        for key in targetKeys { #expect(targets.contains(".TP\n.B \(key)\n"), "steward.ini(5) lacks [target.NAME] \(key)") }
        #expect(keys > 50, "keys checked: \(keys)")
    }

    @Test("groff -ww and man -l render both pages without a warning", arguments: ["steward", "steward.ini"])
    func rendersWithoutWarnings(name: String) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/\(name).\(name == "steward" ? 1 : 5)"
        try Self.page(name).write(toFile: path, atomically: true, encoding: .utf8)
        let groff = try Self.run("/usr/bin/groff", ["-ww", "-man", "-Tutf8", "-z", path])
        #expect(groff.status == 0 && groff.stderr.isEmpty, "groff -ww: \(groff.stderr)")
        let man = try Self.run("/usr/bin/man", ["--warnings=w", "-l", path], environment: ["MANWIDTH": "80", "MANPAGER": "cat", "LC_ALL": "C.UTF-8"])
        #expect(man.status == 0 && man.stderr.isEmpty, "man -l: \(man.stderr)")
        #expect(man.stdout.contains(name == "steward" ? "migrate" : "[database]"))
        #expect(!man.stdout.contains("\\"), "a stray escape in the rendered page")
    }

    @Test("bash completion completes commands, sub-commands, flags, job names and --config files")
    func bashCompletion() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let completion = try StewardProcess.run(["man", "bash-completion"])
        #expect(completion.exitCode == 0)
        try completion.stdout.write(toFile: folder + "/steward", atomically: true, encoding: .utf8)
        try "".write(toFile: folder + "/staging.ini", atomically: true, encoding: .utf8)
        try "".write(toFile: folder + "/standby.ini", atomically: true, encoding: .utf8)
        // Each case: the words typed (the last one being completed), and what must (and must not) be offered.
        let cases: [(line: [String], expected: [String], absent: [String])] = [
            (["steward", "mi"], ["migrate"], ["status"]),
            (["steward", ""], ["migrate", "status", "verify", "run", "job", "ctl", "config", "apple-secret", "help", "version"], []),
            (["steward", "job", ""], ["run"], []),
            (["steward", "job", "run", ""], ["prune-history", "username-check", "orphan-avatars", "apple-secret"], []),
            (["steward", "job", "run", "prune-history", "--dr"], ["--dry-run"], []),
            (["steward", "migrate", "--a"], ["--adopt", "--allow-out-of-order"], ["--dry-run"]),
            (["steward", "ctl", "pa"], ["pause"], []),
            (["steward", "ctl", "pause", "or"], ["orphan-avatars"], []),
            (["steward", "config", "check", "--config", folder + "/sta"], [folder + "/staging.ini", folder + "/standby.ini"], []),
            (["steward", "apple-secret", ""], ["status", "generate"], []),
            (["steward", "fl"], ["fleet"], []),
            (["steward", "fleet", ""], ["status", "migrate", "verify", "job"], ["run"]),
            (["steward", "fleet", "job", ""], ["run"], []),
            (["steward", "fleet", "job", "run", "us"], ["username-check"], []),
            (["steward", "fleet", "job", "run", "prune-history", "--st"], ["--stage"], ["--adopt"]),
            (["steward", "fleet", "migrate", "--"], ["--stage", "--parallel", "--continue-on-error", "--dry-run", "--config"], ["--database-url", "--adopt"]),
            (["steward", "fleet", "status", "--"], ["--json", "--parallel"], ["--continue-on-error"]),
        ]
        for (line, expected, absent) in cases {
            let words = line.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
            let script = """
            source '\(folder)/steward'
            COMP_WORDS=(\(words)); COMP_CWORD=\(line.count - 1)
            _steward
            printf '%s\\n' "${COMPREPLY[@]}"
            """
            let bash = try Self.run("/bin/bash", ["--norc", "--noprofile", "-c", script])
            let offered = Set(bash.stdout.split(separator: "\n").map(String.init))
            #expect(bash.status == 0 && bash.stderr.isEmpty, "\(line): \(bash.stderr)")
            for word in expected { #expect(offered.contains(word), "completing \(line) should offer \(word); got \(offered.sorted())") }
            for word in absent { #expect(!offered.contains(word), "completing \(line) should not offer \(word)") }
        }
    }
}
