#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import FoundationEssentials
#endif
import TimeZones

/// Reads and writes `timestamptz` text (`DateStyle` ISO, any `TimeZone`): `2026-12-01 22:26:07.123456+05:30`.
enum PostgresTimestamp {
    /// The instant `text` names; nil for anything else (another `DateStyle`, no offset, `infinity`).
    static func parse(_ text: String) -> Date? {
        var bytes = Array(text.utf8)[...]
        var bc = false
        if bytes.count > 3, bytes.suffix(3).elementsEqual(" BC".utf8) { bc = true; bytes = bytes.dropLast(3) }
        func number(_ minDigits: Int, _ maxDigits: Int) -> Int? {
            var value = 0, digits = 0
            while let b = bytes.first, b >= 0x30, b <= 0x39, digits < maxDigits {
                value = value * 10 + Int(b - 0x30); digits += 1; bytes = bytes.dropFirst()
            }
            return digits >= minDigits ? value : nil
        }
        func expect(_ c: UInt8) -> Bool {
            guard bytes.first == c else { return false }
            bytes = bytes.dropFirst(); return true
        }
        guard var year = number(4, 7), expect(0x2D), let month = number(2, 2), expect(0x2D), let day = number(2, 2),
              expect(0x20) || expect(0x54), let hour = number(2, 2), expect(0x3A), let minute = number(2, 2),
              expect(0x3A), let second = number(2, 2) else { return nil }
        var fraction = 0.0
        if expect(0x2E) {
            var value = 0, scale = 1
            while let b = bytes.first, b >= 0x30, b <= 0x39, scale < 1_000_000_000 {
                value = value * 10 + Int(b - 0x30); scale *= 10; bytes = bytes.dropFirst()
            }
            if scale == 1 { return nil }
            fraction = Double(value) / Double(scale)
        }
        var offset = 0
        if expect(0x5A) {
            offset = 0
        } else {
            guard let sign = bytes.first, sign == 0x2B || sign == 0x2D else { return nil }
            bytes = bytes.dropFirst()
            guard let h = number(2, 2) else { return nil }
            var m = 0, s = 0
            if expect(0x3A) { guard let v = number(2, 2) else { return nil }; m = v }
            if expect(0x3A) { guard let v = number(2, 2) else { return nil }; s = v }
            offset = (h * 3600 + m * 60 + s) * (sign == 0x2D ? -1 : 1)
        }
        guard bytes.isEmpty, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        if bc { year = 1 - year }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// `date` in UTC as ISO 8601 with microseconds.
    static func render(_ date: Date) -> String {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded(.down)
        guard micros.isFinite, abs(micros) < 9e18 else { return date.timeIntervalSince1970 < 0 ? "-infinity" : "infinity" }
        let total = Int64(micros)
        let (secondsTotal, microsPart) = total.quotientAndRemainder(dividingBy: 1_000_000)
        var seconds = Int(secondsTotal), fraction = Int(microsPart)
        if fraction < 0 { fraction += 1_000_000; seconds -= 1 }
        var days = seconds / 86_400, rest = seconds % 86_400
        if rest < 0 { rest += 86_400; days -= 1 }
        let (year, month, day) = civilFromDays(days)
        func pad(_ v: Int, _ width: Int) -> String { let s = String(v); return String(repeating: "0", count: max(0, width - s.count)) + s }
        let yearText = year > 0 ? pad(year, 4) : pad(1 - year, 4)
        let text = "\(yearText)-\(pad(month, 2))-\(pad(day, 2))T\(pad(rest / 3600, 2)):\(pad(rest / 60 % 60, 2)):\(pad(rest % 60, 2)).\(pad(fraction, 6))Z"
        return year > 0 ? text : text + " BC"
    }

    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int { CivilDate.days(year: year, month: month, day: day) }

    static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) { CivilDate.civil(days: days) }
}
