import Foundation
import Postgres
import Storage
import Synchronization
import Testing
import TestSupport

/// What the app clients did, shared between their threads.
private struct Traffic: Sendable {
    var uploaded: [String] = []
    var saves = 0
    var refused = 0
    var errors: [String] = []
}

@Suite("fault and load: cleanup under live traffic", .needsCluster)
struct LiveTrafficTests {
    static let clients = 20
    static let trafficSeconds = 10.0

    @Test("20 app clients upload and save while orphan-avatars runs with no grace: no profile points at a missing object, every deletion is audited")
    func cleanupUnderLiveTraffic() throws {
        try AvatarWorld.with(users: Self.clients) { w in
            let include = TestEnvironment.root + "/sql/optional/avatar-integrity"
            let migrated = try StewardProcess.run(["migrate", "--database-url", w.db.url, "--include", include])
            #expect(migrated.exitCode == 0, "\(migrated.output)")
            try Self.recordHistory(w.db)
            // Slow answers widen the window between the job's re-check and the deletion, where a save could slip in.
            try w.storage.faults(["delay_ms": 40])
            let traffic = Mutex(Traffic())
            let stop = Atomic(false)
            let finished = Atomic(0)
            let secret = w.storage.jwtSecret, storageURL = w.storage.url, db = w.db
            for user in w.users {
                let key = try #require(try StorageEmulator.keys(secret: secret, sub: user)["user"])
                // One app: upload a new avatar under a fresh name (as the app does), then save the profile pointing at it.
                Thread.detachNewThread {
                    defer { finished.add(1, ordering: .sequentiallyConsistent) }
                    do {
                        let storage = try StorageClient(url: storageURL, key: key, logger: .silent)
                        let connection = try db.connect(as: "authenticator")
                        while !stop.load(ordering: .relaxed) {
                            let name = UUID().uuidString + ".jpeg"
                            try storage.upload(bucket: "avatars", path: name, data: [UInt8](repeating: 0xFF, count: 512))
                            traffic.withLock { $0.uploaded.append(name) }
                            // The round trip to the Data API and back: the new object is unreferenced meanwhile.
                            usleep(UInt32.random(in: 0...60_000))
                            do {
                                try db.request(as: user, on: connection) { c in
                                    try c.query("update public.profiles set avatar_url = $1, updated_at = now() where id = (select auth.uid())", [name])
                                }
                                traffic.withLock { $0.saves += 1 }
                            } catch let error as PostgresError where error.sqlState == "23503" {
                                // Deleted between upload and save: the app shows the message and the user tries again.
                                traffic.withLock { $0.refused += 1 }
                            }
                        }
                    } catch {
                        traffic.withLock { $0.errors.append("\(error)") }
                    }
                }
            }
            let zeroGrace = ["STEWARD_TEST_ORPHAN_GRACE_SECONDS": "0"]
            // The test's own record of every avatar names every object: told so, the run leaves it out.
            let config = "max_fraction = 1\nmax_per_run = 1000000\nbatch_size = 50\n"
                + "ignore_columns = steward_test.avatar_history.name: the test's record of past avatars, steward_test.deletions.name: the test's record of deletions\n"
            var runs = 0, deleted = 0, rescued = 0, fenceHeld = 0, failedRuns: [String] = []
            let deadline = Date().addingTimeInterval(Self.trafficSeconds)
            // On a loaded machine the window is stretched (up to six times) until the race has really been run.
            let latest = Date().addingTimeInterval(Self.trafficSeconds * 6)
            func enough() -> Bool { runs >= 3 && deleted >= 100 && traffic.withLock { $0.saves } >= 200 }
            while Date() < deadline || (!enough() && Date() < latest) {
                let (result, summary) = try w.run(["--force"], config: config, environment: zeroGrace)
                runs += 1
                if result.exitCode != 0 { failedRuns.append(result.output) }
                deleted += (summary["deleted"] ?? 0) + (summary["deleted_answer_lost"] ?? 0)
                rescued += summary["kept_referenced_at_recheck"] ?? 0
                fenceHeld = max(fenceHeld, summary["fence_held_ms_max"] ?? 0)
            }
            stop.store(true, ordering: .relaxed)
            #expect(eventually(30) { finished.load(ordering: .sequentiallyConsistent) == Self.clients })
            // One last run with the traffic stopped: what is left is exactly what the profiles point at.
            let (last, lastSummary) = try w.run(["--force"], config: config, environment: zeroGrace)
            #expect(last.exitCode == 0, "\(last.output)")
            deleted += (lastSummary["deleted"] ?? 0) + (lastSummary["deleted_answer_lost"] ?? 0)
            runs += 1

            let seen = traffic.withLock { $0 }
            #expect(seen.errors.isEmpty, "\(seen.errors.prefix(3))")
            #expect(failedRuns.isEmpty, "\(failedRuns.prefix(2))")
            let c = try w.db.connect()
            let dangling = try c.query("""
                select count(*) from public.profiles p where p.avatar_url is not null
                and not exists (select 1 from storage.objects o where o.bucket_id = 'avatars' and o.name = p.avatar_url)
                """).rows[0].decode(Int.self, at: 0)
            #expect(dangling == 0, "profiles pointing at a missing object")
            let deletedWhileReferenced = try c.query("""
                select count(*) from steward_test.deletions d join steward_test.avatar_history h
                  on h.name = d.name and h.since < d.at and (h.until is null or h.until > d.at)
                """).rows[0].decode(Int.self, at: 0)
            #expect(deletedWhileReferenced == 0, "objects deleted while a profile pointed at them")
            let present = try w.storage.objects()
            let referenced = Set(try c.query("select avatar_url from public.profiles where avatar_url is not null").rows.map { try $0.decode(String.self, at: 0) })
            #expect(present == referenced, "after the last run the bucket holds exactly the referenced avatars")
            let gone = Set(seen.uploaded).subtracting(present)
            let audited = try w.audited()
            #expect(audited == gone, "every deleted object is in the audit table, and nothing else is")
            #expect(deleted == gone.count, "the run summaries add up to the deletions")
            #expect(try w.storage.stats()["deleted"] as? Int == gone.count, "Storage deleted what the audit says")
            #expect(try c.query("select count(*) from steward.deleted_objects where deleted_at is null").rows[0].decode(Int.self, at: 0) == 0)
            // The test is only worth something if the race was really run.
            #expect(runs >= 3 && seen.saves >= 200 && gone.count >= 100, "runs \(runs), saves \(seen.saves), deleted \(gone.count)")
            #expect(fenceHeld > 0, "the fence was taken")
            let unaudited = gone.subtracting(audited).count
            FaultLedger.record("cleanup under live traffic (\(Self.clients) clients, grace 0)", runs: runs, faults: (try w.storage.stats()["faults"] as? Int) ?? 0,
                               objectsChecked: seen.uploaded.count, losses: dangling + deletedWhileReferenced + unaudited)
            #expect(try c.query("select count(*) from steward_test.avatar_history").rows[0].decode(Int.self, at: 0) == seen.saves)
            print("live traffic: \(runs) runs, \(seen.uploaded.count) uploads, \(seen.saves) saves, \(seen.refused) saves refused (object deleted first), "
                  + "\(rescued) kept at a re-check, \(gone.count) deleted, the fence held profile writes at most \(fenceHeld) ms")
        }
    }

