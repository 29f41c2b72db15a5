import Foundation
import Postgres
import Testing
import TestSupport

@Suite("prune-history: finished runs past the retention go, the rest stay", .needsCluster)
struct PruneHistoryTests {
    /// `steward job run prune-history` against `db` with `extra` flags and `config` as the job's section; the summary.
    static func prune(_ db: TestDatabase, _ extra: [String] = [], config: String = "") throws -> (StewardProcess.Result, [String: Int]) {
        let path = NSTemporaryDirectory() + "steward-\(UUID().uuidString).ini"
        try "[job.prune-history]\n\(config)\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try StewardProcess.run(["job", "run", "prune-history", "--config", path, "--database-url", db.url, "--json"] + extra)
        let json = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
        return (result, (json["summary"] as? [String: Any] ?? [:]).compactMapValues { $0 as? Int })
    }

    /// The hosts of the rows of `steward.job_runs` this test wrote (each row's host names what it is), sorted.
    static func left(_ db: TestDatabase) throws -> [String] {
        try db.connect().query("select host from steward.job_runs where host like 'row-%' order by host").rows.map { try $0.decode(String.self, at: 0) }
    }

    @Test("a dry run counts and deletes nothing; a run deletes finished rows older than the retention, never a running one")
    func prunesOnlyOldFinishedRuns() throws {
        try withTestDatabase { db in
            // The first run creates Steward's schema (and writes its own row, which is new and stays).
            let (first, _) = try Self.prune(db, ["--dry-run"])
            #expect(first.exitCode == 0, "\(first.output)")
            try db.connect().execute("""
                insert into steward.job_runs (job, scheduled_for, started_at, finished_at, status, trigger, host, pid) values
                  ('username-check', null, now() - interval '200 days', now() - interval '200 days', 'succeeded', 'manual', 'row-old-succeeded', 1),
                  ('username-check', null, now() - interval '40 days', now() - interval '40 days', 'failed', 'manual', 'row-old-failed', 1),
                  ('username-check', now() - interval '40 days', null, null, 'missed', 'schedule', 'row-old-missed', 1),
                  ('username-check', null, now() - interval '200 days', null, 'running', 'manual', 'row-old-running', 1),
                  ('username-check', null, now() - interval '29 days', now() - interval '29 days', 'succeeded', 'manual', 'row-recent', 1)
                """)
            let all = ["row-old-failed", "row-old-missed", "row-old-running", "row-old-succeeded", "row-recent"]

            let (dry, wouldDelete) = try Self.prune(db, ["--dry-run"], config: "retention = 30d")
            #expect(dry.exitCode == 0, "\(dry.output)")
            #expect(wouldDelete["would_delete"] == 3, "\(dry.stdout)")
            #expect(wouldDelete["retention_days"] == 30)
            #expect(try Self.left(db) == all)

            let (run, summary) = try Self.prune(db, config: "retention = 30d")
            #expect(run.exitCode == 0, "\(run.output)")
            #expect(summary["deleted"] == 3, "\(run.stdout)")
            #expect(try Self.left(db) == ["row-old-running", "row-recent"])
        }
    }

    @Test("a retention under a day is refused, naming the key, and nothing is deleted")
    func refusesShortRetention() throws {
        try withTestDatabase { db in
            let (result, _) = try Self.prune(db, config: "retention = 1h")
            #expect(result.exitCode != 0)
            #expect(result.output.contains("retention"), "\(result.output)")
            #expect(result.output.contains("keep at least 1d of history"), "\(result.output)")
        }
    }
}
