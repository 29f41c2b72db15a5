import TimeZones

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

    static func daysInMonth(year: Int, month: Int) -> Int { CivilDate.daysInMonth(year: year, month: month) }

    /// Days since 1970-01-01.
    static func days(year: Int, month: Int, day: Int) -> Int { CivilDate.days(year: year, month: month, day: day) }

    static func civil(days: Int) -> (Int, Int, Int) { CivilDate.civil(days: days) }

    static func weekday(days: Int) -> Int { CivilDate.weekday(days: days) }
}
extension Int64 {
    func floorDivided(by d: Int64) -> Int64 { CivilDate.floorDivide(self, by: d) }
}
