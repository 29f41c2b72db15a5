import Foundation
import Postgres
import Testing
import TestSupport

/// Every failure path around the database password, password files and the service key that can be provoked,
/// through the real binary (migrate, status, verify, config check, job run), with everything it printed and
/// everything in Steward's tables grepped for every secret in every form (`SecretScan`).
@Suite("secrets: no failure path prints or stores a password, key or file content", .needsCluster)
struct SecretLeakTests {
    static let badPercent = "Sup3r%zzSecretPW"
    static let spaced = "two words Pw-41f"
    static let reserved = "p@ss/w:rd?#-6be"
    static let wrong = "Wr0ng-Pa55-8c1d"
    static let fileSecret = "F1le-Secret-9a2b"
    static let serviceKey = "sb_secret_Lk3y0e7fQz9WmN2pR4tV"

    /// Database URLs and conninfo strings with a password in every position and encoding, good host or not.
    static func connectionStrings(_ hostPort: String, _ db: String) -> [(String, String)] {
        let host = String(hostPort.split(separator: ":")[0]), port = String(hostPort.split(separator: ":").last ?? "5432")
        let enc = SecretScan.forms(of: wrong).first { $0.form == "percent-encoded" }?.text ?? wrong
        return [
            ("URL, bad percent-encoding in the password", "postgresql://postgres:\(badPercent)@\(hostPort)/\(db)"),
            ("URL, space in the password", "postgresql://postgres:\(spaced)@\(hostPort)/\(db)"),
            ("URL, unencoded @ / : ? # in the password", "postgresql://postgres:\(reserved)@\(hostPort)/\(db)"),
            ("URL, bad percent-encoding in ?password=", "postgresql://postgres@\(hostPort)/\(db)?password=\(badPercent)"),
            ("URL, wrong password", "postgresql://postgres:\(wrong)@\(hostPort)/\(db)"),
            ("URL, wrong password percent-encoded", "postgresql://postgres:%57r0ng-Pa55-8c1d@\(hostPort)/\(db)"),
            ("URL, wrong password in ?password=", "postgresql://postgres@\(hostPort)/\(db)?password=\(enc)"),
            ("URL, unreachable host", "postgresql://postgres:\(wrong)@127.0.0.1:1/\(db)?connect_timeout=2"),
            ("URL, unclosed IPv6 bracket", "postgresql://postgres:\(wrong)@[::1:\(port)/\(db)"),
            ("URL, unknown sslmode", "postgresql://postgres:\(wrong)@\(hostPort)/\(db)?sslmode=bogus"),
            ("URL, unknown parameter", "postgresql://postgres:\(wrong)@\(hostPort)/\(db)?frobnicate=\(badPercent)"),
            ("URL, port out of range", "postgresql://postgres:\(wrong)@\(host):99999/\(db)"),
            ("URL, transaction pooler port", "postgresql://postgres:\(wrong)@\(host):6543/\(db)"),
            ("URL, one slash", "postgresql:/postgres:\(badPercent)@\(hostPort)/\(db)"),
            ("URL, upper-case scheme", "POSTGRESQL://postgres:\(badPercent)@\(hostPort)/\(db)"),
            ("URL, two @", "postgresql://postgres:\(wrong)@x@\(hostPort)/\(db)"),
            ("conninfo, space in the password", "host=\(host) port=\(port) dbname=\(db) user=postgres password=\(spaced)"),
            ("conninfo, unterminated quote", "host=\(host) port=\(port) dbname=\(db) user=postgres password='\(badPercent)"),
            ("conninfo, wrong password", "host=\(host) port=\(port) dbname=\(db) user=postgres password=\(wrong)"),
            ("conninfo, quoted wrong password with a space", "host=\(host) port=\(port) dbname=\(db) user=postgres password='\(spaced)'"),
            ("conninfo, unknown keyword", "host=\(host) port=\(port) dbname=\(db) user=postgres password=\(wrong) bogus=\(badPercent)"),
            ("conninfo, missing =", "host=\(host) port \(port) password \(wrong)"),
        ]
    }

