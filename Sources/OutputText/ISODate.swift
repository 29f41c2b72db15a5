#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Instants as Steward prints them: RFC 3339 in UTC, to the second (`2026-11-30T14:21:10Z`).
public enum ISODate {
    /// The instant rounded down to the second, in UTC, from the C library (no formatter, no ICU: cheap enough
    /// for every answer of the control socket). Instants outside years 0–9999 are written as the nearest of those.
    public static func string(_ date: Date) -> String {
        let limit = 253_402_300_799.0   // 9999-12-31T23:59:59Z
        let value = date.timeIntervalSince1970
        // To the millisecond first, then down to the second, as Foundation's formatter does.
        let milliseconds = Int64((value.isNaN ? 0 : min(max(value, -62_167_219_200), limit) * 1000).rounded())
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return "1970-01-01T00:00:00Z" }
        func pad(_ v: Int32, _ width: Int = 2) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec))Z"
    }
}
