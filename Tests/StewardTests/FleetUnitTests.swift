import Foundation
import Testing
import TestSupport

/// One daemon per project: the template unit, and the project label on every metric.
@Suite("fleet: steward@.service and the project label")
struct FleetUnitTests {
    @Test("steward@.service passes systemd-analyze verify as an instance, with its own config, credential, socket and directories")
    func templateUnit() throws {
        let unit = try String(contentsOfFile: TestEnvironment.root + "/systemd/steward@.service", encoding: .utf8)
            .replacing("/usr/local/bin/steward", with: TestEnvironment.stewardBinary)
        let folder = NSTemporaryDirectory() + "steward-template-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try unit.write(toFile: folder + "/steward@.service", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: folder + "/steward@billing.service", withDestinationPath: "steward@.service")
        let verify = try StewardProcess.runProgram("/usr/bin/systemd-analyze", ["verify", folder + "/steward@billing.service"])
        #expect(verify.exitCode == 0 && verify.output.isEmpty, "\(verify.output)")

        let settings = unit.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.hasPrefix("#") && $0.contains("=") }
        func value(_ key: String) -> String? { settings.first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) } }
        #expect(value("ExecStart")?.hasSuffix(" run --config /etc/steward/%i.ini") == true)
        #expect(value("Environment")?.split(separator: " ").contains("STEWARD_PROJECT=%i") == true)
        #expect(value("Environment")?.split(separator: " ").contains("STEWARD_CONTROL_SOCKET=/run/steward/%i/control.sock") == true)
        #expect(value("LoadCredential") == "database-password:/etc/steward/%i.password")
        #expect(value("RuntimeDirectory") == "steward/%i" && value("StateDirectory") == "steward/%i")
        // The rest as the single-project unit: the same type, restarts, watchdog and hardening.
        let plain = try String(contentsOfFile: TestEnvironment.root + "/systemd/steward.service", encoding: .utf8)
        for key in ["Type", "Restart", "RestartPreventExitStatus", "WatchdogSec", "User", "ProtectSystem", "ReadWritePaths", "SystemCallFilter"] {
            #expect(plain.contains("\n\(key)=\(value(key) ?? "-")\n"), "\(key) differs from steward.service")
        }
    }

    @Test("STEWARD_PROJECT (or [metrics] project) puts project=\"…\" on every sample; without it the metrics are as before", .needsCluster)
    func projectLabel() throws {
        try withTestDatabase { db in
            let labelled = try DaemonProcess(databaseURL: db.url, environment: ["STEWARD_PROJECT": "billing"])
            #expect(labelled.waitUntil(leader: true, timeout: 30), "\(labelled.process.stderrSoFar.suffix(1500))")
            let metrics = try labelled.ctl(["metrics"]).stdout
            let samples = metrics.split(separator: "\n").filter { !$0.hasPrefix("#") }
            #expect(samples.count > 10)
            for sample in samples { #expect(sample.hasPrefix("steward_") && sample.contains("{project=\"billing\""), "\(sample)") }
            #expect(metrics.contains("steward_leader{project=\"billing\"} 1\n"))
            #expect(metrics.contains("steward_job_runs_total{project=\"billing\",job=\"prune-history\",status=\"succeeded\"}"))
            let path = NSTemporaryDirectory() + "steward-metrics-\(UUID().uuidString).prom"
            defer { try? FileManager.default.removeItem(atPath: path) }
            try metrics.write(toFile: path, atomically: true, encoding: .utf8)
            let promtool = try StewardProcess.runProgram("/bin/sh", ["-c", "promtool check metrics < \"$0\"", path])
            #expect(promtool.exitCode == 0 && promtool.output.isEmpty, "\(promtool.output)")
            #expect(labelled.stop().exitCode == 0)

            let plain = try DaemonProcess(databaseURL: db.url)
            #expect(plain.waitUntil(leader: true, timeout: 30))
            let plainMetrics = try plain.ctl(["metrics"]).stdout
            #expect(plainMetrics.contains("steward_leader 1\n") && !plainMetrics.contains("project="), "\(plainMetrics)")
            #expect(plain.stop().exitCode == 0)

            // A name that would need escaping in the text format is refused where it is set.
            let bad = try StewardProcess.run(["config", "check", "--config", plain.configPath], environment: ["STEWARD_PROJECT": "a\"b"])
            #expect(bad.exitCode == 78 && bad.stderr.contains("[metrics] project"), "\(bad.output)")
        }
    }
}
