/// Calendar arithmetic on wall-clock seconds (seconds since 1970-01-01 00:00 of a local clock), proleptic Gregorian.
struct CivilTime: Equatable {
    var year: Int, month: Int, day: Int, hour: Int, minute: Int

    /// 0 = Sunday.
    var weekday: Int { Self.weekday(days: Self.days(year: year, month: month, day: day)) }

    init(year: Int, month: Int, day: Int, hour: Int, minute: Int) {
        (self.year, self.month, self.day, self.hour, self.minute) = (year, month, day, hour, minute)
    }

    /// The wall-clock time at `seconds` (floored to the minute).
    init(seconds: Int64) {
        let days = Int(seconds.floorDivided(by: 86400))
        let rest = Int(seconds - Int64(days) * 86400)
        let (y, m, d) = Self.civil(days: days)
        self.init(year: y, month: m, day: d, hour: rest / 3600, minute: rest % 3600 / 60)
    }

    /// Wall-clock seconds of this time.
    var seconds: Int64 {
        Int64(Self.days(year: year, month: month, day: day)) * 86400 + Int64(hour * 3600 + minute * 60)
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    static func civil(days: Int) -> (Int, Int, Int) {
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    static func weekday(days: Int) -> Int { ((days % 7) + 11) % 7 }
}

extension Int64 {
    func floorDivided(by d: Int64) -> Int64 { self >= 0 ? self / d : -((-self + d - 1) / d) }
}
