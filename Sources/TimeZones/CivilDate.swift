/// Proleptic Gregorian calendar arithmetic on days since 1970-01-01 (astronomical years: 0 is 1 BC).
public enum CivilDate {
    /// Days since 1970-01-01 of `year`-`month`-`day` (month 1–12; days past the month's end roll over).
    public static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date `days` after 1970-01-01.
    public static func civil(days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The weekday of `days` since 1970-01-01, 0 = Sunday.
    public static func weekday(days: Int) -> Int { ((days % 7) + 11) % 7 }

    /// Whether `year` has a February 29.
    public static func isLeapYear(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    /// Days in `month` (1–12) of `year`.
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// `value` divided by a positive `divisor`, rounded towards minus infinity.
    public static func floorDivide(_ value: Int64, by divisor: Int64) -> Int64 {
        let q = value / divisor
        return value % divisor < 0 ? q - 1 : q
    }
}
