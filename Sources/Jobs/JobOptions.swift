import Config
import FoundationEssentials
import Scheduler
import OutputText

/// The job's own keys of one `[job.<name>]` section, defaults filled in, read into typed values by the job once.
/// Every reader throws naming file, line and key (or the job and key for a bad default).
public struct JobOptions: Sendable {
    /// Why a value is refused, in words.
    public struct Problem: Error, Sendable {
        public let message: String
        public init(_ message: String) { self.message = message }
    }

    let job: String
    let section: JobSection?
    let entries: [String: INIFile.Entry]
    let values: [String: String]

    init(job: String, section: JobSection?, entries: [String: INIFile.Entry], values: [String: String]) {
        self.job = job
        self.section = section
        self.entries = entries
        self.values = values
    }

    /// The value of `key` as written (its default when not configured; a relative path made relative to the file).
    public func string(_ key: String) -> String { values[key] ?? "" }

    /// The value of `key` read by `parse`; a refusal throws naming the key.
    public func read<T>(_ key: String, _ parse: (String) -> Result<T, Problem>) throws(ConfigError) -> T {
        switch parse(string(key)) {
        case .success(let value): return value
        case .failure(let problem): throw error(key, problem.message)
        }
    }

    /// A comma-separated list, items trimmed, empty items dropped.
    public func list(_ key: String) -> [String] {
        Self.items(string(key))
    }

    /// A whole number within `range`.
    public func integer(_ key: String, in range: ClosedRange<Int>) throws(ConfigError) -> Int {
        try read(key) { value in
            guard let number = Int(value) else { return .failure(Problem("not a whole number")) }
            guard range.contains(number) else {
                return .failure(Problem(range.upperBound == Int.max ? "at least \(range.lowerBound)" : "from \(range.lowerBound) to \(range.upperBound)"))
            }
            return .success(number)
        }
    }

    /// A number within `range`.
    public func number(_ key: String, in range: ClosedRange<Double>) throws(ConfigError) -> Double {
        try read(key) { value in
            guard let number = Double(value) else { return .failure(Problem("not a number")) }
            guard range.contains(number) else { return .failure(Problem("from \(Self.plain(range.lowerBound)) to \(Self.plain(range.upperBound))")) }
            return .success(number)
        }
    }

    /// One of `choices`.
    public func choice(_ key: String, _ choices: [String]) throws(ConfigError) -> String {
        try read(key) { value in
            choices.contains(value) ? .success(value) : .failure(Problem(choices.joined(separator: " or ")))
        }
    }

    /// A duration such as `24h` in seconds, `check` saying what is wrong with it (nil: fine); `example` names the form.
    public func duration(_ key: String, example: String, _ check: (Int64) -> String?) throws(ConfigError) -> Int64 {
        try read(key) { value in
            guard let seconds = try? Schedule.seconds(inDuration: value) else { return .failure(Problem("\"\(value)\" is not \(example)")) }
            if let problem = check(seconds) { return .failure(Problem(problem)) }
            return .success(seconds)
        }
    }

    /// An error about `key`: at its line when the section sets it, else naming the job and key (a bad default).
    public func error(_ key: String, _ message: String) -> ConfigError {
        if let section, let entry = entries[key] { return section.error(entry, message) }
        return ConfigError(file: section?.file ?? "(defaults)", key: "[job.\(job)] \(key)", message: message)
    }

    /// `a, b,,c` as `["a", "b", "c"]`.
    public static func items(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
    }

    /// `0` and `1` for whole numbers, else the number as Swift prints it.
    static func plain(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}
