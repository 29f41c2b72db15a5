import Foundation

/// Instants as Steward prints them: RFC 3339 in UTC, to the second (`2026-11-30T14:21:10Z`).
public enum ISODate {
    /// `date` in UTC, to the millisecond nearest and then the second below it (as Foundation's ISO 8601 formatter
    /// prints it); computed from the epoch seconds, with no calendar or locale data loaded.
    public static func string(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        // Beyond ±10^15 s the Double has no whole seconds left; such dates only come from corrupt input.
        guard milliseconds.isFinite, abs(milliseconds) < 1e18 else { return milliseconds < 0 ? "-infinity" : "infinity" }
        var seconds = Int(milliseconds) / 1000
        if Int(milliseconds) % 1000 < 0 { seconds -= 1 }
        var days = seconds / 86_400
        seconds %= 86_400
        if seconds < 0 { seconds += 86_400; days -= 1 }
        let (year, month, day) = civil(days)
        var text = year < 0 ? "-" : ""
        text += pad(abs(year), 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
        text += pad(seconds / 3600, 2) + ":" + pad(seconds / 60 % 60, 2) + ":" + pad(seconds % 60, 2) + "Z"
        return text
    }

    /// The proleptic Gregorian (year, month, day) of a count of days since 1970-01-01.
    static func civil(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
