/// A POSIX `TZ` rule (`CET-1CEST,M3.5.0,M10.5.0/3`, `<+03>-3`), as in the footer of a TZif file: the zone's
/// local time for instants past the file's table of transitions.
public struct POSIXZoneRule: Sendable, Equatable {
    /// When daylight saving time starts or ends within a year.
    enum Day: Sendable, Equatable {
        /// `Jn`: day 1–365 of the year, February 29 never counted.
        case julian(Int)
        /// `n`: day 0–365 of the year, February 29 counted.
        case zeroBased(Int)
        /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (1–5, 5 = the last) of month `m`.
        case monthWeekDay(month: Int, week: Int, weekday: Int)
    }

    /// One switch of a year: the day and the local wall-clock seconds into it (−167 h … 167 h).
    struct Switch: Sendable, Equatable {
        let day: Day
        let time: Int
    }

    let standard: LocalTimeType
    let daylight: LocalTimeType?
    let start: Switch?
    let end: Switch?

    /// The rule `text` states; `nil` for an empty text; an error saying what is wrong otherwise.
    public init?(_ text: String) throws(TimeZoneError) {
        if text.isEmpty { return nil }
        var parser = Parser(bytes: Array(text.utf8))
        try parser.name()
        let stdOffset = try parser.offset(maxHours: 24)
        standard = LocalTimeType(utcOffset: -stdOffset, isDaylightSaving: false)
        if parser.atEnd {
            daylight = nil; start = nil; end = nil
            return
        }
        try parser.name()
        var dstOffset = stdOffset - 3600
        if let b = parser.peek, b != UInt8(ascii: ",") { dstOffset = try parser.offset(maxHours: 24) }
        daylight = LocalTimeType(utcOffset: -dstOffset, isDaylightSaving: true)
        if parser.atEnd {
            // POSIX leaves the default rule to the implementation; the C library uses the United States' one.
            start = Switch(day: .monthWeekDay(month: 3, week: 2, weekday: 0), time: 7200)
            end = Switch(day: .monthWeekDay(month: 11, week: 1, weekday: 0), time: 7200)
            return
        }
        try parser.expect(UInt8(ascii: ","))
        start = try parser.switchRule()
        try parser.expect(UInt8(ascii: ","))
        end = try parser.switchRule()
        guard parser.atEnd else { throw TimeZoneError("unexpected text after the end rule") }
    }

    /// The local time type in force at `instant` (seconds since 1970-01-01 UTC). As the C library does, the
    /// switches are those of the instant's UTC year: daylight time between start and end, or outside end…start
    /// when the end comes first in the year.
    public func localTimeType(at instant: Int64) -> LocalTimeType {
        guard let daylight, daylight != standard, let start, let end else { return standard }
        let t = Self.clamp(instant)
        let year = Self.utcYear(of: t)
        let s = Self.instant(of: start, year: year, offset: standard.utcOffset)
        let e = Self.instant(of: end, year: year, offset: daylight.utcOffset)
        let inDaylight = s > e ? (t < e || t >= s) : (t >= s && t < e)
        return inDaylight ? daylight : standard
    }

    /// The first instant after `instant` at which the UTC offset changes; nil for a zone without daylight time.
    public func nextChange(after instant: Int64) -> Int64? {
        guard let daylight, daylight.utcOffset != standard.utcOffset, let start, let end else { return nil }
        let t = Self.clamp(instant)
        let year = Self.utcYear(of: t)
        var candidates: [Int64] = []
        for y in (year - 1)...(year + 2) {
            candidates.append(Self.instant(of: start, year: y, offset: standard.utcOffset))
            candidates.append(Self.instant(of: end, year: y, offset: daylight.utcOffset))
            candidates.append(Int64(CivilDate.days(year: y, month: 1, day: 1)) * 86_400)
        }
        for c in candidates.sorted() where c > t {
            if localTimeType(at: c).utcOffset != localTimeType(at: c - 1).utcOffset { return c }
        }
        return nil
    }

    private static func clamp(_ instant: Int64) -> Int64 { max(-TimeZoneRules.instantLimit, min(TimeZoneRules.instantLimit, instant)) }

    private static func utcYear(of instant: Int64) -> Int { CivilDate.civil(days: Int(CivilDate.floorDivide(instant, by: 86_400))).year }

