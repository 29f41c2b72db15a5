import Foundation
import Testing
import TestSupport
import OutputText

@Suite("the steward binary: help, exit codes, config, secrets")
struct CommandLineTests {
    @Test("steward and steward help teach; unknown commands and options exit 64")
    func helpAndUsage() throws {
        let overview = try StewardProcess.run([])
        #expect(overview.exitCode == 0)
        #expect(overview.stdout.contains("migrate"))
        #expect(overview.stdout.contains("Exit codes"))
        let help = try StewardProcess.run(["help", "migrate"])
        #expect(help.stdout.contains("--dry-run"))
        #expect(help.stdout.contains("--adopt"))
        #expect(try StewardProcess.run(["migrate", "--help"]).stdout == help.stdout)
        #expect(try StewardProcess.run(["frobnicate"]).exitCode == 64)
        let bad = try StewardProcess.run(["status", "--no-such-flag"])
        #expect(bad.exitCode == 64)
        #expect(bad.stderr.contains("--no-such-flag"))
        #expect(try StewardProcess.run(["migrate", "--database-url"]).exitCode == 64)
    }

    @Test("an unreachable database exits 69 and never prints the password")
    func unreachable() throws {
        let result = try StewardProcess.run(["status", "--database-url", "postgresql://postgres:s3cr3t-pw@127.0.0.1:1/postgres?connect_timeout=2"])
        #expect(result.exitCode == 69)
        #expect(result.stderr.contains("cannot connect"))
        #expect(!result.output.contains("s3cr3t-pw"))
    }

    @Test("the transaction pooler is refused with advice (exit 78)")
    func pooler() throws {
        let result = try StewardProcess.run(["migrate", "--database-url", "postgresql://postgres.ref:pw@127.0.0.1:6543/postgres"])
        #expect(result.exitCode == 78)
        #expect(result.stderr.contains("session pooler"))
    }

    @Test("a bad config file exits 78 naming file, line and key", arguments: [
        ("[database]\nurl = x\nulr = y\n", ":3: [database] ulr: unknown key"),
        ("[database]\nurl = x\n[migrations]\nlock_wait = soon\n", ":4: [migrations] lock_wait: \"soon\" is not seconds"),
        ("[databse]\nurl = x\n", ":1: [databse]: unknown section"),
        // The first mistake in the file is the one named.
        ("[bogus]\n[database]\nulr = x\n", ":1: [bogus]: unknown section"),
        ("[database]\nthis line is not ini\n", ":2: not a [section] header"),
        ("[database]\nurl = x\n[job.prune-history]\nschedule = 61 * * * *\n", ":4: [job.prune-history] schedule:"),
        ("[database]\nurl = x\n[job.orphan-avatars]\ngrace = 10m\n", ":4: [job.orphan-avatars] grace: the grace period must be at least 1h"),
        ("[database]\nurl = x\n[job.nosuchjob]\nschedule = @daily\n", ":3: [job.nosuchjob]: unknown job"),
        ("[database]\nurl = x\n[job.prune-history]\ntime_zone = Mars/Olympus\n", ":4: [job.prune-history] time_zone:"),
        ("[database]\nurl = x\n[migrations]\ndir =\n", ":4: [migrations] dir: \"\" is not a folder"),
        // A header with nothing under it is read too: misspelt, unknown or incomplete, it is refused.
        ("[database]\nurl = x\n[databse]\n", ":3: [databse]: unknown section"),
        ("[database]\nurl = x\n[job.nosuchjob]\n", ":3: [job.nosuchjob]: unknown job"),
        ("[database]\nurl = x\n[target.staging]\n[log]\nlevel = info\n", ":3: [target.staging] url: every target needs a url"),
        ("[database]\nurl = x\n[job.nosuchjob]\nschedule = @daily\n[log]\nlevel = info\n[job.nosuchjob]\n", ":3: [job.nosuchjob]: unknown job"),
    ])
    func badConfig(text: String, expected: String) throws {
        let path = NSTemporaryDirectory() + "steward-\(UUID().uuidString).ini"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        // `config check` reads every section, jobs included, without touching the database.
        let result = try StewardProcess.run(["config", "check", "--config", path])
        #expect(result.exitCode == 78)
        #expect(result.stderr.contains(path + expected), "\(result.stderr)")
        // Every command reads the whole file once and refuses the same mistake before doing anything (a CI step's
        // migrate does not pass a file the daemon would refuse); no database is needed to be refused.
        for command in [["migrate", "--dry-run"], ["status"], ["verify"], ["lint"]] {
            let other = try StewardProcess.run(command + ["--config", path, "--database-url", "postgresql://127.0.0.1:1/none"])
            #expect(other.exitCode == 78 && other.stderr.contains(path + expected), "\(command): \(other.stderr)")
        }
        FaultLedger.record("config file mistakes", runs: 1, faults: 1, objectsChecked: 0,
                           losses: result.exitCode == 78 && result.stderr.contains(path + expected) ? 0 : 1)
    }

