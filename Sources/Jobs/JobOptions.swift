import Config
import FoundationEssentials
import Scheduler
import OutputText

/// The job's own keys of one `[job.<name>]` section, each read into its typed value when the section is checked
/// (`JobSettings`), defaults filled in; the job reads them with `options[Self.batchSize]`.
public struct JobOptions: Sendable {
    let job: String
    let section: NamedSection?
    private let values: [String: any Sendable]

    /// How a refusal is worded: the common keys say `"x" is not <what the key takes>`, a job's own keys say what the
    /// form found (`from 1 to 1000`).
    enum ErrorWording { case sayWhatTheKeyTakes, theFormsOwn }

    /// Reads every key `declared` of `section` (set ones from their entries, the rest at their typed defaults); a
    /// refusal throws naming file, line and key.
    init(job: String, declared: [AnyConfigKey], section: NamedSection?, entries: [String: INIFile.Entry], errors: ErrorWording) throws(ConfigError) {
        self.job = job
        self.section = section
        var values: [String: any Sendable] = [:]
        for key in declared {
            guard let entry = entries[key.name], let section else { continue }
            var text = entry.value
            if key.isPath, !text.isEmpty, !text.hasPrefix("/") {
                // A relative path in a file is read relative to that file's folder, wherever Steward was started.
                let folder = section.file.contains("/") ? String(section.file[..<section.file.lastIndex(of: "/")!]) : "."
                text = folder + "/" + text
            }
            switch errors == .theFormsOwn ? key.readPlain(text) : key.readTakes(text) {
            case .success(let value): values[key.name] = value
            case .failure(let problem): throw section.error(entry, problem.message)
            }
        }
        self.values = values
    }

    /// The key's value: as the section sets it, else its default.
    public subscript<Value>(key: ConfigKey<Value>) -> Value {
        guard let value = values[key.name] else { return key.defaultValue }
        return value as? Value ?? key.defaultValue
    }
}

extension ConfigValueType where Value == Int64 {
    /// `90s`, `5m`, `2h`, `3d`: a duration as the keys write it.
    public static func durationText(_ seconds: Int64) -> String { Schedule.describe(seconds) }

    /// A duration such as `10m`, in seconds, within `range` (the scheduler's words for a refusal).
    public static func duration(in range: ClosedRange<Int64>) -> ConfigValueType<Int64> {
        ConfigValueType(parse: { text in
            do throws(ScheduleError) { return .success(try Schedule.seconds(inDuration: text, range: range)) }
            catch { return .failure(ConfigProblem(error.message)) }
        }, describe: { Schedule.describe($0) })
    }

    /// A duration such as `24h`, in seconds; `check` says what is wrong with one (nil: fine); `example` names the form.
    public static func duration(example: String, _ check: @escaping @Sendable (Int64) -> String? = { _ in nil }) -> ConfigValueType<Int64> {
        ConfigValueType(parse: { text in
            guard let seconds = try? Schedule.seconds(inDuration: text) else { return .failure(ConfigProblem("\"\(text)\" is not \(example)", saysAll: false)) }
            if let problem = check(seconds) { return .failure(ConfigProblem(problem, saysAll: false)) }
            return .success(seconds)
        }, describe: { Schedule.describe($0) })
    }
}
