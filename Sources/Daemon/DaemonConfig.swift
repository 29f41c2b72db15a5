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
    /// The label `project="<name>"` on every metric, so the daemons of many projects (steward@.service sets it to the
    /// instance name) share one set of rules; unset, the metrics carry no project label.
    public static let metricsProject = ConfigKey("metrics", "project", ConfigValueType<String>.nonEmpty.checked { isProjectLabel($0) ? nil : .form("a project name") }.optional,
                                                 default: nil,
                                                 takes: "a project name for the label project=\"…\" on every metric (letters, digits, . _ - @, at most 128)",
                                                 defaultText: "unset (no project label; steward@.service sets it to the instance name)",
                                                 environment: "STEWARD_PROJECT")
    public static let metricsSection = ConfigSection("metrics", keys: [metricsTextfile, metricsInterval, metricsProject])

    /// A label value that needs no escaping in Prometheus' text format and reads as a name (as systemd instance names do).
    static func isProjectLabel(_ value: String) -> Bool {
        value.utf8.count <= 128 && value.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || Array(".-_@".utf8).contains(byte)
        }
    }

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
