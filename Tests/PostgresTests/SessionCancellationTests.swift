import Foundation
import StewardLog
import Postgres
import Testing
import TestSupport

@Suite("a database session's calls are cancelled with their task", .needsCluster)
struct SessionCancellationTests {
    func observerSession(_ db: TestDatabase) throws -> DatabaseSession {
        DatabaseSession(try ConnectionString(db.url), label: "observer", logger: .silent)
    }

    @Test("a hanging query is cancelled on the server when its task is cancelled; the session goes on")
    func hangingQuery() async throws {
        try await withTestDatabase { db in
            let session = DatabaseSession(try ConnectionString(db.url), label: "test", logger: .silent)
            let pid = try await session.run { try $0.backendPID }
            let task = Task { try await session.run { c in try c.query("select pg_sleep(900)").count } }
            // Waits until the server runs it, then cancels the task.
            let observer = try observerSession(db)
            var active = false
            for _ in 0..<6000 where !active {
                active = try await observer.run { c in
                    try c.query("select count(*) from pg_stat_activity where pid = $1 and query like 'select pg_sleep%' and state = 'active'", [pid])
                        .rows[0].decode(Int.self, at: 0) == 1
                }
                if !active { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(active)
            task.cancel()
            // Cancelled on the server (57014), not ended by the sleep running out.
            let error = await #expect(throws: PostgresError.self) { try await task.value }
            #expect(error?.sqlState == "57014", "\(String(describing: error))")
            await observer.reset()
            // The session is still usable, on the same connection.
            #expect(try await session.run { try $0.query("select 1").rows[0].decode(Int.self, at: 0) } == 1)
            #expect(try await session.run { $0.backendPID } == pid)
            await session.reset()
        }
    }

    @Test("a task cancelled while another call holds the session does not cancel that other call")
    func cancelReachesOnlyItsOwnCall() async throws {
        try await withTestDatabase { db in
            let session = DatabaseSession(try ConnectionString(db.url), label: "test", logger: .silent)
            _ = try await session.run { try $0.query("select 1").count }
            let first = Task { try await session.run { c in try c.query("select pg_sleep(1.5), 'done'").rows[0].decode(String.self, at: 1) } }
            try await Task.sleep(for: .milliseconds(200))
            let second = Task { try await session.run { c in try c.query("select 2").rows[0].decode(Int.self, at: 0) } }
            try await Task.sleep(for: .milliseconds(200))
            // Whether the second call is still queued or already running, its cancellation never reaches the first.
            second.cancel()
            #expect(try await first.value == "done")
            // The queued call still ran (cleanup after a cancellation must reach the database).
            if let value = try? await second.value { #expect(value == 2) }
            await session.reset()
        }
    }
}
