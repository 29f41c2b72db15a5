import Foundation

/// When a job runs: a cron expression in a time zone, or a fixed interval aligned to the wall clock.
public struct Schedule: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case cron(CronExpression)
        /// Every `seconds`, at multiples of it since 1970-01-01 UTC (so all instances agree on the slots).
        case every(Int64)
    }

    let kind: Kind
    /// The zone cron fields are read in.
    public let timeZone: TimeZone
    /// The text it was parsed from.
    public let source: String

    /// Parses `0 3 * * *`, `@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`, or `@every 90s` / `5m` / `1h30m` / `1d`.
    public init(_ text: String, timeZone: String = "UTC") throws(ScheduleError) {
        guard let zone = TimeZone(identifier: timeZone) else {
            throw ScheduleError("unknown time zone \"\(timeZone)\" (use an IANA name such as Europe/Berlin)")
        }
        self.timeZone = zone
        self.source = text
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch trimmed.lowercased() {
        case "@hourly": kind = .cron(try CronExpression("0 * * * *"))
        case "@daily", "@midnight": kind = .cron(try CronExpression("0 0 * * *"))
        case "@weekly": kind = .cron(try CronExpression("0 0 * * 0"))
        case "@monthly": kind = .cron(try CronExpression("0 0 1 * *"))
        case "@yearly", "@annually": kind = .cron(try CronExpression("0 0 1 1 *"))
        case let s where s.hasPrefix("@every"):
            let seconds = try Self.duration(String(s.dropFirst(6)).trimmingCharacters(in: .whitespaces))
            guard seconds >= 1 else { throw ScheduleError("@every needs at least 1s") }
            kind = .every(seconds)
        case let s where s.hasPrefix("@"):
            throw ScheduleError("unknown shortcut \"\(trimmed)\" (known: @hourly, @daily, @weekly, @monthly, @yearly, @every <duration>)")
        default:
            kind = .cron(try CronExpression(trimmed))
        }
    }

    public var description: String {
        timeZone.identifier == "UTC" || timeZone.identifier == "GMT" ? source : "\(source) (\(timeZone.identifier))"
    }

    /// The first slot strictly after `date`. A wall time skipped by a DST jump fires at the jump;
    /// a wall time that occurs twice fires at its first occurrence only.
    public func next(after date: Date) -> Date {
        let after = Int64(date.timeIntervalSince1970.rounded(.down))
        switch kind {
        case .every(let interval):
            return Date(timeIntervalSince1970: TimeInterval((after.floorDivided(by: interval) + 1) * interval))
        case .cron(let cron):
            var local = CivilTime(seconds: after + Int64(timeZone.secondsFromGMT(for: date)) + 60)
            for _ in 0..<100_000 {
                guard let candidate = Self.nextMatch(cron, from: local) else { break }
                if let instant = instant(ofWallTime: candidate.seconds), instant > after {
                    return Date(timeIntervalSince1970: TimeInterval(instant))
                }
                local = CivilTime(seconds: candidate.seconds + 60)
            }
            return .distantFuture
        }
    }

    /// Every slot in `(from, to]`, at most `limit` of them.
    public func slots(after from: Date, upTo to: Date, limit: Int = 1000) -> [Date] {
        var slots: [Date] = []
        var cursor = from
        while slots.count < limit {
            let slot = next(after: cursor)
            if slot > to { break }
            slots.append(slot)
            cursor = slot
        }
        return slots
    }

    /// The earliest instant whose local time is `wall` seconds; in a DST gap, the instant of the jump.
    func instant(ofWallTime wall: Int64) -> Int64? {
        let offsets = Set([-43200, 43200].map { Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(wall + Int64($0))))) })
        let valid = offsets.map { wall - $0 }.filter {
            Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval($0)))) == wall - $0
        }
        if let first = valid.min() { return first }
        // Skipped by a jump forward: fire when the clock jumps.
        let before = wall - (offsets.max() ?? 0)
        return timeZone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: TimeInterval(before - 1)))
            .map { Int64($0.timeIntervalSince1970) }
    }

    /// The first wall time at or after `start` that matches `cron`, jumping whole months, days and hours.
    static func nextMatch(_ cron: CronExpression, from start: CivilTime) -> CivilTime? {
        var t = start
        for _ in 0..<20_000 {
            if t.year > start.year + 8 { return nil }
            if !cron.months.contains(t.month) {
                t = t.month == 12 ? CivilTime(year: t.year + 1, month: 1, day: 1, hour: 0, minute: 0)
                                  : CivilTime(year: t.year, month: t.month + 1, day: 1, hour: 0, minute: 0)
                continue
            }
            if !cron.matchesDay(day: t.day, month: t.month, weekday: t.weekday) {
                t = CivilTime(seconds: CivilTime(year: t.year, month: t.month, day: t.day, hour: 0, minute: 0).seconds + 86400)
                continue
            }
            if !cron.hours.contains(t.hour) {
                t = CivilTime(seconds: CivilTime(year: t.year, month: t.month, day: t.day, hour: t.hour, minute: 0).seconds + 3600)
                continue
            }
            if !cron.minutes.contains(t.minute) {
                t = CivilTime(seconds: t.seconds + 60)
                continue
            }
            return t
        }
        return nil
    }

    /// Seconds in a duration written as `90s`, `5m`, `1h30m`, `2d` (a sum of number-unit pairs).
    public static func seconds(inDuration text: String) throws(ScheduleError) -> Int64 { try duration(text) }

    static func duration(_ text: String) throws(ScheduleError) -> Int64 {
        var total: Int64 = 0
        var number = ""
        var sawUnit = false
        for c in text {
            if c.isNumber { number.append(c); continue }
            let unit: Int64
            switch c {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3600
            case "d": unit = 86400
            default: throw ScheduleError("duration \"\(text)\": unknown unit \"\(c)\" (use s, m, h, d)")
            }
            guard let n = Int64(number) else { throw ScheduleError("duration \"\(text)\": a unit needs a number before it") }
            total += n * unit
            number = ""
            sawUnit = true
        }
        guard number.isEmpty, sawUnit else { throw ScheduleError("duration \"\(text)\" needs a unit: 90s, 5m, 1h30m, 1d") }
        return total
    }
}
