import Foundation
import Testing
import TestSupport

/// `steward ctl metrics` as Prometheus's own linter reads it: a real daemon against a migrated database and the
/// Storage emulator, every job run once over the socket, then `promtool check metrics` on what it printed.
@Suite("metrics: the real ctl metrics output passes promtool check metrics")
struct MetricsLintTests {
    @Test("every job run once, then promtool check metrics finds nothing to complain about")
    func promtoolCheckMetrics() throws {
        try AvatarWorld.with { w in
            try w.storage.upload(["m1.jpeg", "m2.jpeg"])
            try w.storage.age(2 * 86400)
            try w.reference(0, "m1.jpeg")
            let daemon = try DaemonProcess(databaseURL: w.db.url, config: """
                \(w.storage.configSection)
                [apple]
                native_bundle_ids = com.example.app
                [job.orphan-avatars]
                max_fraction = 1
                """)
            #expect(daemon.waitUntil(leader: true, timeout: 30), "\(daemon.process.stderrSoFar.suffix(1500))")
            let jobs = ["prune-history", "username-check", "orphan-avatars", "apple-secret"]
            for job in jobs {
                let run = try daemon.ctl(["run", job])
                #expect(run.exitCode == 0, "ctl run \(job): \(run.output)")
            }
            let metrics = try daemon.ctl(["metrics"])
            #expect(metrics.exitCode == 0)
            for job in jobs {
                #expect(metrics.stdout.contains("steward_job_runs_total{job=\"\(job)\",status=\"succeeded\"} 1"), "\(job) ran once")
                #expect(metrics.stdout.contains("steward_job_last_result{job=\"\(job)\"") || job == "apple-secret" || job == "prune-history",
                        "\(job)'s numbers")
            }
            let path = NSTemporaryDirectory() + "steward-metrics-\(UUID().uuidString).prom"
            defer { try? FileManager.default.removeItem(atPath: path) }
            try metrics.stdout.write(toFile: path, atomically: true, encoding: .utf8)
            let promtool = try ManualPageTests.run("/bin/sh", ["-c", "promtool check metrics < \"$0\"", path])
            #expect(promtool.status == 0 && promtool.stdout.isEmpty && promtool.stderr.isEmpty,
                    "promtool check metrics:\n\(promtool.stdout)\(promtool.stderr)\n--- the metrics:\n\(metrics.stdout)")
            #expect(daemon.stop().exitCode == 0)
        }
    }
}