    @Test("config check notes a migrations folder that is not there (exit 0: the daemon runs without it) and refuses a bad port or sslmode")
    func configCheckFolders() throws {
        let path = NSTemporaryDirectory() + "steward-\(UUID().uuidString).ini"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "[database]\nurl = postgresql://127.0.0.1:5432/x\n[migrations]\ndir = /nonexistent/migrations\n[target.a]\nurl = postgresql://h/a\nmigrations_dir = /nonexistent/a\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let noted = try StewardProcess.run(["config", "check", "--config", path])
        #expect(noted.exitCode == 0, "\(noted.output)")
        #expect(noted.stdout.contains("[migrations] dir: /nonexistent/migrations is not a folder here"), "\(noted.stdout)")
        #expect(noted.stdout.contains("[target.a] migrations_dir: /nonexistent/a is not a folder here"), "\(noted.stdout)")
        for (url, expected) in [("postgresql://127.0.0.1:99999/x", "a port is a number"), ("postgresql://127.0.0.1/x?sslmode=requre", "sslmode \"requre\"")] {
            try "[database]\nurl = \(url)\n".write(toFile: path, atomically: true, encoding: .utf8)
            let refused = try StewardProcess.run(["config", "check", "--config", path])
            #expect(refused.exitCode == 78 && refused.stderr.contains(path + ":2: [database] url: invalid database URL: " + expected), "\(refused.stderr)")
        }
    }

    @Test("a flag beats its environment variable: a bad STEWARD_LOG_LEVEL is refused alone, not beside --log-level")
    func flagBeatsEnvironment() throws {
        // Nothing listens on port 1: a command that got past its configuration exits 69.
        let status = ["status", "--database-url", "postgresql://127.0.0.1:1/none?connect_timeout=2"]
        let refused = try StewardProcess.run(status, environment: ["STEWARD_LOG_LEVEL": "chatty"])
        #expect(refused.exitCode == 78 && refused.stderr.contains("STEWARD_LOG_LEVEL"), "\(refused.stderr)")
        let overridden = try StewardProcess.run(status + ["--log-level", "debug"], environment: ["STEWARD_LOG_LEVEL": "chatty"])
        #expect(overridden.exitCode == 69, "\(overridden.stderr)")
        let flagRefused = try StewardProcess.run(status + ["--log-level", "loud"], environment: ["STEWARD_LOG_LEVEL": "debug"])
        #expect(flagRefused.exitCode == 64 && flagRefused.stderr.contains("--log-level"), "\(flagRefused.stderr)")
    }

    @Test("config check refuses a shadow server URL libpq cannot read, naming its line and never its password")
    func shadowURLChecked() throws {
        let path = NSTemporaryDirectory() + "steward-\(UUID().uuidString).ini"
        try "[verify]\nshadow_url = postgresql://u:SHADOWSECRET@[::1/x\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try StewardProcess.run(["config", "check", "--config", path])
        #expect(result.exitCode == 78 && result.stderr.contains(path + ":2: [verify] shadow_url: invalid database URL"), "\(result.stderr)")
        #expect(!result.output.contains("SHADOWSECRET"))
        let flag = try StewardProcess.run(["verify", "--database-url", "postgresql://127.0.0.1:1/x", "--shadow-url", "postgresql://u:SHADOWSECRET@[::1/x"])
        #expect(flag.exitCode == 64 && flag.stderr.contains("--shadow-url: invalid database URL"), "\(flag.stderr)")
        #expect(!flag.output.contains("SHADOWSECRET"))
    }