    /// Ways the password file can be wrong, each holding `fileSecret` somehow.
    static func passwordFiles(in dir: String) throws -> [(String, String)] {
        func file(_ name: String, _ bytes: [UInt8], mode: Int = 0o600) -> String {
            let path = dir + "/" + name
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: mode]), "could not write the test file")
            return path
        }
        let secret = Array(fileSecret.utf8)
        let symlink = dir + "/link"
        try FileManager.default.createSymbolicLink(atPath: symlink, withDestinationPath: file("target", secret))
        let fifo = dir + "/fifo"
        _ = mkfifo(fifo, 0o600)
        return [
            ("password file with a NUL byte", file("nul", secret + [0] + secret)),
            ("password file with invalid UTF-8", file("utf8", secret + [0xC3, 0x28, 0xFF] + secret)),
            ("password file that is a symlink", symlink),
            ("password file that is a FIFO", fifo),
            ("password file too big", file("big", Array(repeating: secret, count: 5000).flatMap { $0 })),
            ("password file readable by others", file("wide", secret, mode: 0o644)),
            ("password file with the wrong password", file("wrong", secret + [0x0A])),
            ("password file with a control byte", file("ctl", secret + [0x1B] + secret)),
        ]
    }

    @Test("bad URLs, conninfo, wrong passwords, unreachable hosts, bad password files and bad values next to secrets: nothing leaks")
    func failurePaths() throws {
        try withTestDatabase { db in
            let dir = NSTemporaryDirectory() + "steward-secrets-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let migrated = try StewardProcess.run(["migrate", "--database-url", db.url])
            #expect(migrated.exitCode == 0, "\(migrated.output)")

            var scan = SecretScan(secrets: [("bad-percent password", Self.badPercent), ("Self.spaced password", Self.spaced), ("Self.reserved-character password", Self.reserved),
                                            ("Self.wrong password", Self.wrong), ("password file content", Self.fileSecret), ("service key", Self.serviceKey),
                                            ("real database password", "steward-local")])
            var runs = 0, paths = 0, failed = 0
            func run(_ label: String, _ arguments: [String], environment: [String: String] = [:]) throws {
                let result = try StewardProcess.run(arguments, environment: environment, timeout: 30)
                runs += 1
                if result.exitCode != 0 { failed += 1 }
                #expect(!result.crashed, "\(label): signal \(result.signal ?? 0)")
                let found = scan.scan(result, place: "\(label): \(arguments.prefix(2).joined(separator: " "))")
                // Only the labels are shown: printing the output would put the secret in the test log.
                #expect(found.isEmpty, "\(found), exit \(result.exitCode)")
            }
            let config = dir + "/steward.ini"
            func writeConfig(_ text: String) {
                #expect(FileManager.default.createFile(atPath: config, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]), "could not write the test file")
            }
            let commands: [[String]] = [["migrate"], ["status"], ["verify"], ["job", "run", "prune-history"], ["migrate", "--dry-run", "--json"]]

            // Connection strings as flags, as the environment, and in a config file (also next to a bad value).
            for (label, url) in Self.connectionStrings(db.hostAndPort, db.name) {
                paths += 1
                for command in commands { try run(label, command + ["--database-url", url]) }
                try run(label + " (environment)", ["status", "--json"], environment: ["STEWARD_DATABASE_URL": url])
                writeConfig("[database]\nurl = \(url)\n")
                try run(label + " (config file)", ["config", "check", "--config", config])
                try run(label + " (config file)", ["migrate", "--config", config])
                writeConfig("[database]\nurl = \(url)\n[migrations]\nlock_wait = inf\n")
                try run(label + " (next to a bad value)", ["config", "check", "--config", config])
                try run(label + " (next to a bad value)", ["job", "run", "prune-history", "--config", config])
            }

            // Password files, with a URL that has no password of its own.
            for (label, file) in try Self.passwordFiles(in: dir) {
                paths += 1
                writeConfig("[database]\nurl = \(db.url.replacingOccurrences(of: ":steward-local@", with: "@"))\npassword_file = \(file)\n")
                for command in [["config", "check"], ["migrate"], ["status"], ["verify"], ["job", "run", "prune-history"]] {
                    try run(label, command + ["--config", config])
                }
            }

            // The service key next to an unreachable Storage, stored in the job's history when the run fails
            // (an old unreferenced object makes the job call Storage).
            try db.connectAsAdmin().execute("""
                insert into storage.objects (bucket_id, name, metadata, created_at, updated_at)
                  select 'avatars', 'orphan-' || g || '.jpeg', '{"size": 10}', now() - interval '2 days', now() - interval '2 days' from generate_series(1, 3) g;
                """)
            let keyFile = dir + "/service-key"
            #expect(FileManager.default.createFile(atPath: keyFile, contents: Data((Self.serviceKey + "\n").utf8), attributes: [.posixPermissions: 0o600]), "could not write the test file")
            for storage in ["http://127.0.0.1:1", "http://127.0.0.1:1/storage/v1?apikey=\(Self.serviceKey)", "http://example.com"] {
                paths += 1
                try run("storage \(storage.prefix(24))", ["job", "run", "orphan-avatars", "--database-url", db.url, "--storage-url", storage,
                                                          "--service-key-file", keyFile, "--force", "--json"])
            }

            // What Steward stored: every row of every table in the steward schema, as text.
            let connection = try db.connect()
            let tables = try connection.query("select tablename from pg_tables where schemaname = 'steward' order by 1").rows
                .compactMap { try? $0.decode(String.self, at: 0) }
            #expect(tables.contains("job_runs") && tables.contains("schema_migrations"), "\(tables)")
            var storedRows = 0
            for table in tables {
                let rows = try connection.query("select t::text from \(try SQLIdentifier("steward", table)) t").rows
                for row in rows {
                    storedRows += 1
                    scan.scan((try? row.decode(String.self, at: 0)) ?? "", place: "steward.\(table)")
                }
            }
            let statuses = try connection.query("select job || ' ' || status from steward.job_runs").rows.compactMap { try? $0.decode(String.self, at: 0) }
            let failedRuns = statuses.filter { $0.hasSuffix(" failed") }.count
            #expect(failedRuns >= 1, "the storage failure paths should leave failed runs in steward.job_runs: \(statuses)")
            #expect(failed >= runs / 2, "most paths must really fail (\(failed) of \(runs))")
            print("secrets: \(paths) failure paths, \(runs) runs (\(failed) failed), \(storedRows) stored rows, \(scan.textsScanned) texts scanned, \(scan.findings.count) secrets found")
            #expect(scan.findings.isEmpty, "\(scan.findings)")
            FaultLedger.check("secrets: failure paths grepped", runs: runs, faults: failed, objectsChecked: scan.textsScanned,
                              cases: paths, secretsFound: scan.findings.count)
        }
    }
}
