import OutputText
import StewardJSON

/// A fleet command's result as one text table (a row per target) and as JSON (`{"targets": [...], ...}`).
public struct FleetTable: Sendable {
    public let columns: [String]
    public var rows: [[String]] = []

    public init(columns: [String]) { self.columns = columns }

    public mutating func add(_ cells: [String]) { rows.append(cells) }

    /// Columns padded to their widest cell; values from databases and configs are escaped as log lines are, so a
    /// name or an error cannot break the table.
    public var text: String {
        let escaped = rows.map { $0.map { LogText.escaped($0) } }
        var widths = columns.map(\.count)
        for row in escaped { for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) } }
        func line(_ cells: [String]) -> String {
            var text = ""
            for (index, cell) in cells.enumerated() {
                let last = index == cells.count - 1
                text += last ? cell : cell + String(repeating: " ", count: widths[index] - cell.count + 2)
            }
            return text + "\n"
        }
        return line(columns) + escaped.map(line).joined()
    }
}

/// How one target's run ended, in words for the table and JSON.
public enum FleetResult: String, Sendable {
    case applied
    case upToDate = "up-to-date"
    case dryRun = "dry-run"
    case ok
    case drift
    case failed
    case unreachable
    case notStarted = "not-started"
}

/// The stderr line after each target of a rollout: `fleet: 12/30 done, 1 failed (t07: failed)`.
extension FleetRunner.Progress {
    public var line: String {
        "fleet: \(done)/\(total) done, \(failed) failed (\(last): \(lastOutcome == .succeeded ? "ok" : lastOutcome == .failed ? "failed" : "unreachable"))"
    }
}
