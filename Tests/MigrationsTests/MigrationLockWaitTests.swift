import Foundation
import StewardLog
import Migrations
import Postgres
import Testing
import TestSupport

@Suite("waiting for the migration lock")
struct MigrationLockWaitTests {
    @Test("the wait is cancelled with its task (on the server), and the session's lock_timeout is left as it was")
    func cancellableWait() async throws {
        try await withTestDatabase { db in
            let holder = try db.connect()
            try holder.query("select pg_advisory_lock($1)", [MigrationLock.key])
            let session = DatabaseSession(try ConnectionString(db.url), label: "test", logger: .silent, settings: [("lock_timeout", "7s")])
            _ = try await session.run { try $0.query("select 1").count }
            let waiter = Task { try await session.run { c in try MigrationLock(connection: c, logger: .silent).acquire(timeoutSeconds: 900) } }
            // Cancelled once the server shows it waiting.
            let observer = try db.connect()
            var waiting = false
            for _ in 0..<6000 where !waiting {
                waiting = try observer.query("select count(*) from pg_locks where locktype = 'advisory' and not granted").rows[0].decode(Int.self, at: 0) == 1
                if !waiting { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(waiting)
            waiter.cancel()
            // Cancelled on the server (57014), not given up at the timeout.
            let error = await #expect(throws: PostgresError.self) { try await waiter.value }
            #expect(error?.sqlState == "57014", "\(String(describing: error))")
            #expect(try await session.run { try $0.query("select current_setting('lock_timeout')").rows[0].decode(String.self, at: 0) } == "7s")
            // Freed, the lock is taken.
            try holder.query("select pg_advisory_unlock($1)", [MigrationLock.key])
            try await session.run { c in try MigrationLock(connection: c, logger: .silent).acquire(timeoutSeconds: 60) }
            await session.reset()
        }
    }
}
