import Foundation
import Synchronization
import Testing
import TestSupport

/// Ctrl-C and SIGTERM during a fleet rollout whose output nobody reads yet: the summary behind a slow reader, and
/// standard error held up by a reader that reads nothing. The targets are unreachable ports, so no cluster is needed
/// and every target ends at once.
@Suite("fleet brake: signals while the output is held up", .serialized)
struct FleetBrakeTests {
    /// A folder with one migration file and a config of `count` targets that refuse the connection.
    final class Fleet {
        let folder: String
        let config: String

        init(targets count: Int) throws {
            folder = NSTemporaryDirectory() + "steward-brake-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder + "/migrations", withIntermediateDirectories: true)
            try "select 1;\n".write(toFile: folder + "/migrations/0001_one.sql", atomically: true, encoding: .utf8)
            var text = "[migrations]\ndir = \(folder)/migrations\n"
            for index in 0..<count { text += "[target.u\(index)]\nurl = postgresql://postgres@127.0.0.1:1/postgres\n" }
            config = folder + "/fleet.ini"
            try text.write(toFile: config, atomically: true, encoding: .utf8)
        }

        deinit { try? FileManager.default.removeItem(atPath: folder) }
    }

    /// `steward arguments…` with both outputs in pipes this test reads only when it chooses to.
    static func start(_ arguments: [String]) throws -> (process: Process, out: Pipe, err: Pipe) {
        let out = Pipe(), err = Pipe()
        return (try StewardProcess.launch(arguments, standardOutput: out, standardError: err), out, err)
    }

    /// Bytes waiting in the pipe, unread.
    static func unread(_ pipe: Pipe) -> Int32 {
        var count: Int32 = 0
        _ = ioctl(pipe.fileHandleForReading.fileDescriptor, UInt(FIONREAD), &count)
        return count
    }

    @Test("a Ctrl-C while a slow reader holds up the --json summary does not cut it short: one whole object, the rollout's own exit code")
    func slowReader() throws {
        let fleet = try Fleet(targets: 1500)
        let (process, out, err) = try Self.start(["fleet", "migrate", "--config", fleet.config, "--continue-on-error", "--parallel", "64", "--json"])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let errors = Mutex(Data())
        err.fileHandleForReading.readabilityHandler = { handle in let data = handle.availableData; errors.withLock { $0.append(data) } }
        // Every target has ended; the summary (hundreds of KiB) now waits for a reader that is not reading yet.
        #expect(eventually(60) { String(decoding: errors.withLock { $0 }, as: UTF8.self).contains("1500/1500 done") })
        kill(process.processIdentifier, SIGINT)
        usleep(300_000)
        let summary = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        err.fileHandleForReading.readabilityHandler = nil
        let stderr = String(decoding: errors.withLock { $0 } + err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationReason == .exit, "ended by signal \(process.terminationStatus)")
        // Every target was reached (and refused the connection): nothing was left, so it is the rollout's 69, not 130.
        #expect(process.terminationStatus == 69, "\(stderr.suffix(500))")
        let object = try JSONSerialization.jsonObject(with: summary) as? [String: Any]
        #expect((object?["targets"] as? [Any])?.count == 1500, "\(summary.count) bytes of JSON")
        #expect(object?["interrupted"] as? Bool == false)
    }

    @Test("standard error held up by a reader that reads nothing: SIGTERM then Ctrl-C still ends the rollout at once (130)")
    func stuckStandardError() throws {
        // About 60 bytes of progress per target: far more than a pipe holds, so the rollout blocks writing it.
        let fleet = try Fleet(targets: 2500)
        let (process, out, err) = try Self.start(["fleet", "migrate", "--config", fleet.config, "--continue-on-error", "--parallel", "64"])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        out.fileHandleForReading.readabilityHandler = { handle in _ = handle.availableData }
        // A pipe holds 64 KiB; a line that no longer fits waits, so "full" is a little short of that.
        #expect(eventually(60) { Self.unread(err) >= 60_000 }, "standard error never filled its pipe")
        kill(process.processIdentifier, SIGTERM)
        usleep(300_000)
        kill(process.processIdentifier, SIGINT)
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        let ended = !process.isRunning
        if !ended { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        out.fileHandleForReading.readabilityHandler = nil
        #expect(ended, "still running 10 s after the second signal")
        #expect(process.terminationReason == .exit && process.terminationStatus == 130,
                "ended by \(process.terminationReason == .exit ? "exit" : "signal") \(process.terminationStatus)")
    }
}