    @Test("a password file readable by others is refused; a private one works and never shows", .needsCluster)
    func passwordFile() throws {
        try withTestDatabase { db in
            let secret = NSTemporaryDirectory() + "steward-pw-\(UUID().uuidString)"
            try "steward-local\n".write(toFile: secret, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: secret) }
            let config = NSTemporaryDirectory() + "steward-\(UUID().uuidString).ini"
            try """
                ; test config
                [database]
                url = \(db.url.replacing(":steward-local@", with: "@"))
                password_file = \(secret)
                [migrations]
                dir = \(TestEnvironment.migrationsDirectory)
                """.write(toFile: config, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: config) }
            chmod(secret, 0o644)
            let open = try StewardProcess.run(["status", "--config", config])
            #expect(open.exitCode == 78)
            #expect(open.stderr.contains("chmod 600"))
            chmod(secret, 0o600)
            let ok = try StewardProcess.run(["migrate", "--config", config])
            #expect(ok.exitCode == 0, "\(ok.output)")
            #expect(!ok.output.contains("steward-local"))
        }
    }

    @Test("STEWARD_DATABASE_URL is the default; --json prints one parseable object", .needsCluster)
    func environmentAndJSON() throws {
        try withTestDatabase { db in
            let env = ["STEWARD_DATABASE_URL": db.url, "STEWARD_MIGRATIONS_DIR": TestEnvironment.migrationsDirectory]
            let pending = try StewardProcess.run(["status", "--json"], environment: env)
            #expect(pending.exitCode == 0)
            let object = try JSONSerialization.jsonObject(with: Data(pending.stdout.utf8)) as? [String: Any]
            #expect(object?["pending"] as? Int == 5)
            #expect(!pending.output.contains("steward-local"))
            let migrated = try StewardProcess.run(["migrate", "--json"], environment: env)
            let applied = try JSONSerialization.jsonObject(with: Data(migrated.stdout.utf8)) as? [String: Any]
            #expect((applied?["applied"] as? [Any])?.count == 5)
            let verify = try StewardProcess.run(["verify", "--json"], environment: env)
            #expect(verify.exitCode == 0)
            let report = try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any]
            #expect(report?["ok"] as? Bool == true)
            #expect((report?["advisories"] as? [String])?.count == 4)
            #expect((report?["advisories"] as? [String])?.contains { $0.hasPrefix("public.handle_new_user(): SECURITY DEFINER") } == true)
            #expect((report?["stricter"] as? [String]) == [])
        }
    }

    @Test("exit 2 for drift: status after a tampered file, verify after a dropped policy", .needsCluster)
    func driftExitCodes() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            let args = ["--database-url", db.url, "--migrations", folder.path]
            #expect(try StewardProcess.run(["migrate"] + args).exitCode == 0)
            try db.connect().execute(#"drop policy "Anyone can upload an avatar." on storage.objects"#)
            let verify = try StewardProcess.run(["verify"] + args)
            #expect(verify.exitCode == 2)
            #expect(verify.stdout.contains(#"0005_avatars_policies.sql: table storage.objects policies: "Anyone can upload an avatar." is missing"#), "\(verify.output)")
            try folder.write("0001_profiles_table.sql", try folder.read("0001_profiles_table.sql").replacing("username text unique", with: "username citext unique"))
            let status = try StewardProcess.run(["status"] + args)
            #expect(status.exitCode == 2)
            #expect(status.stdout.contains("changed"))
            let migrate = try StewardProcess.run(["migrate"] + args)
            #expect(migrate.exitCode == 2)
            #expect(migrate.stderr.contains("0001_profiles_table.sql was changed after it was applied"))
        }
    }

    @Test("a pending file with its own BEGIN/COMMIT: status and verify show the state and name the file; migrate still refuses it", .needsCluster)
    func fileWithItsOwnTransaction() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            let args = ["--database-url", db.url, "--migrations", folder.path]
            #expect(try StewardProcess.run(["migrate"] + args).exitCode == 0)
            try folder.write("0006_wrapped.sql", "begin;\ncreate table public.notes (id int);\ncommit;\n")
            let status = try StewardProcess.run(["status"] + args)
            #expect(status.exitCode == 0, "\(status.output)")
            #expect(status.stdout.contains("5 applied, 1 pending") && status.stdout.contains("0006_wrapped.sql"), "\(status.stdout)")
            #expect(status.stdout.contains("controls the transaction"), "\(status.stdout)")
            let json = try StewardProcess.run(["status", "--json"] + args)
            #expect(json.exitCode == 0 && json.stdout.contains("\"invalid_files\":["), "\(json.stdout)")
            let verify = try StewardProcess.run(["verify"] + args)
            #expect(verify.exitCode == 0, "\(verify.output)")
            #expect(verify.stdout.contains("not compared") && verify.stdout.contains("0006_wrapped.sql"), "\(verify.stdout)")
            let migrate = try StewardProcess.run(["migrate"] + args)
            #expect(migrate.exitCode != 0 && migrate.stderr.contains("controls the transaction"), "\(migrate.output)")
        }
    }

    @Test("verify's advice about the quickstart appears only where its objects are: another app gets none of it", .needsCluster)
    func adviceOnAnotherApp() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder(files: ["0001_app.sql": """
                create table public.profiles (id uuid primary key references auth.users, display text);
                alter table public.profiles enable row level security;
                create policy "own uploads" on storage.objects for insert to public
                  with check ((storage.foldername(name))[1] = auth.uid()::text);
                create function public.do_thing() returns int language sql security definer set search_path = '' as 'select 1';

                """])
            defer { folder.delete() }
            let args = ["--database-url", db.url, "--migrations", folder.path]
            #expect(try StewardProcess.run(["migrate"] + args).exitCode == 0)
            let verify = try StewardProcess.run(["verify", "--json"] + args)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any], "\(verify.output)")
            let advice = (json["advisories"] as? [String] ?? []) + (json["enforcement"] as? [String] ?? [])
            #expect(!advice.contains { $0.contains("anonymous") || $0.contains("avatars") || $0.contains("username") }, "\(advice)")
            let function = advice.first { $0.hasPrefix("public.do_thing()") }
            #expect(function?.contains("revoke execute on function public.do_thing() from public, anon, authenticated") == true, "\(advice)")
            #expect(function?.contains("api-hardening") == false, "\(advice)")
        }
    }

    @Test("an enum and a view (once \"not compared\") are compared: clean after migrate, a new label is drift, and adopt records them", .needsCluster)
    func enumAndViewCompared() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder(files: [
                "0001_mood.sql": "create type public.mood as enum ('a', 'b');\ncreate view public.moods as select 'a'::public.mood as m;\n",
            ])
            defer { folder.delete() }
            let args = ["--database-url", db.url, "--migrations", folder.path]
            #expect(try StewardProcess.run(["migrate"] + args).exitCode == 0)
            let verify = try StewardProcess.run(["verify"] + args)
            #expect(verify.exitCode == 0 && verify.stdout.contains("ok: the database matches the 1 applied migration(s)"), "\(verify.output)")
            try db.connect().execute("alter type public.mood add value 'c'")
            let drift = try StewardProcess.run(["verify"] + args)
            #expect(drift.exitCode == 2, "\(drift.output)")
            #expect(drift.stdout.contains("0001_mood.sql: type public.mood: definition differs: live enum ('a', 'b', 'c'), files enum ('a', 'b')"), "\(drift.stdout)")
            // By hand into another database: adopt applies the file to a shadow database and finds the same objects.
            try withTestDatabase { other in
                try other.connect().execute("create type public.mood as enum ('a', 'b'); create view public.moods as select 'a'::public.mood as m;")
                let adopt = try StewardProcess.run(["migrate", "--adopt", "--database-url", other.url, "--migrations", folder.path])
                #expect(adopt.exitCode == 0 && adopt.stdout.contains("adopted  0001_mood.sql"), "\(adopt.output)")
                let clean = try StewardProcess.run(["verify", "--database-url", other.url, "--migrations", folder.path])
                #expect(clean.exitCode == 0, "\(clean.output)")
            }
        }
    }

    @Test("logs: syslog priority prefixes under journald, one JSON object a line with --log-format json", .needsCluster)
    func logFormats() throws {
        try withTestDatabase { db in
            let args = ["migrate", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory]
            let journald = try StewardProcess.run(args, environment: ["JOURNAL_STREAM": "8:12345"])
            let lines = journald.stderr.split(separator: "\n")
            #expect(!lines.isEmpty)
            #expect(lines.allSatisfy { $0.hasPrefix("<6>") || $0.hasPrefix("<5>") || $0.hasPrefix("<4>") }, "\(journald.stderr)")
        }
        try withTestDatabase { db in
            let args = ["migrate", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory]
            let json = try StewardProcess.run(args + ["--log-format", "json"])
            #expect(json.exitCode == 0, "\(json.output)")
            for line in json.stderr.split(separator: "\n") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(object?["level"] != nil && object?["message"] != nil && object?["logger"] != nil)
            }
            #expect(json.stderr.contains(#""message":"applied""#))
        }
    }
}