    private static func instant(of rule: Switch, year: Int, offset: Int) -> Int64 {
        let first = CivilDate.days(year: year, month: 1, day: 1)
        let day: Int
        switch rule.day {
        case .julian(let n): day = first + n - 1 + (CivilDate.isLeapYear(year) && n >= 60 ? 1 : 0)
        case .zeroBased(let n): day = first + n
        case .monthWeekDay(let month, let week, let weekday):
            let monthStart = CivilDate.days(year: year, month: month, day: 1)
            var d = 1 + (weekday - CivilDate.weekday(days: monthStart) + 7) % 7 + 7 * (week - 1)
            while d > CivilDate.daysInMonth(year: year, month: month) { d -= 7 }
            day = monthStart + d - 1
        }
        return Int64(day) * 86_400 + Int64(rule.time) - Int64(offset)
    }

    /// Reads the parts of a rule, front to back.
    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }
        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func expect(_ byte: UInt8) throws(TimeZoneError) {
            guard peek == byte else { throw TimeZoneError("expected \"\(Character(Unicode.Scalar(byte)))\" at byte \(index + 1)") }
            index += 1
        }

        /// A zone abbreviation: three or more letters, or `<…>` of letters, digits, `+` and `-`.
        mutating func name() throws(TimeZoneError) {
            let begin = index
            if peek == UInt8(ascii: "<") {
                index += 1
                while let b = peek, b != UInt8(ascii: ">") {
                    guard Self.isAlphanumeric(b) || b == UInt8(ascii: "+") || b == UInt8(ascii: "-") else {
                        throw TimeZoneError("bad character in the zone name at byte \(index + 1)")
                    }
                    index += 1
                }
                guard peek == UInt8(ascii: ">"), index - begin - 1 >= 3 else { throw TimeZoneError("bad quoted zone name at byte \(begin + 1)") }
                index += 1
            } else {
                while let b = peek, Self.isLetter(b) { index += 1 }
                guard index - begin >= 3 else { throw TimeZoneError("zone name of at least three letters expected at byte \(begin + 1)") }
            }
        }

        /// `[+|-]hh[:mm[:ss]]` as seconds, hours at most `maxHours`.
        mutating func offset(maxHours: Int) throws(TimeZoneError) -> Int {
            let begin = index
            var sign = 1
            if peek == UInt8(ascii: "+") { index += 1 } else if peek == UInt8(ascii: "-") { sign = -1; index += 1 }
            guard let hours = number(maxDigits: 3), hours <= maxHours else { throw TimeZoneError("bad hours at byte \(begin + 1)") }
            var seconds = hours * 3600
            for scale in [60, 1] {
                guard peek == UInt8(ascii: ":") else { break }
                index += 1
                guard let part = number(maxDigits: 2), part < 60 else { throw TimeZoneError("bad minutes or seconds at byte \(index + 1)") }
                seconds += part * scale
            }
            return sign * seconds
        }

        /// `Jn`, `n` or `Mm.w.d`, then an optional `/time` (default 02:00).
        mutating func switchRule() throws(TimeZoneError) -> Switch {
            let begin = index
            let day: Day
            if peek == UInt8(ascii: "J") {
                index += 1
                guard let n = number(maxDigits: 3), (1...365).contains(n) else { throw TimeZoneError("bad Jn day at byte \(begin + 1)") }
                day = .julian(n)
            } else if peek == UInt8(ascii: "M") {
                index += 1
                guard let m = number(maxDigits: 2), (1...12).contains(m) else { throw TimeZoneError("bad month at byte \(begin + 1)") }
                try expect(UInt8(ascii: "."))
                guard let w = number(maxDigits: 1), (1...5).contains(w) else { throw TimeZoneError("bad week at byte \(begin + 1)") }
                try expect(UInt8(ascii: "."))
                guard let d = number(maxDigits: 1), (0...6).contains(d) else { throw TimeZoneError("bad weekday at byte \(begin + 1)") }
                day = .monthWeekDay(month: m, week: w, weekday: d)
            } else {
                guard let n = number(maxDigits: 3), (0...365).contains(n) else { throw TimeZoneError("bad day at byte \(begin + 1)") }
                day = .zeroBased(n)
            }
            var time = 7200
            if peek == UInt8(ascii: "/") {
                index += 1
                time = try offset(maxHours: 167)
            }
            return Switch(day: day, time: time)
        }

        mutating func number(maxDigits: Int) -> Int? {
            var value = 0, digits = 0
            while let b = peek, b >= 0x30, b <= 0x39, digits < maxDigits {
                value = value * 10 + Int(b - 0x30)
                digits += 1
                index += 1
            }
            return digits > 0 ? value : nil
        }

        static func isLetter(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) }
        static func isAlphanumeric(_ b: UInt8) -> Bool { isLetter(b) || (b >= 0x30 && b <= 0x39) }
    }
}
