import Foundation
import Testing
import TestSupport

/// What another user on the machine can do to the control socket: hold its connections, squat its path,
/// leave files where it goes, answer in the daemon's place.
@Suite("the control socket against other local users", .needsCluster)
struct LocalAttackerTests {
    /// Users other than root to connect as (Debian's system users), at least `count` of them.
    func otherUsers(_ count: Int) throws -> [String] {
        let candidates: [String] = ["daemon", "bin", "sys", "sync", "games", "man", "lp", "mail", "news", "uucp", "proxy", "nobody"]
        let users = candidates.filter { name in name.withCString { getpwnam($0) } != nil }
        try #require(users.count >= count, "need \(count) system users, found \(users)")
        return Array(users.prefix(count))
    }

    /// A leading daemon on a fresh database whose socket everyone may connect to, for one test.
    func withOpenDaemon(_ body: (TestDatabase, DaemonProcess) throws -> Void) throws {
        try withTestDatabase { db in
            let daemon = try DaemonProcess(databaseURL: db.url, config: "[job.prune-history]\nschedule = @daily\n")
            #expect(daemon.waitUntil(leader: true, timeout: 20))
            #expect(chmod(daemon.socketPath, 0o666) == 0)
            try body(db, daemon)
        }
    }

    /// One line of `socket-clients.py ask`: the request line, its reply (nil if unanswered) and when it came.
    static func askReply(_ line: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    }

    /// A fresh folder in the temporary folder with `mode`, owned by `owner`.
    func folder(mode: mode_t, owner: uid_t = 0, in parent: String = NSTemporaryDirectory()) throws -> String {
        let path = parent + (parent.hasSuffix("/") ? "" : "/") + "steward-sock-\(UUID().uuidString.prefix(8))"
        try #require(mkdir(path, 0o700) == 0)
        try #require(chmod(path, mode) == 0 && chown(path, owner, owner == 0 ? 0 : gid_t(owner)) == 0)
        return path
    }

