import Foundation

/// The real `steward` binary run as a child process, as operators and scripts run it.
public struct StewardProcess {
    /// What a finished run printed and returned.
    public struct Result: Sendable {
        public let exitCode: Int32
        public let stdout: String
        public let stderr: String
        /// The signal that ended the process, when one did (a trap is SIGILL or SIGTRAP; a timeout kill is SIGKILL).
        public var signal: Int32? = nil
        public var output: String { stdout + stderr }
        /// True when the process died on a signal it did not ask for (a trap, an abort, a segfault; not our SIGKILL).
        public var crashed: Bool { signal.map { $0 != SIGKILL && $0 != SIGTERM } ?? false }
    }

    /// Runs `steward arguments…` to completion (killed after `timeout` seconds).
    public static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 120,
                           directory: String? = nil) throws -> Result {
        let process = try start(arguments, environment: environment, directory: directory)
        return process.wait(timeout: timeout)
    }

    /// Runs another program (`groff`, `man`, `bash`) to completion the same way, its output collected alike.
    public static func runProgram(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                                  timeout: Double = 120) throws -> Result {
        try start(arguments, environment: environment, executable: executable).wait(timeout: timeout)
    }

    /// Starts `steward arguments…` (or `executable`) and returns at once.
    public static func start(_ arguments: [String], environment: [String: String] = [:],
                             executable: String = TestEnvironment.stewardBinary, directory: String? = nil) throws -> Running {
        let out = Pipe(), err = Pipe()
        let process = try launch(arguments, environment: environment, executable: executable, directory: directory,
                                 standardOutput: out, standardError: err)
        return Running(process: process, out: out, err: err)
    }

    /// Starts `steward arguments…` with its outputs where the caller says (a pipe it reads only when it chooses to,
    /// or the null device), without the collecting `start` does; the environment as `start` gives it.
    public static func launch(_ arguments: [String], environment: [String: String] = [:], executable: String = TestEnvironment.stewardBinary,
                              directory: String? = nil, standardOutput: Any, standardError: Any) throws -> Process {
        let process = Process()
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "STEWARD_DATABASE_URL")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardOutput = standardOutput
        process.standardError = standardError
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// A child process still running.
    public final class Running: @unchecked Sendable {
        public let process: Process
        let out: Pipe
        let err: Pipe
        private let collected = CollectedOutput()

        init(process: Process, out: Pipe, err: Pipe) {
            self.process = process
            self.out = out
            self.err = err
            let collected = self.collected
            out.fileHandleForReading.readabilityHandler = { handle in collected.append(handle.availableData, error: false) }
            err.fileHandleForReading.readabilityHandler = { handle in collected.append(handle.availableData, error: true) }
        }

        /// What it printed on standard error so far.
        public var stderrSoFar: String { collected.text(error: true) }

        public var pid: Int32 { process.processIdentifier }

        /// Sends `signal` (SIGKILL for a crash).
        public func kill(_ signal: Int32) { Foundation.kill(process.processIdentifier, signal) }

        /// Waits for the exit (SIGKILL after `timeout` seconds) and collects the output.
        public func wait(timeout: Double) -> Result {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            out.fileHandleForReading.readabilityHandler = nil
            err.fileHandleForReading.readabilityHandler = nil
            collected.append(out.fileHandleForReading.readDataToEndOfFile(), error: false)
            collected.append(err.fileHandleForReading.readDataToEndOfFile(), error: true)
            return Result(exitCode: process.terminationStatus, stdout: collected.text(error: false), stderr: collected.text(error: true),
                          signal: process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil)
        }
    }
}

/// Output gathered from a child's pipes by Foundation's reader threads.
final class CollectedOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var stdout = Data()
    private var stderr = Data()

    func append(_ data: Data, error: Bool) {
        lock.lock(); defer { lock.unlock() }
        if error { stderr.append(data) } else { stdout.append(data) }
    }

    func text(error: Bool) -> String {
        lock.lock(); defer { lock.unlock() }
        return String(decoding: error ? stderr : stdout, as: UTF8.self)
    }
}
