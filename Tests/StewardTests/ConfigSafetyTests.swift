import Foundation
import Testing
import TestSupport

/// Numbers, files and flags from outside through the real binary: what `config check` accepts the daemon can
/// run, nothing traps (no process dies on a signal), and secret files are refused naming file, line and key.
@Suite("config files, flags and secret files through the steward binary: no trap, clear refusals")
struct ConfigSafetyTests {
    /// A fresh private folder for one test's files.
    static func folder() throws -> String {
        let path = NSTemporaryDirectory() + "steward-cfg-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return path
    }

    static func write(_ text: String, to path: String, mode: Int = 0o600) throws {
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode]), "could not write the test file")
    }

    @Test("values that crashed the daemon or config check are refused by both, naming file:line and key", arguments: [
        ("[job.prune-history]\ntimeout = 99999999999s\n", ":2: [job.prune-history] timeout"),
        ("[job.prune-history]\ntimeout = 999999999999999d\n", ":2: [job.prune-history] timeout"),
        ("[daemon]\nshutdown_timeout = 1e300\n", ":2: [daemon] shutdown_timeout"),
        ("[migrations]\nlock_wait = inf\n", ":2: [migrations] lock_wait"),
        ("[migrations]\nlock_wait = nan\n", ":2: [migrations] lock_wait"),
        ("[daemon]\nleader_poll = 0\n", ":2: [daemon] leader_poll"),
        ("[daemon]\nrelease_memory_after = nan\n", ":2: [daemon] release_memory_after"),
        ("[daemon]\nrelease_memory_after = -1\n", ":2: [daemon] release_memory_after"),
        ("[job.prune-history]\nretry_backoff = 9223372036854775807s\n", ":2: [job.prune-history] retry_backoff"),
        ("[job.prune-history]\nschedule = @every 99999999999999d\n", ":2: [job.prune-history] schedule"),
    ])
    func reportedCrashes(text: String, expected: String) throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/steward.ini"
        try Self.write(text, to: path)
        for command in [["config", "check"], ["run"]] {
            let result = try StewardProcess.run(command + ["--config", path], environment: ["STEWARD_CONTROL_SOCKET": dir + "/c.sock"], timeout: 30)
            #expect(!result.crashed && result.signal == nil, "\(command) died on signal \(result.signal ?? 0)")
            #expect(result.exitCode == 78, "\(command): \(result.output)")
            #expect(result.stderr.contains(path + expected), "\(command): \(result.stderr)")
        }
    }

    /// Flags with numbers, each with the values that must be refused, and the message that names the flag.
    static let numberFlags: [(arguments: [String], flag: String)] = [
        (["ctl", "status", "--timeout"], "--timeout"),
        (["migrate", "--database-url", "postgresql://postgres:x@127.0.0.1:1/postgres?connect_timeout=1", "--lock-wait"], "--lock-wait"),
        (["apple-secret", "generate", "--out", "/nonexistent/secret.jwt", "--days"], "--days"),
    ]

    @Test("hostile config files and hostile flag numbers through the binary: counted, none kills the process")
    func fuzzedThroughBinary() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let seed = HostileInputs.seed
        print("config and flags through the binary: seed \(seed)")
        var inputs = HostileInputs(seed: seed)
        let environment = ["STEWARD_CONTROL_SOCKET": dir + "/none.sock"]
        var cases = 0, crashes = 0, wrongExit = 0
        let deadline = Date().addingTimeInterval(90)

        // Flags: every hostile number for every numeric flag.
        let mustRefuse: Set<String> = ["nan", "NaN", "inf", "-inf", "infinity", "1e300", "-1e300", "-1", "99999999999", "9223372036854775808",
                                       "99999999999999999999999", "0x10", "0x1p3", "1_000", "1,5", "١٢", "½", "", "1..2", "--1"]
        for (arguments, flag) in Self.numberFlags {
            for value in HostileInputs.hostileNumbers {
                let result = try StewardProcess.run(arguments + [value], environment: environment, timeout: 20)
                cases += 1
                if result.crashed { crashes += 1; Issue.record("\(flag) \(value): signal \(result.signal ?? 0)") }
                if mustRefuse.contains(value), result.exitCode != 64 || !result.stderr.contains(flag) {
                    wrongExit += 1
                    Issue.record("\(flag) \(value.debugDescription): exit \(result.exitCode), \(result.stderr)")
                }
            }
        }

        // Files: the committed corpus (a sample) and generated files, through `config check`.
        let corpus = HostileInputs.corpus("config")
        var files = Array(corpus.prefix(60))
        for _ in 0..<240 { files.append(inputs.configFile()) }
        let path = dir + "/fuzzed.ini"
        for (index, bytes) in files.enumerated() where Date() < deadline {
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]), "could not write the test file")
            let result = try StewardProcess.run(["config", "check", "--config", path], environment: environment, timeout: 20)
            cases += 1
            if result.crashed {
                crashes += 1
                let kept = dir + "/../steward-crash-\(seed)-\(index).ini"
                try? FileManager.default.copyItem(atPath: path, toPath: kept)
                Issue.record("config check died on signal \(result.signal ?? 0); input kept at \(kept)")
            } else if result.exitCode != 0 && result.exitCode != 78 {
                wrongExit += 1
                Issue.record("config check exit \(result.exitCode) (expected 0 or 78) on case \(index), seed \(seed): \(result.stderr)")
            } else if result.exitCode == 78 && !result.stderr.contains(path) {
                wrongExit += 1
                Issue.record("config check refused case \(index) without naming the file: \(result.stderr)")
            }
        }
        print("config and flags through the binary: \(cases) cases, \(crashes) crashes, \(wrongExit) wrong exits")
        #expect(cases >= 150)
        FaultLedger.check("config and flags: fuzzed inputs", runs: cases, faults: wrongExit,
                          cases: cases, crashes: crashes)
    }

    /// One way a secret file can be wrong, and the words of the refusal.
    struct BadSecretFile: CustomTestStringConvertible, Sendable {
        let name: String
        let expected: String
        let make: @Sendable (String) throws -> Void
        var testDescription: String { name }
    }

    static let secretContent = "Fi1e-Secret-7d3c"

    static let badSecretFiles: [BadSecretFile] = [
        .init(name: "symlink", expected: "symbolic link") { path in
            try write(secretContent, to: path + ".target")
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + ".target")
        },
        .init(name: "FIFO (must not hang)", expected: "not a regular file") { path in guard mkfifo(path, 0o600) == 0 else { throw CocoaError(.fileWriteUnknown) } },
        .init(name: "group-readable", expected: "readable by group or others") { path in try write(secretContent, to: path, mode: 0o640) },
        .init(name: "owned by another user", expected: "belongs to uid 4242") { path in
            try write(secretContent, to: path)
            guard chown(path, 4242, 4242) == 0 || geteuid() != 0 else { throw CocoaError(.fileWriteNoPermission) }
        },
        .init(name: "too big", expected: "larger than 65536 bytes") { path in try write(String(repeating: secretContent, count: 5000), to: path) },
        .init(name: "NUL byte", expected: "NUL byte") { path in
            #expect(FileManager.default.createFile(atPath: path, contents: Data(("Sup3r" + "\u{0}" + secretContent).utf8), attributes: [.posixPermissions: 0o600]), "could not write the test file")
        },
        .init(name: "invalid UTF-8", expected: "not valid UTF-8") { path in
            #expect(FileManager.default.createFile(atPath: path, contents: Data(secretContent.utf8) + Data([0xC3, 0x28, 0xFF]), attributes: [.posixPermissions: 0o600]), "could not write the test file")
        },
        .init(name: "empty", expected: "is empty") { path in try write("\n", to: path) },
        .init(name: "a directory", expected: "not a regular file") { path in try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) },
    ]

    @Test("every configured secret file is checked by config check: no symlink, FIFO, foreign owner, wide mode, huge or binary file",
          arguments: badSecretFiles, ["[database] password_file", "[storage] service_key_file", "[apple] access_token_file"])
    func badSecretFile(bad: BadSecretFile, key: String) throws {
        if bad.name == "owned by another user" && geteuid() != 0 { return }
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let secret = dir + "/secret"
        try bad.make(secret)
        let parts = key.dropFirst().split(separator: "]")
        let section = String(parts[0]), name = parts[1].trimmingCharacters(in: .whitespaces)
        let path = dir + "/steward.ini"
        try Self.write("[\(section)]\n\(name) = \(secret)\n", to: path)
        let started = Date()
        let result = try StewardProcess.run(["config", "check", "--config", path], timeout: 20)
        #expect(Date().timeIntervalSince(started) < 10, "config check took \(Date().timeIntervalSince(started)) s")
        #expect(result.exitCode == 78, "\(result.output)")
        #expect(result.stderr.contains(path + ":2: " + key + ": "), "\(result.stderr)")
        #expect(result.stderr.contains(bad.expected), "\(result.stderr)")
        var scan = SecretScan(secrets: [("file content", Self.secretContent)])
        scan.scan(result, place: "config check")
        #expect(scan.findings.isEmpty, "\(scan.findings)")
    }

    @Test("the daemon checks every secret file at start and at reload: a bad one is refused naming the key, the old config kept", .needsCluster)
    func daemonStartAndReload() throws {
        try withTestDatabase { db in
            let dir = try Self.folder()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let wide = dir + "/service-key"
            try Self.write(Self.secretContent, to: wide, mode: 0o644)
            let daemon = try DaemonProcess(databaseURL: db.url, config: "[job.prune-history]\nschedule = @daily\n")
            #expect(daemon.waitUntil(leader: true, timeout: 20))
            try daemon.rewrite(extra: "[storage]\nservice_key_file = \(wide)\n[job.prune-history]\nschedule = @hourly\n", databaseURL: db.url)
            let refused = try daemon.ctlJSON(["reload"])
            let error = refused["error"] as? String ?? ""
            #expect(refused["ok"] as? Bool == false)
            #expect(error.contains("\(daemon.configPath):12: [storage] service_key_file") && error.contains("readable by group or others"), "\(refused)")
            #expect(!error.contains(Self.secretContent))
            let jobs = try daemon.ctlJSON(["jobs"])["jobs"] as? [[String: Any]]
            #expect(jobs?.first?["schedule"] as? String == "@daily")
            let stopped = daemon.stop()
            #expect(stopped.exitCode == 0)
            #expect(!stopped.output.contains(Self.secretContent))

            // At start: the same file stops the daemon before it connects (exit 78).
            let start = try StewardProcess.run(["run", "--config", daemon.configPath], timeout: 30)
            #expect(start.exitCode == 78, "\(start.stderr)")
            #expect(start.stderr.contains("[storage] service_key_file") && start.stderr.contains("readable by group or others"), "\(start.stderr)")
            #expect(!start.output.contains(Self.secretContent))
        }
    }

    @Test("credential: names that leave $CREDENTIALS_DIRECTORY are refused with file:line", arguments: ["credential:../x", "credential:a/b", "credential:..", "credential:"])
    func credentialNames(value: String) throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/steward.ini"
        try Self.write("[storage]\nservice_key_file = \(value)\n", to: path)
        let result = try StewardProcess.run(["config", "check", "--config", path], environment: ["CREDENTIALS_DIRECTORY": dir])
        #expect(result.exitCode == 78)
        #expect(result.stderr.contains(path + ":2: [storage] service_key_file: "), "\(result.stderr)")
        #expect(result.stderr.contains("not a plain credential name"), "\(result.stderr)")
    }

    @Test("http:// is refused for URLs that carry the service key or token, except to loopback", arguments: [
        ("storage", "url", "http://abcd.supabase.co", false), ("apple", "management_url", "http://api.supabase.com", false),
        ("apple", "webhook_url", "HTTP://hooks.example.com/x", false), ("storage", "url", "http://127.0.0.1:9000", true),
        ("storage", "url", "http://localhost:9000/storage/v1", true), ("apple", "management_url", "http://[::1]:8080", true),
        ("storage", "url", "http://127.0.0.1.evil.example", false), ("storage", "url", "http://user@127.0.0.1", false),
        ("storage", "url", "ftp://x", false), ("storage", "url", "https://abcd.supabase.co", true),
    ])
    func plainHTTP(section: String, key: String, url: String, allowed: Bool) throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/steward.ini"
        try Self.write("; comment\n[\(section)]\n\(key) = \(url)\n", to: path)
        let result = try StewardProcess.run(["config", "check", "--config", path])
        if allowed {
            #expect(result.exitCode == 0, "\(result.output)")
        } else {
            #expect(result.exitCode == 78, "\(result.output)")
            #expect(result.stderr.contains(path + ":3: [\(section)] \(key): "), "\(result.stderr)")
        }
    }

    @Test("INI: a key set twice, an indented continuation line and control characters are refused with file:line; a 4 KB URL fits", arguments: [
        ("[log]\nlevel = info\nlevel = debug\n", ":3: [log] level: set twice (first at line 2)"),
        ("[database]\nurl = postgresql://a\n  ?sslmode=require\n", ":3: indented line"),
        ("[log]\nlevel = in\u{1B}[2Jfo\n", ":2: holds a control character"),
        ("[log]\nlevel = info\u{2028}\n", ":2: holds a control character"),
        ("[log]\nlevel = info\r\n[log]\nlevel = debug\r\n", ":4: [log] level: set twice"),
    ])
    func strictINI(text: String, expected: String) throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/steward.ini"
        try Self.write(text, to: path)
        let result = try StewardProcess.run(["config", "check", "--config", path])
        #expect(result.exitCode == 78)
        #expect(result.stderr.contains(path + expected), "\(result.stderr)")
        #expect(!result.stderr.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{2028}" })
    }

    @Test("a long pooler URL (4 KB line) is read whole by config check")
    func longLine() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/steward.ini"
        let url = "postgresql://postgres.abcdefghijklmnopqrst@aws-0-eu-central-1.pooler.supabase.com:5432/postgres?sslmode=require&application_name="
            + String(repeating: "a", count: 4000)
        try Self.write("[database]\nurl = \(url)\n", to: path)
        let result = try StewardProcess.run(["config", "check", "--config", path])
        #expect(result.exitCode == 0, "\(result.output)")
    }
}
