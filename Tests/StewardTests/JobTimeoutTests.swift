import Foundation
import Testing
import TestSupport

@Suite("a job's timeout cuts its blocking calls", .needsCluster)
struct JobTimeoutTests {
    @Test("a Storage request that never answers is cut at the job's timeout: the run ends within a second of it, recorded failed")
    func hangingTransfer() throws {
        try AvatarWorld.with { w in
            let orphans = (0..<5).map { "o\($0).jpeg" }
            try w.seed(orphans: orphans, kept: 2)
            // The DELETE hangs; the job's 1 s deadline comes before the fence's own request timeout (over 1 s here).
            try w.storage.faults(["hang_next": 100, "hang_s": 120])
            let started = Date()
            let (result, _) = try w.run([], config: "timeout = 1s\nmax_fraction = 1\n")
            let wall = Date().timeIntervalSince(started)
            let json = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
            #expect(result.exitCode != 0, "\(result.output)")
            #expect(json["status"] as? String == "failed", "\(result.output)")
            #expect((json["error"] as? String)?.hasPrefix("timed out after 1 s") == true, "\(result.output)")
            let seconds = json["seconds"] as? Double ?? .infinity
            #expect(seconds >= 1 && seconds < 2, "the run took \(seconds) s for a 1 s timeout")
            #expect(wall < 20, "the process took \(wall) s")
            #expect((try w.storage.stats()["faults"] as? Int ?? 0) >= 1, "no request met the hang")
            #expect(try w.storage.objects().isSuperset(of: ["keep0.jpeg", "keep1.jpeg"]))
            let failed = try w.db.connect().query("select count(*) from steward.job_runs where job = 'orphan-avatars' and status = 'failed' and error like 'timed out after 1 s%'")
                .rows[0].decode(Int.self, at: 0)
            #expect(failed == 1)
        }
    }
}