    @Test("other users holding every connection they may cannot lock root out: root's status and run still answer")
    func slotsKeptForRoot() throws {
        // Everyone may connect: the daemon's own rules, not the file mode, must keep root in.
        try withOpenDaemon { _, daemon in
            let users = try otherUsers(9)
            // Two users flood the socket with `verify`, the others hold connections with half a line; each tries 24.
            let specs = users.enumerated().map { "\($1):24:\($0 < 2 ? "flood" : "hold")" }
            // They keep at it until root is done (at most 90 s).
            let stopFile = NSTemporaryDirectory() + "steward-stop-\(UUID().uuidString)"
            defer { unlink(stopFile) }
            let clients = try SocketClients(["hold", daemon.socketPath, "90", stopFile] + specs)
            usleep(2_000_000)
            var rootAnswered = 0
            var refusals: [String] = []
            var seconds: [Double] = []
            for _ in 0..<20 {
                let started = Date()
                let status = try daemon.ctl(["status"])
                seconds.append(Date().timeIntervalSince(started))
                if status.exitCode == 0 { rootAnswered += 1 } else { refusals.append(status.stderr) }
            }
            let run = try daemon.ctl(["run", "prune-history"])
            _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
            let results = clients.results(timeout: 40)
            seconds.sort()
            print("root's ctl status under the attack: median \(seconds[seconds.count / 2]) s, slowest \(seconds.last ?? 0) s")
            #expect(results.count == users.count && results.allSatisfy { $0["missing"] == nil }, "\(results)")
            #expect(rootAnswered == 20, "root refused: \(refusals.prefix(3))")
            #expect(run.exitCode == 0, "\(run.output)")
            let mostHeld = results.compactMap { $0["max_held"] as? Int }
            #expect(mostHeld.allSatisfy { $0 <= 16 }, "a user held more than 16 connections: \(results)")
            let messages = results.flatMap { $0["messages"] as? [String] ?? [] }
            #expect(messages.contains { $0.contains("at most 16 at once") }, "no user reached the per-user limit: \(messages)")
            #expect(messages.contains { $0.contains("kept for root and steward's user") },
                    "the other users never filled their share of the slots, so the test proved nothing: \(results)")
            let floodAnswered = results.filter { $0["mode"] as? String == "flood" }.compactMap { $0["answered"] as? Int }.reduce(0, +)
            #expect(floodAnswered > 0, "other users' requests were never served")
            #expect(daemon.process.stderrSoFar.contains("control connections refused"), "the flood left no trace in the log")
            let refused = results.compactMap { $0["refused"] as? Int }.reduce(0, +)
            FaultLedger.record("control socket: \(users.count) other users hold every slot they may", runs: 21, faults: refused,
                               objectsChecked: 0, losses: (20 - rootAnswered) + (run.exitCode == 0 ? 0 : 1))
            #expect(daemon.stop().exitCode == 0)
        }
    }

    @Test("help and jobs are answered on the socket's own thread: other users' requests stuck on the database do not hold them up")
    func quickAnswersPassStuckRequests() throws {
        try withOpenDaemon { db, daemon in
            // The held last runs are read now, so the next half minute's `jobs` need no query.
            #expect(try daemon.ctlJSON(["jobs"])["ok"] as? Bool == true)
            let user = try otherUsers(1)[0]
            let blocker = try db.connect()
            try blocker.execute("begin; lock table steward.job_runs in access exclusive mode")
            // Five `history` requests wait on the lock: four are handled (the limit for other users), one waits its turn.
            let stuck = try SocketClients(["ask", daemon.socketPath, user, "60"] + Array(repeating: "history prune-history", count: 5))
            let watcher = try db.connect()
            #expect(eventually(10) {
                (try? watcher.query("select count(*) from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()")
                    .rows[0].decode(Int.self, at: 0)) ?? 0 >= 1
            }, "no history request reached the lock")
            let quick = try SocketClients(["ask", daemon.socketPath, user, "10", "jobs", "help"])
            let answers = (0..<2).compactMap { _ in quick.readLine(timeout: 12).flatMap(Self.askReply) }
            #expect(answers.count == 2 && answers.allSatisfy { ($0["reply"] as? String)?.hasPrefix("{\"ok\":true") == true }, "\(answers)")
            #expect(answers.allSatisfy { ($0["seconds"] as? Double ?? 99) < 2 }, "help or jobs waited behind the stuck requests: \(answers)")
            try blocker.execute("rollback")
            let released = (0..<5).compactMap { _ in stuck.readLine(timeout: 30).flatMap(Self.askReply) }
            // Answered once the lock went (or, on a machine slow enough to pass the daemon's 10 s lock timeout, told so).
            let answered = released.filter { ($0["reply"] as? String).map { $0.hasPrefix("{\"ok\":true") || $0.contains("lock timeout") } == true }
            // The quick answers passed the stuck requests while these still waited: none of those had an answer yet.
            let firstReleased = released.compactMap { $0["at"] as? Double }.min() ?? 0
            #expect(answers.allSatisfy { ($0["at"] as? Double ?? .infinity) < firstReleased },
                    "a history request was answered before help and jobs, so the test proved nothing: \(answers) \(released)")
            #expect(answered.count == 5, "the stuck requests were not all answered once the lock went: \(released)")
            #expect(daemon.stop().exitCode == 0)
        }
    }

    @Test("a regular file at the socket path is left alone and the daemon refuses to start")
    func regularFileAtSocketPath() throws {
        try withTestDatabase { db in
            let path = NSTemporaryDirectory() + "steward-\(UUID().uuidString.prefix(8)).sock"
            try "root's notes\n".write(toFile: path, atomically: false, encoding: .utf8)
            defer { unlink(path) }
            let daemon = try DaemonProcess(databaseURL: db.url, socketPath: path)
            let result = daemon.process.wait(timeout: 20)
            #expect(result.exitCode == 1)
            #expect(result.stderr.contains("exists and is a regular file, not a socket"), "\(result.stderr)")
            #expect((try? String(contentsOfFile: path, encoding: .utf8)) == "root's notes\n")
        }
    }

    @Test("a stale socket nobody answers on is replaced; a live one is not")
    func staleSocket() throws {
        try withTestDatabase { db in
            let path = NSTemporaryDirectory() + "steward-\(UUID().uuidString.prefix(8)).sock"
            defer { unlink(path) }
            _ = try SocketClients(["stale", path]).results(timeout: 10)
            var info = stat()
            try #require(lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK)
            let daemon = try DaemonProcess(databaseURL: db.url, socketPath: path)
            #expect(daemon.waitUntil(leader: nil, timeout: 20))
            let second = try DaemonProcess(databaseURL: db.url, socketPath: path)
            let refused = second.process.wait(timeout: 20)
            #expect(refused.exitCode == 1)
            #expect(refused.stderr.contains("another process is listening"), "\(refused.stderr)")
            #expect(try daemon.ctl(["status"]).exitCode == 0, "the second daemon took the first one's socket")
            #expect(daemon.stop().exitCode == 0)
        }
    }

    @Test("a socket folder others may write without the sticky bit is refused; a sticky one is accepted")
    func sharedSocketFolder() throws {
        try withTestDatabase { db in
            for (mode, refused) in [(mode_t(0o777), true), (0o775, true), (0o1777, false), (0o755, false)] {
                let dir = try folder(mode: mode)
                defer { try? FileManager.default.removeItem(atPath: dir) }
                let daemon = try DaemonProcess(databaseURL: db.url, socketPath: dir + "/control.sock")
                if refused {
                    let result = daemon.process.wait(timeout: 20)
                    #expect(result.exitCode == 1, "mode \(String(mode, radix: 8))")
                    #expect(result.stderr.contains("writable by group or others"), "\(result.stderr)")
                    #expect(!FileManager.default.fileExists(atPath: dir + "/control.sock"))
                } else {
                    #expect(daemon.waitUntil(leader: nil, timeout: 20), "mode \(String(mode, radix: 8))")
                    #expect(daemon.stop().exitCode == 0)
                }
            }
            // Owned by another user: that user could replace the socket.
            let theirs = try folder(mode: 0o755, owner: 65534)
            defer { try? FileManager.default.removeItem(atPath: theirs) }
            let daemon = try DaemonProcess(databaseURL: db.url, socketPath: theirs + "/control.sock")
            let result = daemon.process.wait(timeout: 20)
            #expect(result.exitCode == 1)
            #expect(result.stderr.contains("belongs to uid 65534"), "\(result.stderr)")
        }
    }

    @Test("ctl refuses a squatter's socket in a shared folder, and trusts the owner of a folder root gave it")
    func squatter() throws {
        let shared = try folder(mode: 0o1777)
        defer { try? FileManager.default.removeItem(atPath: shared) }
        let path = shared + "/control.sock"
        let squatter = try SocketClients(["listen", path, "nobody", "20"])
        defer { squatter.stop() }
        let result = try StewardProcess.run(["ctl", "status", "--socket", path], timeout: 30)
        #expect(result.exitCode == 69, "\(result.output)")
        #expect(result.stderr.contains("runs as uid 65534"), "\(result.stderr)")
        #expect(!result.output.contains("a squatter answered"))
        squatter.stop()

        // A folder that root made and gave to another user (as systemd's RuntimeDirectory= does for the daemon's user).
        let parent = try folder(mode: 0o755)
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let given = try folder(mode: 0o755, owner: 65534, in: parent)
        let daemonLike = try SocketClients(["listen", given + "/control.sock", "nobody", "20"])
        defer { daemonLike.stop() }
        let trusted = try StewardProcess.run(["ctl", "status", "--socket", given + "/control.sock"], timeout: 30)
        #expect(trusted.exitCode == 0, "\(trusted.output)")
        #expect(trusted.stdout.contains("a squatter answered"))
        FaultLedger.record("control socket: a squatter answers in the daemon's place", runs: 2, faults: 1, objectsChecked: 0,
                           losses: result.output.contains("a squatter answered") || result.exitCode == 0 ? 1 : 0)
    }

    @Test("ctl says so when the daemon closes the connection without answering (exit 75)")
    func closedWithoutAnswer() throws {
        let path = NSTemporaryDirectory() + "steward-\(UUID().uuidString.prefix(8)).sock"
        let server = try SocketClients(["hangup", path, "20"])
        defer { server.stop() }
        let result = try StewardProcess.run(["ctl", "status", "--socket", path], timeout: 30)
        #expect(result.exitCode == 75, "\(result.output)")
        #expect(result.stderr.contains("the daemon closed the connection before answering"), "\(result.stderr)")
        let nothing = try StewardProcess.run(["ctl", "status", "--socket", path + ".none"], timeout: 30)
        #expect(nothing.exitCode == 69)
        for bad in ["nan", "inf", "-1", "0", "1e300"] {
            let timeout = try StewardProcess.run(["ctl", "status", "--socket", path, "--timeout", bad], timeout: 30)
            #expect(timeout.exitCode == 64, "--timeout \(bad): \(timeout.output)")
        }
    }
}
