/// Hostile HTTP answers from a seeded generator: broken status lines, Retry-After in every wrong form, lengths that
/// lie, JSON with numbers past Int64 or Double, deep nesting, invalid UTF-8 and control characters.
public struct HostileAnswers {
    private var random: SeededGenerator
    public init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    public mutating func next() -> UInt64 { random.next() }

    public mutating func pick<T>(_ items: [T]) -> T { items[Int(next() % UInt64(items.count))] }

    public mutating func answer() -> [UInt8] {
        let status = next() % 2 == 0
            ? pick(["HTTP/1.1 429 Too Many Requests", "HTTP/1.1 503 Unavailable", "HTTP/1.1 500 x"])
            : pick(["HTTP/1.1 200 OK", "HTTP/1.1 400 Bad Request", "HTTP/1.1 999 What", "HTTP/1.1 204 No Content", "HTTP/1.0 200", "HTTP/1.1 20",
                    "HTTP/1.1 -1 x", "HTTP/1.1 200 \u{1B}[31m", "garbage", ""])
        // Values a server may send that are not a wait (valid long waits are left to the property test: they only slow a run down).
        let retryAfter = next() % 3 != 0
            ? pick(["nan", "NaN", "inf", "-inf", "-1", "1e400", "1e300", "-0", "0x10", "1.5", "", " ", "\u{7F}", "\u{FEFF}0", "0, 0",
                    "Mon, 32 Foo 2024 25:61:61 GMT", "18446744073709551616.5"])
            : pick(["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "0", "1", " 0 "])
        let body = pick(["[]", "[{\"name\": 1e400}]", "[{\"name\": \"o1.jpeg\", \"bucket_id\": 18446744073709551616}]",
                         "[{\"name\": \"o1.jpeg\", \"metadata\": {\"size\": -9.3e18}}]", "{\"statusCode\": 1e400, \"message\": -0.5, \"error\": 18446744073709551617}",
                         "{\"statusCode\": \"429\", \"message\": \"\\u0000\\n\\r\\u001b[2J\"}", "{\"statusCode\": 404.5}", "NaN", "-", "1e99999",
                         String(repeating: "[", count: 5000), String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
                         "{\"external_apple_enabled\": 1e400, \"external_apple_secret\": 18446744073709551616, \"external_apple_client_id\": []}",
                         "{\"external_apple_secret\": \"\\ud800\"}", "\"just a string\"", "null", ""])
        var lines = [status]
        if next() % 5 != 0 { lines.append("Retry-After: \(retryAfter)") }
        if next() % 4 == 0 { lines.append("Retry-After: \(pick(["nan", "0", "-5"]))") }
        if next() % 2 == 0 { lines.append("Content-Type: \(pick(["application/json", "text/html", "application/json; charset=\u{1}"]))") }
        var bodyBytes = Array(body.utf8)
        if next() % 6 == 0 { bodyBytes += [0xFF, 0xFE, 0xC3, 0x28, 0xED, 0xA0, 0x80] }
        switch next() % 10 {
        case 0: lines.append("Content-Length: \(bodyBytes.count + Int(next() % 50) + 1)")       // says more than comes
        case 1: lines.append("Content-Length: \(pick(["-1", "nan", "18446744073709551616", "abc"]))")
        case 2: lines.append("Transfer-Encoding: chunked"); bodyBytes = Array("\(pick(["zz", "ffffffffffffffffff", "-1", "5"]))\r\n".utf8) + bodyBytes
        default: lines.append("Content-Length: \(bodyBytes.count)")
        }
        if next() % 5 == 0 { lines.append(pick(["X-Bad", ": empty name", "X-Long: " + String(repeating: "a", count: 9000), "X-Ctl: a\u{0}b"])) }
        lines.append("Connection: close")
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8) + bodyBytes
    }
}