    /// Test-only instrumentation: when each profile started and stopped pointing at each object, and when each object
    /// was deleted (clock time inside the deleting transaction), so a deletion while referenced shows even if the
    /// profile moved on before the end.
    static func recordHistory(_ db: TestDatabase) throws {
        try db.connectAsAdmin().execute("""
            create schema steward_test;
            create table steward_test.avatar_history (profile uuid, name text, since timestamptz, until timestamptz);
            create table steward_test.deletions (name text, at timestamptz);
            create function steward_test.track_avatar() returns trigger language plpgsql as $$
            begin
              update steward_test.avatar_history set until = clock_timestamp() where profile = new.id and until is null;
              insert into steward_test.avatar_history values (new.id, new.avatar_url, clock_timestamp(), null);
              return new;
            end $$;
            create trigger zz_track_avatar after update of avatar_url on public.profiles
              for each row execute function steward_test.track_avatar();
            create function steward_test.track_deletion() returns trigger language plpgsql as $$
            begin
              insert into steward_test.deletions values (old.name, clock_timestamp());
              return old;
            end $$;
            create trigger zz_track_deletion after delete on storage.objects
              for each row execute function steward_test.track_deletion();
            grant usage on schema steward_test to public;
            grant all on all tables in schema steward_test to public;
            """)
    }
}
