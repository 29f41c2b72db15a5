import Foundation

/// The real `steward` binary run to completion with `posix_spawn` and reaped with `wait4`, so a test sees how it
/// ended (an exit code or the signal that killed it), how long it took and its peak resident memory.
public enum MeasuredProcess {
    public struct Result: Sendable {
        /// The exit code, or nil when a signal ended the process.
        public let exitCode: Int32?
        /// The signal that ended the process (a trap is SIGILL or SIGTRAP), or nil.
        public let signal: Int32?
        public let stdout: String
        public let stderr: String
        public let seconds: Double
        /// Peak resident set size of the program itself, in KiB: the highest `VmHWM` of `/proc/<pid>/status` seen while it
        /// ran (sampled every 5 ms). `ru_maxrss` from `wait4` is not used: after a vfork-style spawn it starts from the
        /// test process's own peak.
        public let maxRSSKiB: Int
        /// Killed by the test's own timeout.
        public let timedOut: Bool
        public var output: String { stdout + stderr }
        /// Ended by a signal the test did not send.
        public var crashed: Bool { signal != nil && !timedOut }
    }

    /// `VmHWM` of a running process, in KiB (0 once it has exited or before its program is loaded).
    static func highWaterKiB(_ pid: pid_t) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// Runs `steward arguments…` (SIGKILL after `timeout` seconds).
    public static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 120) throws -> Result {
        let base = NSTemporaryDirectory() + "steward-measured-\(UUID().uuidString)"
        let outPath = base + ".out", errPath = base + ".err"
        defer { try? FileManager.default.removeItem(atPath: outPath); try? FileManager.default.removeItem(atPath: errPath) }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "STEWARD_DATABASE_URL")
        for (key, value) in environment { env[key] = value }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([TestEnvironment.stewardBinary] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv { free(p) }; for p in envp { free(p) } }
        var pid: pid_t = 0
        let started = Date()
        let spawned = posix_spawn(&pid, TestEnvironment.stewardBinary, &actions, nil, argv, envp)
        guard spawned == 0 else { throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "posix_spawn: \(spawned)"]) }
        var status: Int32 = 0
        var usage = rusage()
        var timedOut = false
        let deadline = started.addingTimeInterval(timeout)
        var peak = 0
        while true {
            peak = max(peak, highWaterKiB(pid))
            let reaped = wait4(pid, &status, WNOHANG, &usage)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { break }
            if !timedOut && Date() > deadline { timedOut = true; kill(pid, SIGKILL) }
            usleep(5_000)
        }
        let seconds = Date().timeIntervalSince(started)
        let signalled = (status & 0x7f) != 0 && (status & 0x7f) != 0x7f
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return Result(exitCode: signalled ? nil : (status >> 8) & 0xff, signal: signalled ? status & 0x7f : nil,
                      stdout: read(outPath), stderr: read(errPath), seconds: seconds, maxRSSKiB: peak, timedOut: timedOut)
    }
}
