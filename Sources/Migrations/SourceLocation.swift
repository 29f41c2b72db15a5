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

    public var description: String { "\(file):\(line):\(column)" }
}
