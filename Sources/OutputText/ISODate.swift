#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials

/// Instants as Steward prints them: RFC 3339 in UTC, to the second (`2026-11-30T14:21:10Z`).
public enum ISODate {
    /// `date` in UTC, to the millisecond nearest and then the second below it (as Foundation's ISO 8601 formatter
    /// prints it), from the C library's `gmtime_r` (no formatter, no calendar or locale data: cheap enough for every
    /// answer of the control socket). Instants no calendar can hold print as `infinity` / `-infinity`.
    public static func string(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        // Beyond ±10^15 s the Double has no whole seconds left; such dates only come from corrupt input.
        guard milliseconds.isFinite, abs(milliseconds) < 1e18 else { return milliseconds < 0 ? "-infinity" : "infinity" }
        let whole = Int64(milliseconds)
        var seconds = time_t(whole >= 0 ? whole / 1000 : (whole - 999) / 1000)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return whole < 0 ? "-infinity" : "infinity" }
        let year = Int(parts.tm_year) + 1900
        return (year < 0 ? "-" : "") + pad(abs(year), 4) + "-" + pad(Int(parts.tm_mon) + 1, 2) + "-" + pad(Int(parts.tm_mday), 2)
            + "T" + pad(Int(parts.tm_hour), 2) + ":" + pad(Int(parts.tm_min), 2) + ":" + pad(Int(parts.tm_sec), 2) + "Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
