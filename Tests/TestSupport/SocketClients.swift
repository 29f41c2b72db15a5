import Foundation

/// `Tests/Helpers/socket-clients.py` as a child process: socket clients and servers run as other OS users
/// (the tests run as root), for what a second user on the machine can do to the control socket.
public final class SocketClients: @unchecked Sendable {
    public let process: Process
    private let output = Pipe()

    /// Starts the helper with `arguments` and waits (at most 10 s) for its "ready" line.
    public init(_ arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", TestEnvironment.root + "/Tests/Helpers/socket-clients.py"] + arguments
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        let first = readLine(timeout: 10)
        guard first == "ready" else {
            process.terminate()
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "socket-clients.py did not start: \(first ?? "no output")"])
        }
    }

    private var pending = Data()

    /// The next line it prints, or nil after `timeout` seconds or at its end.
    public func readLine(timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        let fd = output.fileHandleForReading.fileDescriptor
        while Date() < deadline {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending = Data(pending[pending.index(after: newline)...])
                return line
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) >= 0 else { return nil }
            if poller.revents == 0 { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { return nil }
            pending.append(contentsOf: buffer[..<n])
        }
        return nil
    }

    /// Every JSON line it prints until it exits (killed after `timeout` seconds).
    public func results(timeout: Double) -> [[String: Any]] {
        var lines: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline, let line = readLine(timeout: deadline.timeIntervalSinceNow) {
            if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] { lines.append(object) }
        }
        stop()
        return lines
    }

    /// Ends it (SIGTERM) and waits.
    public func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    deinit { stop() }
}
