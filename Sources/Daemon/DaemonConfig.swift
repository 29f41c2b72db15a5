import Config

/// `[control]`, `[metrics]` and `[daemon]`: what the long-lived service reads, declared where it is read.
public enum DaemonConfig {
    /// The operators' Unix socket; opened once at start.
    public static let controlSocket = ConfigKey("control", "socket", .absolutePath(shorterThan: 108), default: "/run/steward/control.sock",
                                                takes: "an absolute path shorter than 108 bytes", environment: "STEWARD_CONTROL_SOCKET",
                                                appliesOnReload: false)
    public static let controlSection = ConfigSection("control", keys: [controlSocket])

    /// A Prometheus textfile written atomically (node_exporter's textfile collector), and how often.
    public static let metricsTextfile = ConfigKey("metrics", "textfile", ConfigValueType<String>.absolutePath(suffix: ".prom").optional, default: nil,
                                                  takes: "an absolute path ending in .prom",
                                                  defaultText: "unset (metrics only through steward ctl metrics)")
    public static let metricsInterval = ConfigKey("metrics", "interval", .seconds(1...86400), default: 15, takes: "seconds from 1 to 86400")
    public static let metricsSection = ConfigSection("metrics", keys: [metricsTextfile, metricsInterval])

    /// How often a standby asks for the leader's lock; read at start.
    public static let leaderPoll = ConfigKey("daemon", "leader_poll", .seconds(0.1...60), default: 2, takes: "seconds from 0.1 to 60",
                                             appliesOnReload: false)
    public static let shutdownTimeout = ConfigKey("daemon", "shutdown_timeout", .seconds(0...86400), default: 30, takes: "seconds from 0 to 86400")
    /// This instance's name in history rows and status; read at start.
    public static let host = ConfigKey("daemon", "host", ConfigValueType<String>.nonEmpty.optional, default: nil, takes: "a name for this instance",
                                       defaultText: "the host name", appliesOnReload: false)
    /// Seconds of quiet (no job running, nothing changing) after which the daemon hands back memory it is not using;
    /// 0: never.
    public static let releaseMemoryAfter = ConfigKey("daemon", "release_memory_after", .seconds(0...86400), default: 10,
                                                     takes: "seconds from 0 (never) to 86400")
    public static let daemonSection = ConfigSection("daemon", keys: [leaderPoll, shutdownTimeout, host, releaseMemoryAfter])
}
