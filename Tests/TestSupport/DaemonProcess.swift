import Foundation

/// A real `steward run` process with its own config file and control socket, for one test.
public final class DaemonProcess: @unchecked Sendable {
    public let configPath: String
    public let socketPath: String
    public let process: StewardProcess.Running
    public let host: String

    /// Starts `steward run` against `databaseURL` with `config` appended to a generated `[control]`/`[daemon]` part
    /// (the socket in the temporary folder unless `socketPath` names one).
    public init(databaseURL: String, host: String = "test-\(UInt16.random(in: 0...UInt16.max))", config: String = "",
                environment: [String: String] = [:], leaderPoll: Double = 0.5, socketPath: String? = nil, shutdownTimeout: Int = 5) throws {
        let id = UInt32.random(in: 0...UInt32.max)
        self.host = host
        configPath = NSTemporaryDirectory() + "steward-\(id).ini"
        self.socketPath = socketPath ?? NSTemporaryDirectory() + "steward-\(id).sock"
        try Self.configText(databaseURL: databaseURL, socket: self.socketPath, host: host, leaderPoll: leaderPoll, extra: config,
                            shutdownTimeout: shutdownTimeout)
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        process = try StewardProcess.start(["run", "--config", configPath, "--log-level", "debug"], environment: environment)
    }

    deinit {
        if process.process.isRunning { process.kill(SIGKILL) }
        try? FileManager.default.removeItem(atPath: configPath)
    }

    /// `steward ctl <words…>` against this daemon.
    public func ctl(_ words: [String], json: Bool = false) throws -> StewardProcess.Result {
        try StewardProcess.run(["ctl"] + words + ["--socket", socketPath] + (json ? ["--json"] : []), timeout: 60)
    }

    /// `steward ctl <words…> --json` against this daemon, started in the background (for a reply that takes a while).
    public func startCtl(_ words: [String]) throws -> StewardProcess.Running {
        try StewardProcess.start(["ctl"] + words + ["--socket", socketPath, "--json"])
    }

    /// Whether `ctl jobs` says a run of `job` is going on (nil when the daemon did not answer).
    public func isRunning(job: String) -> Bool? {
        guard let jobs = (try? ctlJSON(["jobs"]))?["jobs"] as? [[String: Any]] else { return nil }
        return jobs.first { $0["name"] as? String == job }?["running"] as? Bool
    }

    /// The daemon's JSON reply to `words`, decoded.
    public func ctlJSON(_ words: [String]) throws -> [String: Any] {
        let result = try ctl(words, json: true)
        return (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
    }

    /// Waits until the daemon answers `status` with `leader` equal to `leader` (nil: any answer).
    @discardableResult
    public func waitUntil(leader: Bool?, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let reply = try? ctlJSON(["status"]), reply["ok"] as? Bool == true {
                if leader == nil || reply["leader"] as? Bool == leader { return true }
            }
            usleep(100_000)
        }
        // Said once on failure, so a timeout under load can be told from a daemon that never led.
        FileHandle.standardError.write(Data("daemon \(host) not \(leader.map { $0 ? "leader" : "follower" } ?? "answering") after \(timeout) s; its log ends:\n\(String(process.stderrSoFar.suffix(3000)))\n".utf8))
        return false
    }

    /// Rewrites the config file (for reload tests), keeping the generated part.
    public func rewrite(extra config: String, databaseURL: String) throws {
        try Self.configText(databaseURL: databaseURL, socket: socketPath, host: host, leaderPoll: 0.5, extra: config)
            .write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// The generated config: the database, the project's migrations, this daemon's socket and host, then `extra`.
    static func configText(databaseURL: String, socket: String, host: String, leaderPoll: Double, extra: String,
                           shutdownTimeout: Int = 5) -> String {
        """
        [database]
        url = \(databaseURL)
        [migrations]
        dir = \(TestEnvironment.migrationsDirectory)
        [control]
        socket = \(socket)
        [daemon]
        host = \(host)
        leader_poll = \(leaderPoll)
        shutdown_timeout = \(shutdownTimeout)
        \(extra)
        """
    }

    /// SIGTERM, then the exit and the output.
    public func stop(timeout: Double = 20) -> StewardProcess.Result {
        process.kill(SIGTERM)
        return process.wait(timeout: timeout)
    }
}
