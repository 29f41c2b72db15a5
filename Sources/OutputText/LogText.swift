/// Makes outside text safe for one log line: every control character and line break becomes a visible escape.
public enum LogText {
    /// `text` with C0 controls, DEL, C1 controls (NEL included), U+2028, U+2029 and the bidi overrides escaped,
    /// scalar by scalar (`\n`, `\r`, `\t`, `\\`, else `\u{XXXX}`), so no value can start a new journal line or hide text.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0) || $0 == "\\" }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out.append(contentsOf: "\\n".unicodeScalars)
            case "\r": out.append(contentsOf: "\\r".unicodeScalars)
            case "\t": out.append(contentsOf: "\\t".unicodeScalars)
            case "\\": out.append(contentsOf: "\\\\".unicodeScalars)
            case _ where needsEscape(scalar): out.append(contentsOf: hexEscape(scalar).unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    /// True for scalars that must never reach a log line raw: controls, line and paragraph separators, bidi overrides.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x2028, 0x2029: true
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        case 0xFEFF: true
        default: false
        }
    }

    /// `\u{XXXX}`, at least four hex digits.
    static func hexEscape(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "\\u{" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "}"
    }
}
