/// A place in a migration file: `file:line:column`, both 1-based.
public struct SourceLocation: Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let line: Int
    public let column: Int

    /// The location of the scalar at `offset` (0-based) in `text`.
    init(file: String, text: String, offset: Int) {
        var line = 1, column = 1, index = 0
        for scalar in text.unicodeScalars {
            if index == offset { break }
            if scalar == "\n" { line += 1; column = 1 } else { column += 1 }
            index += 1
        }
        self.file = file
        self.line = line
        self.column = column
    }

    /// The location of scalar `offset` given the scalar offsets where each line starts (ascending, first 0).
    init(file: String, lineStarts: [Int], offset: Int) {
        var low = 0, high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        self.file = file
        self.line = low + 1
        self.column = offset - (lineStarts.isEmpty ? 0 : lineStarts[low]) + 1
    }

    public var description: String { "\(file):\(line):\(column)" }
}
