import FoundationEssentials

/// Instants as Steward prints them: RFC 3339 in UTC, to the second (`2026-11-30T14:21:10Z`).
public enum ISODate {
    public static func string(_ date: Date) -> String {
        date.ISO8601Format()
    }
}
