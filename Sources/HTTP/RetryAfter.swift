#if canImport(Glibc)
import Glibc
#endif

/// A server's `Retry-After` header read as RFC 9110 defines it: delta-seconds (digits only) or an HTTP-date
/// (IMF-fixdate, RFC 850 or asctime form). Anything else is not a value: `seconds` is nil and the caller ignores it.
public enum RetryAfter {
    /// The longest wait a server can ask for; longer values are cut to this.
    public static let maximumSeconds = 300.0

    /// Seconds to wait from `now` (seconds since 1970), between 0 and `maximumSeconds`; nil when `value` is neither form.
    public static func seconds(_ value: String, now: Double? = nil) -> Double? {
        let trimmed = value.utf8.drop { $0 == 0x20 || $0 == 0x09 }
        var text = Array(trimmed)
        while let last = text.last, last == 0x20 || last == 0x09 { text.removeLast() }
        guard !text.isEmpty else { return nil }
        if text.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // Leading zeros are allowed; only the value matters, and anything past the maximum is the maximum.
            var seconds = 0.0
            for digit in text {
                seconds = seconds * 10 + Double(digit - 0x30)
                if seconds > maximumSeconds { return maximumSeconds }
            }
            return seconds
        }
        guard let date = httpDate(text) else { return nil }
        let current = now ?? Double(time(nil))
        return min(max(date - current, 0), maximumSeconds)
    }

    /// An HTTP-date as seconds since 1970, or nil.
    static func httpDate(_ bytes: [UInt8]) -> Double? {
        guard bytes.count <= 64, let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        let weekdays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        let words = text.split { $0 == " " || $0 == "," }.map(String.init)
        func number(_ s: Substring, digits: ClosedRange<Int>) -> Int? {
            guard digits.contains(s.count), s.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(s)
        }
        func clock(_ s: String) -> (Int, Int, Int)? {
            let parts = s.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3, let h = number(parts[0], digits: 2...2), let m = number(parts[1], digits: 2...2),
                  let sec = number(parts[2], digits: 2...2), h < 24, m < 60, sec <= 60 else { return nil }
            return (h, m, sec)
        }
        guard let first = words.first, weekdays.contains(first.lowercased()) else { return nil }
        if words.count == 6, words[5] == "GMT" {
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            guard let d = number(Substring(words[1]), digits: 2...2), let m = months.firstIndex(of: words[2].lowercased()),
                  let y = number(Substring(words[3]), digits: 4...4) else { return nil }
            return assemble(day: d, month: m, year: y, time: clock(words[4]))
        } else if words.count == 4, words[3] == "GMT" {
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            let parts = words[1].split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, let d = number(parts[0], digits: 1...2), let m = months.firstIndex(of: parts[1].lowercased()),
                  let y = number(parts[2], digits: 2...2) else { return nil }
            return assemble(day: d, month: m, year: y < 70 ? 2000 + y : 1900 + y, time: clock(words[2]))
        } else if words.count == 5 {
            // asctime: Sun Nov  6 08:49:37 1994
            guard let m = months.firstIndex(of: words[1].lowercased()), let d = number(Substring(words[2]), digits: 1...2),
                  let y = number(Substring(words[4]), digits: 4...4) else { return nil }
            return assemble(day: d, month: m, year: y, time: clock(words[3]))
        }
        return nil
    }

    private static func assemble(day: Int, month: Int, year: Int, time: (Int, Int, Int)?) -> Double? {
        guard let (h, m, s) = time, (1...31).contains(day), (1900...9999).contains(year) else { return nil }
        // Days from the civil date (proleptic Gregorian), without the C library's time zone state.
        let civilMonth = month + 1   // 1 = January
        let y = civilMonth <= 2 ? year - 1 : year
        let era = y / 400
        let yoe = y - era * 400
        let mp = (civilMonth + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return Double(days * 86_400 + h * 3600 + m * 60 + s)
    }
}
