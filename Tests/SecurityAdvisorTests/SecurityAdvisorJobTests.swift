import Foundation
import Postgres
import Testing
import TestSupport

/// `steward advise` and the job `security-advisor` through the real binary, on the older tutorial's `User` table.
@Suite("security advisor: advise's exit codes, the job's findings, alerts and resolution", .needsCluster)
struct SecurityAdvisorJobTests {
    func json(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    func summary(_ result: StewardProcess.Result) throws -> [String: Int] {
        let object = try json(result.stdout)
        return (object["summary"] as? [String: Any] ?? [:]).compactMapValues { $0 as? Int }
    }

    @Test("advise exits 2 on the User table; the job raises one alert a finding, once; the opt-in migration resolves it")
    func advisorJob() throws {
        try withTestDatabase(.legacy) { db in
            let migrate = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory])
            #expect(migrate.exitCode == 0, "\(migrate.output)")
            let admin = try db.connectAsAdmin()
            // Made as the app's owner makes it in the Table Editor (as postgres), so the default privileges apply.
            let owner = try db.connect()
            try owner.execute(try String(contentsOfFile: TestEnvironment.root + "/sql/demo/legacy_user_table.sql", encoding: .utf8))
            try owner.execute("""
                insert into public."User" ("userID", name, email) values
                  (gen_random_uuid()::text, 'Alice', 'alice@example.com'), (gen_random_uuid()::text, 'Bob', 'bob@example.com');
                """)

            let advise = try StewardProcess.run(["advise", "--database-url", db.url, "--json"])
            #expect(advise.exitCode == 2, "\(advise.output)")
            let findings = try json(advise.stdout)["findings"] as? [[String: Any]] ?? []
            let onUser = findings.filter { ($0["object"] as? String) == "public.User" }.compactMap { $0["name"] as? String }
            #expect(onUser.contains("rls_disabled_in_public"), "\(findings)")
            #expect(onUser.contains("anon_readable_emails"), "\(findings)")

            let job = ["job", "run", "security-advisor", "--database-url", db.url, "--json"]
            let first = try StewardProcess.run(job)
            #expect(first.exitCode == 0, "\(first.output)")
            let s1 = try summary(first)
            let open = try admin.query("select count(*) from steward.advisor_findings where resolved_at is null").scalar(Int.self)
            #expect(open > 0 && s1["findings"] == open, "\(s1)")
            // advise recorded them first; the job still raises each open finding once.
            #expect(s1["new"] == 0 && s1["alerts_raised"] == open, "\(s1)")
            #expect(try admin.query("select count(*) from steward.alerts where kind = 'security-advisor'").scalar(Int.self) == open)
            #expect(try admin.query("""
                select count(*) from steward.alerts where kind = 'security-advisor' and level = 'critical' and message like '%rls_disabled_in_public on public.User%'
                """).scalar(Int.self) == 1)

            let second = try summary(try StewardProcess.run(job))
            #expect(second["alerts_raised"] == 0 && second["new"] == 0, "\(second)")
            #expect(try admin.query("select count(*) from steward.alerts where kind = 'security-advisor'").scalar(Int.self) == open)

            let fix = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory,
                                              "--include", TestEnvironment.root + "/sql/optional/legacy-user-table"])
            #expect(fix.exitCode == 0, "\(fix.output)")
            let third = try summary(try StewardProcess.run(job))
            #expect((third["resolved"] ?? 0) >= 2, "\(third)")
            #expect(try admin.query("""
                select count(*) from steward.advisor_findings where object = 'public.User' and resolved_at is null
                """).scalar(Int.self) == 0)

            // No error-level finding left: advise exits 0, unless asked to fail on a new finding.
            let after = try StewardProcess.run(["advise", "--database-url", db.url, "--json"])
            let errors = (try json(after.stdout)["findings"] as? [[String: Any]] ?? [])
                .filter { ($0["level"] as? String) == "ERROR" && ($0["ignored"] as? Bool) == false }
            #expect(after.exitCode == (errors.isEmpty ? 0 : 2), "\(after.output)")
            try owner.execute("create table public.notes (id int primary key); alter table public.notes enable row level security;")
            let failOnNew = try StewardProcess.run(["advise", "--database-url", db.url, "--fail-on-findings"])
            #expect(failOnNew.exitCode == 2, "\(failOnNew.output)")
            #expect(failOnNew.stdout.contains("rls_enabled_no_policy public.notes (new)"), "\(failOnNew.stdout)")
            let again = try StewardProcess.run(["advise", "--database-url", db.url, "--fail-on-findings"])
            #expect(again.exitCode == (errors.isEmpty ? 0 : 2), "\(again.output)")
        }
    }

    @Test("advise's text escapes names from the database: escape sequences cannot reach the terminal, a newline cannot forge a line")
    func adviseEscapesNames() throws {
        try withTestDatabase { db in
            // Sets the window title, clears the screen, then breaks the line to forge a finding of its own.
            let table = "\u{1b}]0;pwned\u{07}\u{1b}[2Jt\nerror forged_check public.safe"
            let policy = "own row\nerror forged_policy\u{7f}\u{9b}"
            func quoted(_ name: String) -> String { "\"" + name.replacing("\"", with: "\"\"") + "\"" }
            let owner = try db.connect()
            // Row level security off, a policy anyway, and auth.uid() called per row: three findings naming them.
            try owner.execute("""
                create table public.\(quoted(table)) (id uuid primary key);
                create policy \(quoted(policy)) on public.\(quoted(table)) for select using (auth.uid() = id);
                """)

            let json = try StewardProcess.run(["advise", "--database-url", db.url, "--json"])
            #expect(json.exitCode == 2, "\(json.output)")
            let object = try self.json(json.stdout)
            let findings = object["findings"] as? [[String: Any]] ?? []
            let objects = findings.compactMap { $0["object"] as? String }
            // --json keeps the names whole (JSON escapes them) and parses.
            #expect(objects.contains("public." + table), "\(objects)")
            #expect(objects.contains("public." + table + "." + policy), "\(objects)")
            #expect(findings.contains { ($0["detail"] as? String)?.contains(policy) == true }, "\(findings)")

            let text = try StewardProcess.run(["advise", "--database-url", db.url])
            #expect(text.exitCode == 2, "\(text.output)")
            let raw = text.stdout.utf8.filter { ($0 < 0x20 && $0 != 0x0a) || $0 == 0x7f }
            #expect(raw.isEmpty, "raw control bytes \(raw) in: \(text.stdout.debugDescription)")
            #expect(!text.stdout.unicodeScalars.contains { (0x80...0x9f).contains($0.value) }, "\(text.stdout.debugDescription)")
            // The escaped names are there, as the log writer spells them.
            let shownTable = "\\u{001B}]0;pwned\\u{0007}\\u{001B}[2Jt\\nerror forged_check public.safe"
            let shownPolicy = "own row\\nerror forged_policy\\u{007F}\\u{009B}"
            #expect(text.stdout.contains("rls_disabled_in_public public.\(shownTable)\n"), "\(text.stdout)")
            #expect(text.stdout.contains("public.\(shownTable).\(shownPolicy)"), "\(text.stdout)")
            #expect(text.stdout.contains("policies: \(shownPolicy)\n"), "\(text.stdout)")
            // No forged line: exactly the lines the findings make (a header; per finding a blank line, the finding,
            // detail, why, fix and maybe the opt-in migration; the silenced count; each failed check).
            let shown = findings.filter { ($0["ignored"] as? Bool) == false }
            let ignored = findings.count - shown.count
            let failed = (object["failed_checks"] as? [Any] ?? []).count
            let expected = 1 + shown.reduce(0) { $0 + 5 + ($1["migration"] is String ? 1 : 0) } + (ignored > 0 ? 2 : 0) + 2 * failed
            let lines = text.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            #expect(lines.count == expected, "\(text.stdout)")
            #expect(!lines.contains { $0.hasPrefix("error forged") }, "\(text.stdout)")

            // The job raises an alert per finding, naming the object; steward status lists them, one line each.
            let job = try StewardProcess.run(["job", "run", "security-advisor", "--database-url", db.url])
            #expect(job.exitCode == 0, "\(job.output)")
            let status = try StewardProcess.run(["status", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory])
            #expect(status.exitCode == 0, "\(status.output)")
            let statusRaw = status.stdout.utf8.filter { ($0 < 0x20 && $0 != 0x0a) || $0 == 0x7f }
            #expect(statusRaw.isEmpty, "raw control bytes \(statusRaw) in: \(status.stdout.debugDescription)")
            let alertLines = status.stdout.components(separatedBy: "alerts (last 30 days):\n").last?
                .split(separator: "\n").filter { $0.contains("Security advisor:") } ?? []
            #expect(alertLines.count == shown.count, "\(status.stdout)")
            #expect(alertLines.allSatisfy { $0.contains("public.\(shownTable)") }, "\(status.stdout)")
            #expect(!status.stdout.split(separator: "\n").contains { $0.hasPrefix("error forged") }, "\(status.stdout)")
        }
    }
}
