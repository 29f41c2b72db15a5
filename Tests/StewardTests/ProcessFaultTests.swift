import Foundation
import Postgres
import Testing
import TestSupport

@Suite("fault and load: the leader killed mid-job", .needsCluster)
struct ProcessFaultTests {
    @Test("kill -9 of the leader mid-batch: the other daemon takes over within the bound, settles what was in flight, loses nothing")
    func leaderKilledMidJob() throws {
        try AvatarWorld.with(users: 2) { w in
            let orphans = (0..<24).map { "leader\($0).jpeg" }
            try w.seed(orphans: orphans, kept: 2)
            try w.storage.faults(["delay_ms": 400])
            let config = """
                \(w.storage.configSection)
                [job.orphan-avatars]
                schedule = @every 2s
                batch_size = 3
                max_fraction = 1
                """
            let alpha = try DaemonProcess(databaseURL: w.db.url, host: "alpha", config: config)
            #expect(alpha.waitUntil(leader: true, timeout: 20))
            let beta = try DaemonProcess(databaseURL: w.db.url, host: "beta", config: config)
            #expect(beta.waitUntil(leader: false, timeout: 20))
            #expect(eventually(30) { ((try? w.storage.stats()["deleted"] as? Int) ?? 0) >= 3 }, "\(alpha.process.stderrSoFar.suffix(1500))")
            alpha.process.kill(SIGKILL)
            let killed = Date()
            #expect(beta.waitUntil(leader: true, timeout: 10))
            let takeover = Date().timeIntervalSince(killed)
            #expect(takeover < 3, "takeover took \(takeover) s with leader_poll = 0.5")
            try w.storage.faults(["delay_ms": 0])
            #expect(eventually(60) { (try? w.storage.objects()) == ["keep0.jpeg", "keep1.jpeg"] }, "\(beta.process.stderrSoFar.suffix(1500))")
            let c = try w.db.connect()
            #expect(eventually(20) {
                (try? c.query("select count(*) from steward.job_runs where host = 'beta' and status = 'succeeded'").rows[0].decode(Int.self, at: 0)) ?? 0 > 0
            })
            #expect(beta.stop().exitCode == 0)
            let audited = try w.audited()
            #expect(audited == Set(orphans), "every deletion audited, the ones in flight at the kill included")
            #expect(try c.query("select count(*) from steward.deleted_objects where deleted_at is null").rows[0].decode(Int.self, at: 0) == 0)
            let alphaRuns = try c.query("select status, coalesce(error, '') from steward.job_runs where host = 'alpha' and job = 'orphan-avatars'").rows
                .map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) }
            #expect(alphaRuns.contains { $0.0 == "failed" && $0.1.hasPrefix("interrupted") }, "the killed run is on record: \(alphaRuns)")
            #expect(!alphaRuns.contains { $0.0 == "running" })
            FaultLedger.record("leader killed (SIGKILL) mid-batch", runs: try c.query("select count(*) from steward.job_runs where job = 'orphan-avatars'")
                                .rows[0].decode(Int.self, at: 0), faults: 1, objectsChecked: orphans.count + 2,
                               losses: Set(orphans).subtracting(audited).count + (try w.storage.objects().count == 2 ? 0 : 1))
        }
    }
}
