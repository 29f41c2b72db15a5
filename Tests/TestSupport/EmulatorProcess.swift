import Foundation

/// One of the project's Python emulators (`scripts/*-emulator.py`) started on a free port: it binds port 0 and writes
/// the port it got to a file, so tests running side by side never collide. Stopped with SIGKILL when released.
public final class EmulatorProcess: @unchecked Sendable {
    public let port: Int
    private let process: Process

    /// Starts `scripts/<script>` with `arguments` (plus `--port 0 --port-file …`); throws with the emulator's own
    /// error output if it exits or has not bound a port within a minute.
    public init(script: String, arguments: [String]) throws {
        let base = NSTemporaryDirectory() + "steward-emulator-\(UInt32.random(in: 0...UInt32.max))"
        let portFile = base + ".port", logFile = base + ".log"
        _ = FileManager.default.createFile(atPath: logFile, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: portFile); try? FileManager.default.removeItem(atPath: logFile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", TestEnvironment.root + "/scripts/" + script, "--port", "0", "--port-file", portFile] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: logFile)
        try process.run()
        var bound: Int?
        let deadline = Date().addingTimeInterval(60)
        while bound == nil, Date() < deadline, process.isRunning {
            bound = (try? String(contentsOfFile: portFile, encoding: .utf8)).flatMap { Int($0) }
            if bound == nil { usleep(50_000) }
        }
        guard let bound else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let log = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "\(script) did not start: \(log.suffix(1500))"])
        }
        self.port = bound
        self.process = process
    }

    deinit {
        // SIGKILL: a throwaway server with nothing to flush.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
