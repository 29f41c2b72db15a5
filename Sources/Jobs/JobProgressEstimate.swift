import OutputText
import StewardJSON

/// What a progress snapshot says about the rest of its phase: rate and time left, computed without trapping on any
/// numbers (zero, negative, huge or not-a-number elapsed time all give nil or bounded values).
public struct JobProgressEstimate: Sendable, Equatable {
    /// The phase this estimate is of.
    public let phase: String
    public let done: Int64
    public let total: Int64?
    /// Seconds since the phase began, at least 0.
    public let elapsedSeconds: Double
    /// Items a second over the phase so far; nil before any time passed.
    public let ratePerSecond: Double?
    /// Seconds left at that rate; nil without a total or a rate above 0. At most ten years.
    public let etaSeconds: Double?
    /// `done / total` in 0...1, nil without a total.
    public let ratio: Double?

    /// The longest time left an estimate states (ten years).
    public static let maximumSeconds: Double = 315_360_000

    /// The estimate of `snapshot` at `now`.
    public init(_ snapshot: JobProgress.Snapshot, now: ContinuousClock.Instant = .now) {
        let elapsed = now - snapshot.phaseStarted
        self.init(phase: snapshot.phase, done: snapshot.done, total: snapshot.total,
                  elapsedSeconds: elapsed / .seconds(1))
    }

    /// The estimate of `done` of `total` after `elapsedSeconds`.
    public init(phase: String, done: Int64, total: Int64?, elapsedSeconds: Double) {
        self.phase = phase
        self.done = max(0, done)
        self.total = total.map { max(0, $0) }
        let elapsed = elapsedSeconds.isFinite ? min(max(0, elapsedSeconds), Self.maximumSeconds) : 0
        self.elapsedSeconds = elapsed
        let rate: Double? = elapsed > 0 ? Double(self.done) / elapsed : nil
        self.ratePerSecond = rate.flatMap { $0.isFinite ? $0 : nil }
        if let total = self.total {
            self.ratio = total > 0 ? min(1, Double(self.done) / Double(total)) : 1
            let remaining = max(0, Double(total) - Double(self.done))
            if remaining == 0 {
                self.etaSeconds = 0
            } else if let rate = self.ratePerSecond, rate > 0 {
                let eta = remaining / rate
                self.etaSeconds = eta.isFinite ? min(eta, Self.maximumSeconds) : Self.maximumSeconds
            } else {
                self.etaSeconds = nil
            }
        } else {
            self.ratio = nil
            self.etaSeconds = nil
        }
    }

    /// Log metadata: phase, done, total, rate per second and eta seconds ("-" where unknown).
    public var metadata: [(String, String)] {
        [("phase", phase), ("done", String(done)), ("total", total.map(String.init) ?? "-"),
         ("rate_per_s", ratePerSecond.map { Self.decimal($0, places: 1) } ?? "-"),
         ("eta_s", etaSeconds.map { String(Int64($0.rounded())) } ?? "-")]
    }

    /// The estimate as the control socket's `jobs` answer gives it.
    public var json: JSON {
        .object([("phase", .string(phase)), ("done", .number(Double(done))), ("total", total.map { .number(Double($0)) } ?? .null),
                 ("ratio", ratio.map { .number($0) } ?? .null), ("rate_per_s", ratePerSecond.map { .number($0) } ?? .null),
                 ("eta_s", etaSeconds.map { .number($0.rounded()) } ?? .null), ("phase_seconds", .number(elapsedSeconds))])
    }

    /// One short line for a terminal: `deleting 1200/5000 (24.0%) 310/s, 12s left`.
    public var line: String {
        var text = phase + " " + String(done)
        if let total { text += "/" + String(total) }
        if let ratio { text += " (" + Self.decimal(ratio * 100, places: 1) + "%)" }
        if let ratePerSecond { text += " " + Self.decimal(ratePerSecond, places: ratePerSecond < 10 ? 1 : 0) + "/s" }
        if let etaSeconds { text += ", " + Self.duration(etaSeconds) + " left" }
        return text
    }

    /// `value` with `places` decimals (0...3), as `String(fixed:digits:)` writes it; `-` for values that are not
    /// numbers and `huge` / `-huge` past what Int64 holds, never trapped on.
    static func decimal(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "-" }
        let places = min(max(places, 0), 3)
        var scale: Double = 1
        for _ in 0..<places { scale *= 10 }
        guard (abs(value) * scale).rounded() < 9e18 else { return value < 0 ? "-huge" : "huge" }
        return String(fixed: value, digits: places)
    }

    /// `4h 02m`, `12m 30s`, `45s` for a bounded number of seconds.
    static func duration(_ seconds: Double) -> String {
        let total = seconds.isFinite ? Int64(min(max(0, seconds), maximumSeconds).rounded()) : 0
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        if h > 0 { return "\(h)h \(two(m))m" }
        if m > 0 { return "\(m)m \(two(s))s" }
        return "\(s)s"
    }
}
