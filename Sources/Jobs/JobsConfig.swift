import Config

/// What the job framework reads outside `[job.NAME]`.
public enum JobsConfig {
    /// Seconds between "job progress" lines while a run lasts (and the live line's pace on a terminal). In `[log]`.
    public static let progressInterval = ConfigKey("log", "progress_interval", .seconds(0.1...3600), default: 5,
                                                   takes: "seconds from 0.1 to 3600 between job progress lines")
}
