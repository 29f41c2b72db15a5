import FoundationEssentials
import OutputText

/// Text made safe for man(7) roff: escapes, non-ASCII as named code points, no line starting a request.
enum Roff {
    /// One run of prose: backslashes, dashes and non-ASCII characters escaped.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case _ where scalar.value >= 0x80: out += "\\[u" + hex(scalar.value) + "]"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Prose as filled text lines: each line escaped and guarded so none reads as a request.
    static func paragraphs(_ text: String) -> String {
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty {
                if lines.last != ".PP" && !lines.isEmpty { lines.append(".PP") }
                continue
            }
            lines.append("\\&" + escaped(trimmed))
        }
        while lines.last == ".PP" { lines.removeLast() }
        return lines.joined(separator: "\n")
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
