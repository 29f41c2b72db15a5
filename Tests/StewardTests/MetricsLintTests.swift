import Foundation
import Testing
import TestSupport

/// `steward ctl metrics` as Prometheus's own linter reads it: a real daemon against a migrated database and the
/// Storage emulator, every job run once over the socket, then `promtool check metrics` on what it printed.
@Suite("metrics: the real ctl metrics output passes promtool check metrics", .needsCluster)
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
            // The quickstart as migrated lets anonymous clients upload, among its known weaknesses.
            let advice = try daemon.ctl(["verify"]).stdout.components(separatedBy: "\nadvice: ").count - 1
            #expect(advice > 0 && metrics.stdout.contains("steward_schema_advisories \(advice)\n"), "verify advised \(advice) time(s): \(metrics.stdout)")
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

    @Test("a run the safety brake refuses counts as a failure in a row; a success sets the count back to 0")
    func consecutiveFailures() throws {
        try AvatarWorld.with { w in
            try w.storage.upload(["b1.jpeg", "b2.jpeg", "b3.jpeg"])
            try w.storage.age(2 * 86400)
            // No profile points at any of them: every object is a candidate, past max_fraction's 0.5.
            let daemon = try DaemonProcess(databaseURL: w.db.url, config: w.storage.configSection)
            #expect(daemon.waitUntil(leader: true, timeout: 30), "\(daemon.process.stderrSoFar.suffix(1500))")
            for attempt in 1...3 {
                let run = try daemon.ctl(["run", "orphan-avatars"])
                #expect(run.exitCode == 1 && run.output.contains("safety brake"), "attempt \(attempt): \(run.output)")
            }
            let failing = try daemon.ctl(["metrics"]).stdout
            #expect(failing.contains("steward_job_consecutive_failures{job=\"orphan-avatars\"} 3"), "\(failing)")
            #expect(failing.contains("steward_job_runs_total{job=\"orphan-avatars\",status=\"failed\"} 3"))
            #expect(failing.contains("steward_job_consecutive_failures{job=\"prune-history\"} 0"))
            #expect(try w.storage.objects().count == 3, "the brake deleted nothing")
            try w.reference(0, "b1.jpeg")
            try w.reference(1, "b2.jpeg")
            let passing = try daemon.ctl(["run", "orphan-avatars"])
            #expect(passing.exitCode == 0, "\(passing.output)")
            let after = try daemon.ctl(["metrics"]).stdout
            #expect(after.contains("steward_job_consecutive_failures{job=\"orphan-avatars\"} 0"), "\(after)")
            #expect(daemon.stop().exitCode == 0)
        }
    }
}
