import OutputText

/// JSON string quoting without Foundation's encoder, for log lines and hand-built replies.
public enum JSONText {
    /// `value` as a JSON string literal, quotes included; controls, DEL, C1, U+2028/2029 and bidi overrides are `\u` escapes.
    public static func quote(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where LogText.needsEscape(scalar):
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
