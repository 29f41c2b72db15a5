import Foundation
import Testing
import TestSupport

/// The control socket's tiers with real OS users, set up as the package does it: the daemon runs as its own
/// user (here `daemon`) in a folder root gave it (mode 0750, like RuntimeDirectory=steward), the socket is 0660
/// and group-owned by the daemon's group. A member of that group reads; only root and the daemon's user change
/// anything; anyone else cannot connect at all.
@Suite("control socket tiers with a real second user: readers read, only root and the service's user change", .needsCluster)
struct SocketTierTests {
    /// `steward arguments…` as `user`, with `groups` as its supplementary groups (setpriv, no shell).
    static func steward(as user: String, group: String, groups: [String] = [], _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        var setpriv = ["--reuid=\(user)", "--regid=\(group)"]
        setpriv += groups.isEmpty ? ["--clear-groups"] : ["--groups=\(groups.joined(separator: ","))"]
        return try ManualPageTests.run("/usr/bin/setpriv", setpriv + [TestEnvironment.stewardBinary] + arguments)
    }

    @Test("reader, outsider, the service's own user and root each get exactly their tier")
    func tiers() throws {
        // getpwnam answers in static storage: copy the ids before the next lookup.
        guard let entry = getpwnam("daemon") else { Issue.record("this machine lacks the user daemon"); return }
        let (serviceUID, serviceGID) = (entry.pointee.pw_uid, entry.pointee.pw_gid)
        guard getpwnam("nobody") != nil else { Issue.record("this machine lacks the user nobody"); return }
        let serviceGroup = String(serviceGID)
        try withTestDatabase { db in
            // Like /run (root's, 0755) and /run/steward (the service's, 0750) under it.
            let parent = NSTemporaryDirectory() + "steward-tier-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
            defer { try? FileManager.default.removeItem(atPath: parent) }
            let folder = parent + "/steward"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o750])
            #expect(chown(folder, serviceUID, serviceGID) == 0)
            let socket = folder + "/control.sock"
            let config = NSTemporaryDirectory() + "steward-tier-\(UUID().uuidString.prefix(8)).ini"
            try """
            [database]
            url = \(db.url)
            [migrations]
            dir = \(TestEnvironment.migrationsDirectory)
            [control]
            socket = \(socket)
            [daemon]
            host = tier-test
            leader_poll = 0.5
            shutdown_timeout = 5
            [job.prune-history]
            schedule = @daily
            """.write(toFile: config, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: config) }
            let log = NSTemporaryDirectory() + "steward-tier-\(UUID().uuidString.prefix(8)).log"
            #expect(FileManager.default.createFile(atPath: log, contents: nil), "could not create the log file")
            defer { try? FileManager.default.removeItem(atPath: log) }

            let daemon = Process()
            daemon.executableURL = URL(fileURLWithPath: "/bin/sh")
            daemon.arguments = ["-c", "exec /usr/bin/setpriv --reuid=daemon --regid=\(serviceGroup) --clear-groups \"$0\" run --config \"$1\" >>\"$2\" 2>&1",
                                TestEnvironment.stewardBinary, config, log]
            daemon.standardInput = FileHandle.nullDevice
            try daemon.run()
            defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL); daemon.waitUntilExit() } }
            let ctl = ["ctl", "--socket", socket]

            #expect(eventually(30) { (try? StewardProcess.run(ctl + ["status"]).exitCode) == 0 },
                    "the daemon did not answer root (running: \(daemon.isRunning), status \(daemon.isRunning ? -1 : daemon.terminationStatus), reason \(daemon.isRunning ? -1 : daemon.terminationReason.rawValue)): \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            var info = stat()
            #expect(stat(socket, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o660, "socket mode \(String(info.st_mode & 0o777, radix: 8))")
            #expect(info.st_uid == serviceUID && info.st_gid == serviceGID)

            // A member of the service's group: reads, never changes.
            let reader = { (words: [String]) in try Self.steward(as: "nobody", group: "nogroup", groups: ["nogroup", serviceGroup], ctl + words) }
            let status = try reader(["status"])
            #expect(status.status == 0, "reader status: \(status.stderr)")
            let metrics = try reader(["metrics"])
            #expect(metrics.status == 0 && metrics.stdout.contains("steward_leader"), "reader metrics: \(metrics.stderr)")
            for words in [["run", "prune-history", "--dry-run"], ["pause", "prune-history"], ["resume", "prune-history"], ["reload"]] {
                let refused = try reader(words)
                #expect(refused.status == 1, "reader \(words): exit \(refused.status) \(refused.stdout)\(refused.stderr)")
                #expect((refused.stdout + refused.stderr).contains("only root or steward's own user"), "reader \(words): \(refused.stdout)\(refused.stderr)")
            }
            let paused = try StewardProcess.run(ctl + ["jobs", "--json"])
            #expect(!paused.stdout.contains("\"paused\":true"), "a reader's pause must not take effect")

            // Anyone else cannot even connect.
            let outsider = try Self.steward(as: "nobody", group: "nogroup", ctl + ["status"])
            #expect(outsider.status == 69 && outsider.stderr.contains("Permission denied"), "an outsider: exit \(outsider.status) \(outsider.stdout)\(outsider.stderr)")
            #expect(!outsider.stdout.contains("leader"))

            // The service's own user and root change things.
            let own = try Self.steward(as: "daemon", group: serviceGroup, ctl + ["run", "prune-history", "--dry-run"])
            #expect(own.status == 0, "the service's user: \(own.stdout)\(own.stderr)")
            let root = try StewardProcess.run(ctl + ["run", "prune-history", "--dry-run"])
            #expect(root.exitCode == 0, "root: \(root.output)")

            kill(daemon.processIdentifier, SIGTERM)
            #expect(eventually(20) { !daemon.isRunning })
            daemon.waitUntilExit()
            #expect(daemon.terminationStatus == 0, "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
    }
}
