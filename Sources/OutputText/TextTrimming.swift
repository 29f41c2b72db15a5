/// Trimming of blank characters at both ends, as Steward reads config values, lists and answers.
extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (Unicode space separators and U+0009); with
    /// `newlines`, line breaks (U+000A–U+000D, U+0085, U+2028, U+2029) go too.
    public func trimmingWhitespace(newlines: Bool = false) -> String {
        func blank(_ s: Unicode.Scalar) -> Bool {
            if s == "\t" || s.properties.generalCategory == .spaceSeparator { return true }
            return newlines && ((0x0A...0x0D).contains(s.value) || s.value == 0x85 || s.value == 0x2028 || s.value == 0x2029)
        }
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !blank($0) }), let last = scalars.lastIndex(where: { !blank($0) }) else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}
