#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import OutputText
import StewardJSON
import FileSystem


/// Where log events go: one line each on standard error, as text or JSON.
public final class LogSink: Sendable {
    /// The line format.
    public enum Format: String, Sendable {
        /// Readable text: `time level label: message key=value …`.
        case text
        /// One JSON object a line, for log shippers.
        case json
    }

    /// The minimum level written.
    public let minimumLevel: LogLevel
    /// The line format.
    public let format: Format
    private let journald: Bool
    private let fd: Int32
    /// Serialises writes; holds the live status line shown under the log on a terminal, if any.
    private let lock = Mutex<String?>(nil)

    /// A sink writing to `fd` (standard error by default); `<N>` priority prefixes when journald reads it.
    public init(minimumLevel: LogLevel = .info, format: Format = .text, fd: Int32 = 2, journald: Bool? = nil) {
        self.minimumLevel = minimumLevel
        self.format = format
        self.fd = fd
        self.journald = journald ?? (getenv("JOURNAL_STREAM") != nil)
    }

    /// Writes one event, if its level passes the minimum.
    public func write(level: LogLevel, label: String, message: String, metadata: [(String, String)]) {
        guard level >= minimumLevel else { return }
        var line = journald ? "<\(level.syslogPriority)>" : ""
        switch format {
        case .text:
            if !journald { line += Self.timestamp() + " " }
            line += "\(level.name) \(LogText.escaped(label)): \(LogText.escaped(SecretRedactor.redact(message)))"
            for (key, value) in metadata { line += " \(LogText.escaped(key))=\(Self.quoteIfNeeded(SecretRedactor.redact(value)))" }
        case .json:
            var fields = [("time", Self.timestamp()), ("level", level.name), ("logger", label), ("message", message)]
            fields += metadata.map { ($0.0, SecretRedactor.redact($0.1)) }
            fields[3].1 = SecretRedactor.redact(message)
            line += "{" + fields.map { "\(JSONText.quote($0.0)):\(JSONText.quote($0.1))" }.joined(separator: ",") + "}"
        }
        line += "\n"
        lock.withLock { status in
            // A live line is wiped, the event written, and the line drawn again below it.
            if let status { line = Self.clearLine + line + status }
            FileDescriptorWriter.write(line, to: fd)
        }
    }

    /// Erases the terminal line the cursor is on.
    static let clearLine = "\r\u{1B}[2K"

    /// Draws `text` as one live line (no newline) that later events keep below them; nil erases it. For terminals only.
    public func setStatusLine(_ text: String?) {
        let text = text.map { LogText.escaped($0) }
        lock.withLock { status in
            guard status != nil || text != nil else { return }
            status = text
            FileDescriptorWriter.write(Self.clearLine + (text ?? ""), to: fd)
        }
    }

    /// A metadata value for text lines: JSON-quoted when it holds spaces, quotes, `=` or anything `LogText` escapes.
    static func quoteIfNeeded(_ value: String) -> String {
        if value.isEmpty || value.unicodeScalars.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" || LogText.needsEscape($0) }) {
            return JSONText.quote(value)
        }
        return value
    }

    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        let millis = now.tv_nsec / 1_000_000
        func pad(_ v: Int32, _ w: Int = 2) -> String { let s = String(v); return String(repeating: "0", count: max(0, w - s.count)) + s }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec)).\(pad(Int32(millis), 3))Z"
    }
}
