/// Emits log events: a fixed message plus structured metadata, under a label naming the part of Steward.
public struct Logger: Sendable {
    /// The part of Steward speaking (`migrations`, `postgres`, …).
    public let label: String
    /// Metadata added to every event of this logger.
    public var metadata: [(String, String)]
    private let sink: LogSink

    /// A logger writing to `sink` under `label`.
    public init(label: String, sink: LogSink, metadata: [(String, String)] = []) {
        self.label = label
        self.sink = sink
        self.metadata = metadata
    }

    /// A logger that writes nothing (for tests and library defaults).
    public static let silent = Logger(label: "silent", sink: LogSink(minimumLevel: .critical, fd: -1))

    /// The same sink under another label.
    public func named(_ label: String) -> Logger { Logger(label: label, sink: sink, metadata: metadata) }

    /// Shows `text` as a live line below the log (terminals only; see `LogSink.setStatusLine`); nil erases it.
    public func setStatusLine(_ text: String?) { sink.setStatusLine(text) }

    /// Writes one event at `level`.
    public func log(_ level: LogLevel, _ message: String, _ metadata: [(String, String)] = []) {
        sink.write(level: level, label: label, message: message, metadata: self.metadata + metadata)
    }

    public func debug(_ message: String, _ metadata: [(String, String)] = []) { log(.debug, message, metadata) }
    public func info(_ message: String, _ metadata: [(String, String)] = []) { log(.info, message, metadata) }
    public func notice(_ message: String, _ metadata: [(String, String)] = []) { log(.notice, message, metadata) }
    public func warning(_ message: String, _ metadata: [(String, String)] = []) { log(.warning, message, metadata) }
    public func error(_ message: String, _ metadata: [(String, String)] = []) { log(.error, message, metadata) }
    public func critical(_ message: String, _ metadata: [(String, String)] = []) { log(.critical, message, metadata) }
}
