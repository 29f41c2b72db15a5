import Foundation
import StewardLog
import Migrations
import Postgres
import Testing
import TestSupport

@Suite("waiting for the migration lock", .needsCluster)
struct MigrationLockWaitTests {
    @Test("the wait is polled (no statement waits in the server, no snapshot held between tries), cancelled with its task, and leaves the session's settings as they were")
    func polledCancellableWait() async throws {
        try await withTestDatabase { db in
            let holder = try db.connect()
            try holder.query("select pg_advisory_lock($1)", [MigrationLock.key])
            let session = DatabaseSession(try ConnectionString(db.url), label: "test", logger: .silent, settings: [("lock_timeout", "7s")])
            let pid = try await session.run { $0.backendPID }
            let waiter = Task { try await session.run { c in try MigrationLock(connection: c, logger: .silent).acquire(timeoutSeconds: 900) } }
            // While it waits: never a lock request in the server's queue, and no snapshot held (a concurrent index
            // build in the holder's file waits for every older snapshot, so a held one could deadlock with it).
            let observer = try db.connect()
            var samples = 0, queued = 0, snapshots = 0
            // A fixed number of looks, however loaded the machine (each one a fresh view of the waiting session).
            for _ in 0..<30 {
                samples += 1
                queued += try observer.query("select count(*) from pg_locks where locktype = 'advisory' and not granted").scalar(Int.self)
                snapshots += try observer.query("select count(*) from pg_stat_activity where pid = $1 and backend_xmin is not null and state <> 'active'", [pid]).scalar(Int.self)
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(samples == 30)
            #expect(queued == 0, "a lock request waited in the server's queue")
            #expect(snapshots == 0, "the waiting session held a snapshot between tries")
            waiter.cancel()
            let error = await #expect(throws: PostgresError.self) { try await waiter.value }
            #expect(error?.sqlState == "57014", "\(String(describing: error))")
            #expect(try await session.run { try $0.query("select current_setting('lock_timeout')").rows[0].decode(String.self, at: 0) } == "7s")
            // Freed, the lock is taken, and a cancel asked for earlier does not stop the next wait.
            try holder.query("select pg_advisory_unlock($1)", [MigrationLock.key])
            try await session.run { c in try MigrationLock(connection: c, logger: .silent).acquire(timeoutSeconds: 60) }
            await session.reset()
        }
    }
}
