/// Postgres' text form of one-dimensional arrays (`{a,"b c",NULL}`).
enum PostgresArrayText {
    /// Renders `elements` with every element double-quoted and escaped.
    static func render(_ elements: [String]) -> String {
        "{" + elements.map { "\"" + $0.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\"" }
            .joined(separator: ",") + "}"
    }

    /// Parses a one-dimensional array literal; nil when it is not one. NULL elements are nil.
    static func parse(_ text: String) -> [String?]? {
        var chars = Array(text)
        guard chars.first == "{", chars.last == "}" else { return nil }
        chars = Array(chars.dropFirst().dropLast())
        if chars.isEmpty { return [] }
        var elements: [String?] = []
        var current = ""
        var quoted = false, inQuotes = false, escape = false
        for c in chars {
            if escape { current.append(c); escape = false; continue }
            switch c {
            case "\\" where inQuotes: escape = true
            case "\"": inQuotes.toggle(); quoted = true
            case "," where !inQuotes:
                elements.append(!quoted && current == "NULL" ? nil : current)
                current = ""; quoted = false
            default: current.append(c)
            }
        }
        if inQuotes { return nil }
        elements.append(!quoted && current == "NULL" ? nil : current)
        return elements
    }
}
