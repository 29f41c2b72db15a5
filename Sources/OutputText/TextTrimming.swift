/// Trimming of blank characters at the ends of text: the one implementation, over characters or scalars alike.
public enum TrimmedEnds: Sendable {
    case both, start, end
}

extension BidirectionalCollection {
    /// The elements between the leading and trailing runs that `blank` accepts (only the ends `ends` names).
    public func trimmed(_ ends: TrimmedEnds = .both, while blank: (Element) throws -> Bool) rethrows -> SubSequence {
        var start = startIndex, end = endIndex
        if ends != .end { while start < end, try blank(self[start]) { formIndex(after: &start) } }
        if ends != .start {
            while start < end {
                let last = index(before: end)
                guard try blank(self[last]) else { break }
                end = last
            }
        }
        return self[start..<end]
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (Unicode space separators and U+0009); with
    /// `newlines`, line breaks (U+000A–U+000D, U+0085, U+2028, U+2029) go too. Scalar by scalar, as config values,
    /// lists and answers are read.
    public func trimmingWhitespace(newlines: Bool = false) -> String {
        trimmingScalars { s in
            if s == "\t" || s.properties.generalCategory == .spaceSeparator { return true }
            return newlines && ((0x0A...0x0D).contains(s.value) || s.value == 0x85 || s.value == 0x2028 || s.value == 0x2029)
        }
    }

    /// The text without the scalars `blank` accepts at the ends `ends` names.
    public func trimmingScalars(_ ends: TrimmedEnds = .both, while blank: (Unicode.Scalar) -> Bool) -> String {
        String(String.UnicodeScalarView(unicodeScalars.trimmed(ends, while: blank)))
    }

    /// The text without the characters of `set` at the ends `ends` names (characters, so `"\r\n"` is one).
    public func trimming(in set: String, _ ends: TrimmedEnds = .both) -> String {
        String(trimmed(ends) { set.contains($0) })
    }
}
