@testable import Config
import CLI

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
        let config = try StewardConfig.load(path: nil, environment: ["STEWARD_DATABASE_URL": "postgresql://env", "STEWARD_LOG_LEVEL": "warning"])
        #expect(config.databaseURL == "postgresql://env")
        #expect(config.logLevel == "warning")
        #expect(config.migrationsDirectory == "sql/migrations")
    }

    @Test("the example config in config/ is valid and covers every known key")
    func exampleConfig() throws {
        let root = #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
        let path = "/" + root + "/config/steward.ini"
        let config = try StewardConfig.load(path: path, environment: [:])
        #expect(config.lockTimeout == "200ms")
        #expect(config.lockRetryBudgetSeconds == 120)
        let file = try INIFile(path: path)
        let keys = Set(file.entries.map { "\($0.section).\($0.key)" })
        for key in ["database.url", "database.password_file", "database.connect_timeout", "migrations.dir", "migrations.lock_wait",
                    "migrations.lock_timeout", "migrations.lock_retry_budget", "migrations.statement_timeout", "log.level", "log.format", "control.socket", "storage.url", "storage.service_key_file",
                    "metrics.textfile", "metrics.interval", "daemon.leader_poll", "daemon.shutdown_timeout", "daemon.host", "daemon.release_memory_after",
                    "job.prune-history.schedule", "job.prune-history.time_zone", "job.prune-history.enabled", "job.prune-history.timeout",
                    "job.prune-history.retries", "job.prune-history.retry_backoff", "job.prune-history.missed",
                    "job.prune-history.retention", "migrations.include", "job.username-check.schedule", "job.username-check.min_length",
                    "job.username-check.max_length", "job.username-check.pattern", "job.username-check.reserved_file",
                    "job.username-check.max_mixed_script", "job.username-check.rules", "job.username-check.page_size",
                    "job.orphan-avatars.schedule", "job.orphan-avatars.buckets", "job.orphan-avatars.grace", "job.orphan-avatars.batch_size",
                    "job.orphan-avatars.max_fraction", "job.orphan-avatars.max_per_run", "job.orphan-avatars.keep_prefixes",
                    "job.orphan-avatars.references", "apple.team_id", "apple.key_id", "apple.services_id", "apple.private_key_file",
                    "apple.secret_file", "apple.project_ref", "apple.access_token_file", "apple.management_url", "apple.remind_days",
                    "apple.auto_rotate", "apple.rotate_days_before", "apple.webhook_url", "apple.native_bundle_ids", "job.apple-secret.schedule"] {
            #expect(keys.contains(key), "config/steward.ini lacks \(key)")
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
