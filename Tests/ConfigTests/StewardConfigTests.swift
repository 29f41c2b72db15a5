@testable import Config
import AppleSecret
import CLI
import Jobs
import Migrations
import OrphanAvatars
import steward

import Testing

@Suite("configuration: the strict INI reader, environment, flags")
struct StewardConfigTests {
    @Test("entries keep their section and line; comments and blank lines are skipped")
    func lineNumbers() throws {
        let file = try INIFile(path: "steward.ini", text: "; comment\n\n[database]\nurl = postgresql://x\n# another\n[log]\nlevel = debug\n")
        #expect(file.entries == [
            .init(section: "database", key: "url", value: "postgresql://x", line: 4),
            .init(section: "log", key: "level", value: "debug", line: 7),
        ])
    }

    @Test("a long line (a pooler URL with many options) is read whole")
    func longLine() throws {
        let url = "postgresql://postgres.abcdefghijklmnopqrst@aws-0-eu-central-1.pooler.supabase.com:5432/postgres?sslmode=verify-full&options="
            + String(repeating: "x", count: 5000)
        let file = try INIFile(path: "s.ini", text: "[database]\nurl = " + url + "\n")
        #expect(file.entries == [.init(section: "database", key: "url", value: url, line: 2)])
    }

    @Test("the environment fills in what the file leaves out, and beats it")
    func environment() throws {
        let config = try StewardConfig.load(path: nil, environment: ["STEWARD_DATABASE_URL": "postgresql://env", "STEWARD_LOG_LEVEL": "warning"],
                                            schema: .steward)
        #expect(config[DatabaseConfig.url] == "postgresql://env")
        #expect(config[LogConfig.level] == "warning")
        #expect(config[MigrationsConfig.directory] == "sql/migrations")
    }

    @Test("the example config in config/ is valid and covers every known key")
    func exampleConfig() throws {
        let root = #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
        let path = "/" + root + "/config/steward.ini"
        let config = try StewardConfig.load(path: path, environment: [:], schema: .steward)
        #expect(config[MigrationsConfig.lockTimeout] == "200ms")
        #expect(config[MigrationsConfig.lockRetryBudget] == 120)
        // Every key declared (sections, every job's common and own keys) is in the example, set or as a `; key =`
        // comment under its section; everything the example sets was accepted by the load above.
        var written: Set<String> = []
        var section = ""
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
            let body = line.hasPrefix(";") ? line.dropFirst().drop { $0 == " " } : line[...]
            if body.hasPrefix("[") { section = String(body.dropFirst().prefix { $0 != "]" }); continue }
            guard let eq = body.range(of: " = ") else { continue }
            let key = body[..<eq.lowerBound]
            if !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) { written.insert("[\(section)] \(key)") }
        }
        // Sections' keys; each job's own keys under its section; the common keys once, under [job.prune-history].
        let declared = ConfigSchema.steward.keys.map { "[\($0.section)] \($0.name)" }
            + JobCatalog.steward.all.flatMap { job in job.options.map { "[job.\(job.name)] \($0.erased.name)" } }
            + JobSettings.common.map { "[job.prune-history] \($0.name)" }
        for key in declared {
            let present = written.contains(key)
            #expect(present, "config/steward.ini lacks \(key)")
        }
        #expect(declared.count >= 60, "\(declared.count) keys declared")
    }

    @Test("one way to say yes or no, for every boolean key: true/false, yes/no, on/off, 1/0")
    func booleans() throws {
        for (yes, no) in [("true", "false"), ("yes", "no"), ("on", "off"), ("1", "0")] {
            let on = try StewardConfig.parse(path: "b.ini", bytes: Array("[apple]\nauto_rotate = \(yes)\n[job.orphan-avatars]\nfence = \(yes)\nenabled = \(yes)\n".utf8),
                                             schema: .steward)
            let off = try StewardConfig.parse(path: "b.ini", bytes: Array("[apple]\nauto_rotate = \(no)\n[job.orphan-avatars]\nfence = \(no)\nenabled = \(no)\n".utf8),
                                              schema: .steward)
            #expect(AppleSettings(on).autoRotate && !AppleSettings(off).autoRotate)
            let jobOn = try JobSettings(job: OrphanAvatarsJob.self, section: on.jobSections.first)
            let jobOff = try JobSettings(job: OrphanAvatarsJob.self, section: off.jobSections.first)
            #expect(jobOn.enabled && !jobOff.enabled)
            #expect(try OrphanAvatarsJob.settings(jobOn.options, config: on).fence && !OrphanAvatarsJob.settings(jobOff.options, config: off).fence)
        }
        #expect(throws: ConfigError.self) { try StewardConfig.parse(path: "b.ini", bytes: Array("[apple]\nauto_rotate = maybe\n".utf8), schema: .steward) }
    }

    @Test("every declared default is a value its own key accepts, written back as the manual shows it")
    func defaultsReadBack() throws {
        for key in ConfigSchema.steward.keys + JobSettings.common + JobCatalog.steward.all.flatMap({ $0.options.map(\.erased) }) where !key.repeatable {
            let text = key.defaultText
            guard !text.hasPrefix("unset"), text != "none", !text.contains("("), key.name != "host" else { continue }
            if case .failure(let problem) = key.readPlain(text) {
                Issue.record("[\(key.section)] \(key.name): its default \"\(text)\" is refused: \(problem.message)")
            }
        }
    }

    @Test("command lines: options with values, flags, --key=value, and clear usage errors")
    func commandLine() throws {
        let spec = CommandSpec(name: "migrate", abstract: "x", options: [.init("dry-run", help: ""), .init("database-url", value: "URL", help: "")])
        let parsed = try spec.parse(["--dry-run", "--database-url=postgresql://a"])
        #expect(parsed.flag("dry-run"))
        #expect(parsed.value("database-url") == "postgresql://a")
        #expect(throws: UsageError.self) { try spec.parse(["--dry-run=yes"]) }
        #expect(throws: UsageError.self) { try spec.parse(["positional"]) }
        #expect(spec.help.contains("--database-url URL"))
    }
}
