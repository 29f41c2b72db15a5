import Foundation
import Testing
import TestSupport

@Suite("the control socket under hostile input", .needsCluster)
struct ControlSocketTests {
    /// A running daemon on a fresh database, for one test.
    func withDaemon(_ body: (DaemonProcess) throws -> Void) throws {
        try withTestDatabase { db in
            let daemon = try DaemonProcess(databaseURL: db.url, config: "[job.prune-history]\nschedule = @daily\n")
            #expect(daemon.waitUntil(leader: true, timeout: 20))
            try body(daemon)
            #expect(try daemon.ctlJSON(["status"])["ok"] as? Bool == true,
                    "the daemon stopped serving (running: \(daemon.process.process.isRunning)): \(daemon.process.stderrSoFar.suffix(3000))")
            // Generated requests may have paused the job; the daemon must still stop cleanly.
            #expect(daemon.stop().exitCode == 0)
        }
    }

    @Test("random bytes, invalid UTF-8, unknown commands and bad arguments each get a clear error")
    func garbage() throws {
        try withDaemon { daemon in
            var generator = SystemRandomNumberGenerator()
            for _ in 0..<20 {
                let client = try #require(UnixClient(path: daemon.socketPath))
                client.send((0..<200).map { _ in UInt8.random(in: 0...255, using: &generator) } + [0x0A])
                let reply = client.readLine(timeout: 5) ?? ""
                #expect(reply.contains("\"ok\":false"), "\(reply)")
            }
            let requests = [("frobnicate", "unknown command"), ("history", "wrong number of arguments"),
                            ("run prune-history --now", "unknown option --now"), ("history nosuchjob", "no job nosuchjob"), ("", "empty request")]
            var unclear = 0
            for (line, expected) in requests {
                let client = try #require(UnixClient(path: daemon.socketPath))
                client.send(line + "\n")
                let clear = client.readLine(timeout: 5)?.contains(expected) == true
                #expect(clear, "\(line)")
                if !clear { unclear += 1 }
            }
            let serving = try daemon.ctl(["status"]).exitCode == 0
            #expect(serving)
            FaultLedger.record("control socket: random bytes and bad requests", runs: 20 + requests.count, faults: 20 + requests.count,
                               objectsChecked: 0, losses: unclear + (serving ? 0 : 1))
        }
    }

    @Test("thousands of generated and mutated requests: each is answered with ok or a clear error, and the daemon never stops serving")
    func generatedRequests() throws {
        try withDaemon { daemon in
            var random = SeededGenerator.fromEnvironment()
            print("control socket generated requests: seed \(random.seed) (STEWARD_TEST_SEED replays it)")
            let batches = 40, perBatch = 100, together = 20
            var unanswered: [String] = [], unclear: [String] = [], helpFailures = 0, crashed = false
            for _ in 0..<batches {
                var index = 0
                while index < perBatch {
                    var open: [(UnixClient, [UInt8])] = []
                    for _ in 0..<min(together, perBatch - index) {
                        let request = RequestGenerator.next(using: &random)
                        guard let client = UnixClient(path: daemon.socketPath) else { unanswered.append("connect refused"); continue }
                        // Some arrive in pieces, some end with a half-close instead of a newline.
                        let split = request.bytes.isEmpty ? 0 : Int.random(in: 0...request.bytes.count, using: &random)
                        client.send(Array(request.bytes[..<split]))
                        if Int.random(in: 0..<10, using: &random) == 0 { usleep(1000) }
                        client.send(Array(request.bytes[split...]))
                        if request.halfClose { client.shutdownWrite() }
                        open.append((client, request.bytes))
                    }
                    index += together
                    for (client, bytes) in open {
                        let shown = String(decoding: bytes.prefix(80), as: UTF8.self).debugDescription
                        guard let reply = client.readLine(timeout: 20) else { unanswered.append(shown); continue }
                        let object = (try? JSONSerialization.jsonObject(with: Data(reply.utf8))) as? [String: Any]
                        let ok = object?["ok"] as? Bool
                        let error = object?["error"] as? String ?? ""
                        if ok == nil || (ok == false && error.isEmpty) { unclear.append("\(shown) -> \(reply.prefix(120))") }
                    }
                }
                if !daemon.process.process.isRunning { crashed = true; break }
                let help = UnixClient(path: daemon.socketPath)
                help?.send("help\n")
                if help?.readLine(timeout: 10)?.contains("\"ok\":true") != true { helpFailures += 1 }
            }
            let cases = batches * perBatch
            #expect(!crashed, "the daemon died (seed \(random.seed)): \(daemon.process.stderrSoFar.suffix(3000))")
            #expect(unanswered.isEmpty, "seed \(random.seed): \(unanswered.count) unanswered, first \(unanswered.prefix(5))")
            #expect(unclear.isEmpty, "seed \(random.seed): \(unclear.count) unclear, first \(unclear.prefix(5))")
            #expect(helpFailures == 0)
            FaultLedger.record("control socket: generated requests", runs: cases + batches, faults: cases, objectsChecked: 0,
                               losses: unanswered.count + unclear.count + helpFailures, cases: cases, crashes: crashed ? 1 : 0)
        }
    }

    @Test("an overlong line is refused without reading it all")
    func overlong() throws {
        try withDaemon { daemon in
            let client = try #require(UnixClient(path: daemon.socketPath))
            client.send([UInt8](repeating: 0x61, count: 100_000))
            #expect(client.readLine(timeout: 5)?.contains("longer than 4096 bytes") == true)
        }
    }

    @Test("a slow client that never finishes its line is timed out; a half-closed one still gets its answer")
    func slowAndHalfClosed() throws {
        try withDaemon { daemon in
            let slow = try #require(UnixClient(path: daemon.socketPath))
            slow.send("sta")
            let halfClosed = try #require(UnixClient(path: daemon.socketPath))
            halfClosed.send("status")
            halfClosed.shutdownWrite()
            #expect(halfClosed.readLine(timeout: 5)?.contains("\"ok\":true") == true)
            #expect(slow.readLine(timeout: 10)?.contains("timed out waiting for a request line") == true)
        }
    }

    @Test("thousands of connections: past the cap they are told to retry, and the daemon keeps serving")
    func manyConnections() throws {
        try withDaemon { daemon in
            var idle: [UnixClient] = []
            for _ in 0..<128 { if let c = UnixClient(path: daemon.socketPath) { idle.append(c) } }
            usleep(200_000)
            let extra = try #require(UnixClient(path: daemon.socketPath))
            #expect(extra.readLine(timeout: 5)?.contains("too many clients") == true)
            idle.removeAll()
            usleep(300_000)
            var answered = 0, notConnected = 0, unanswered = 0, otherReplies: [String] = []
            for _ in 0..<2000 {
                guard let c = UnixClient(path: daemon.socketPath) else { notConnected += 1; continue }
                c.send("help\n")
                switch c.readLine(timeout: 5) {
                case let reply? where reply.contains("\"ok\":true"): answered += 1
                case let reply?: otherReplies.append(String(reply.prefix(160)))
                case nil: unanswered += 1
                }
            }
            #expect(answered == 2000, """
                \(notConnected) not connected, \(unanswered) unanswered, \(otherReplies.count) other replies \
                (first: \(otherReplies.first ?? "-")); daemon running: \(daemon.process.process.isRunning); \
                its log: \(daemon.process.stderrSoFar.suffix(3000))
                """)
            FaultLedger.record("control socket: 129 idle clients, then 2000 connections", runs: 2000, faults: 129, objectsChecked: 0,
                               losses: 2000 - answered)
        }
    }

    @Test("requests answered by a task leave nothing behind: thousands of them do not grow the daemon's memory")
    func noMemoryPerRequest() throws {
        try withDaemon { daemon in
            func residentKiB() -> Int {
                let status = (try? String(contentsOfFile: "/proc/\(daemon.process.pid)/status", encoding: .utf8)) ?? ""
                let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
                return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
            }
            // `metrics` is answered by a task (not on the socket's thread) and needs no database.
            func ask(_ count: Int) -> Int {
                var answered = 0
                for _ in 0..<count {
                    guard let client = UnixClient(path: daemon.socketPath) else { continue }
                    client.send("metrics\n")
                    if client.readLine(timeout: 5)?.contains("\"ok\":true") == true { answered += 1 }
                }
                return answered
            }
            _ = ask(300)  // the allocator's and the runtime's own first growth
            let before = residentKiB()
            let answered = ask(3000)
            let grown = residentKiB() - before
            #expect(answered == 3000)
            // A finished task kept per request held about 4 KiB each: some 12 MiB here.
            #expect(before > 0 && grown < 4096, "the daemon grew \(grown) KiB over 3000 requests")
        }
    }

    @Test("clients that hang up mid-request are dropped; the request's work still completes")
    func hangUp() throws {
        try withDaemon { daemon in
            for _ in 0..<50 {
                let c = try #require(UnixClient(path: daemon.socketPath))
                c.send("run prune-history --dry-run\n")
            }
            #expect(try eventually {
                let history = try daemon.ctlJSON(["history", "prune-history", "100"])["runs"] as? [[String: Any]] ?? []
                return history.filter { $0["status"] as? String == "succeeded" }.count >= 1
            })
        }
    }

    @Test("only root or steward's user may change things; the socket's group may look")
    func permissions() throws {
        try withDaemon { daemon in
            #expect(chown(daemon.socketPath, 0, 65534) == 0)
            // The checkout may sit in a folder only root can enter: give nobody a copy of the binary it can run.
            let binFolder = NSTemporaryDirectory() + "steward-bin-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: binFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            defer { try? FileManager.default.removeItem(atPath: binFolder) }
            try FileManager.default.copyItem(atPath: TestEnvironment.stewardBinary, toPath: binFolder + "/steward")
            chmod(binFolder + "/steward", 0o755)
            let nobody = ["runuser", "-u", "nobody", "--", binFolder + "/steward", "ctl", "--socket", daemon.socketPath]
            func run(_ words: [String]) throws -> (Int32, String) {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
                p.arguments = Array(nobody.dropFirst()) + words
                let pipe = Pipe()
                p.standardOutput = pipe
                p.standardError = pipe
                try p.run()
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                p.waitUntilExit()
                return (p.terminationStatus, String(decoding: data, as: UTF8.self))
            }
            // The socket lives in a private temp folder here; let nobody reach it for this test.
            let folder = (daemon.socketPath as NSString).deletingLastPathComponent
            var info = stat()
            stat(folder, &info)
            let reachable = info.st_mode & 0o001 != 0
            try #require(reachable, "the temp folder \(folder) is not traversable by others")
            let status = try run(["status"])
            #expect(status.0 == 0, "\(status.1)")
            let pause = try run(["pause", "prune-history"])
            #expect(pause.0 == 1)
            #expect(pause.1.contains("only root or steward's own user"))
            #expect(try daemon.ctlJSON(["pause", "prune-history"])["ok"] as? Bool == true)
            #expect(try daemon.ctlJSON(["resume", "prune-history"])["ok"] as? Bool == true)
        }
    }
}
