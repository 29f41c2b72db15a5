/// A five-field cron expression (`minute hour day-of-month month day-of-week`): lists, ranges, steps,
/// month and day names; `7` is Sunday too. When both day fields are restricted, either may match (as in Vixie cron).
public struct CronExpression: Sendable, Equatable, CustomStringConvertible {
    public let minutes: Set<Int>
    public let hours: Set<Int>
    public let daysOfMonth: Set<Int>
    public let months: Set<Int>
    /// 0 = Sunday … 6 = Saturday.
    public let daysOfWeek: Set<Int>
    let dayOfMonthRestricted: Bool
    let dayOfWeekRestricted: Bool
    /// The text it was parsed from.
    public let source: String

    /// One field's name, range and names.
    struct Field {
        let name: String
        let range: ClosedRange<Int>
        let names: [String: Int]
    }

    static let fields = [
        Field(name: "minute", range: 0...59, names: [:]),
        Field(name: "hour", range: 0...23, names: [:]),
        Field(name: "day of month", range: 1...31, names: [:]),
        Field(name: "month", range: 1...12, names: Dictionary(uniqueKeysWithValues:
            ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"].enumerated().map { ($1, $0 + 1) })),
        Field(name: "day of week", range: 0...7, names: Dictionary(uniqueKeysWithValues:
            ["sun", "mon", "tue", "wed", "thu", "fri", "sat"].enumerated().map { ($1, $0) })),
    ]

    /// Parses five fields; throws `ScheduleError` naming the field and the part that is wrong.
    public init(_ text: String) throws(ScheduleError) {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard parts.count == 5 else {
            throw ScheduleError("\"\(text)\" has \(parts.count) field(s); cron needs 5: minute hour day-of-month month day-of-week")
        }
        var sets: [Set<Int>] = []
        for (field, part) in zip(Self.fields, parts) {
            sets.append(try Self.parse(part, field: field))
        }
        minutes = sets[0]
        hours = sets[1]
        daysOfMonth = sets[2]
        months = sets[3]
        daysOfWeek = Set(sets[4].map { $0 % 7 })
        dayOfMonthRestricted = parts[2] != "*" && parts[2] != "?"
        dayOfWeekRestricted = parts[4] != "*" && parts[4] != "?"
        source = text
        // `0 0 31 4 *` or `0 0 30 2 *` would never run: refuse it rather than schedule nothing silently.
        if dayOfMonthRestricted && !dayOfWeekRestricted, let first = daysOfMonth.min(),
           !months.contains(where: { first <= Self.longestMonth[$0 - 1] }) {
            throw ScheduleError("day of month: no month in \"\(parts[3])\" has day \(first), so \"\(text)\" would never run")
        }
    }

    /// The most days each month can have (February in a leap year).
    static let longestMonth = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

    public var description: String { source }

    /// True when the civil date matches the day fields.
    func matchesDay(day: Int, month: Int, weekday: Int) -> Bool {
        guard months.contains(month) else { return false }
        switch (dayOfMonthRestricted, dayOfWeekRestricted) {
        case (true, true): return daysOfMonth.contains(day) || daysOfWeek.contains(weekday)
        case (true, false): return daysOfMonth.contains(day)
        case (false, true): return daysOfWeek.contains(weekday)
        case (false, false): return true
        }
    }

    private static func parse(_ part: String, field: Field) throws(ScheduleError) -> Set<Int> {
        var values: Set<Int> = []
        for item in part.lowercased().split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = item.split(separator: "/", omittingEmptySubsequences: false)
            guard pieces.count <= 2, !pieces[0].isEmpty else { throw ScheduleError("\(field.name): \"\(item)\" is not a value, range or step") }
            var step = 1
            if pieces.count == 2 {
                guard let s = Int(pieces[1]), s > 0 else { throw ScheduleError("\(field.name): step \"\(pieces[1])\" must be a positive number") }
                step = s
            }
            let range: ClosedRange<Int>
            if pieces[0] == "*" || pieces[0] == "?" {
                range = field.range
            } else if let dash = pieces[0].firstIndex(of: "-") {
                let low = try value(pieces[0][..<dash], field: field)
                let high = try value(pieces[0][pieces[0].index(after: dash)...], field: field)
                guard low <= high else { throw ScheduleError("\(field.name): range \"\(pieces[0])\" runs backwards") }
                range = low...high
            } else {
                let v = try value(pieces[0], field: field)
                range = v...(pieces.count == 2 ? field.range.upperBound : v)
            }
            values.formUnion(stride(from: range.lowerBound, through: range.upperBound, by: step))
        }
        return values
    }

    private static func value(_ text: Substring, field: Field) throws(ScheduleError) -> Int {
        if let named = field.names[String(text)] { return named }
        guard let v = Int(text), field.range.contains(v) else {
            throw ScheduleError("\(field.name): \"\(text)\" is outside \(field.range.lowerBound)–\(field.range.upperBound)"
                                + (field.names.isEmpty ? "" : " (or a name such as \(field.names.keys.sorted().prefix(3).joined(separator: ", ")))"))
        }
        return v
    }
}

/// A schedule that cannot be understood, with the reason.
public struct ScheduleError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
