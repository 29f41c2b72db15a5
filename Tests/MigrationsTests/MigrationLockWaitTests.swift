import Foundation
import Logging
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
            let started = Date()
            let waiter = Task { try await session.run { c in try MigrationLock(connection: c, logger: .silent).acquire(timeoutSeconds: 60) } }
            try await Task.sleep(for: .milliseconds(700))
            waiter.cancel()
            await #expect(throws: (any Error).self) { try await waiter.value }
            #expect(Date().timeIntervalSince(started) < 30, "the wait went on after its task was cancelled")
            #expect(try await session.run { try $0.query("select current_setting('lock_timeout')").rows[0].decode(String.self, at: 0) } == "7s")
            // Freed, the lock is taken at once.
            try holder.query("select pg_advisory_unlock($1)", [MigrationLock.key])
            let taken = Date()
            try await session.run { c in try MigrationLock(connection: c, logger: .silent).acquire(timeoutSeconds: 5) }
            #expect(Date().timeIntervalSince(taken) < 3)
            await session.reset()
        }
    }
}
