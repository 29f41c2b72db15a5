import FoundationEssentials
import TimeZones
import OutputText

/// When a job runs: a cron expression in a time zone, or a fixed interval aligned to the wall clock.
public struct Schedule: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case cron(CronExpression)
        /// Every `seconds`, at multiples of it since 1970-01-01 UTC (so all instances agree on the slots).
        case every(Int64)
    }

    let kind: Kind
    /// The zone cron fields are read in.
    public let timeZone: TimeZoneRules
    /// The text it was parsed from.
    public let source: String

    /// Parses `0 3 * * *`, `@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`, or `@every 90s` / `5m` / `1h30m` / `1d`.
    public init(_ text: String, timeZone: String = "UTC") throws(ScheduleError) {
        guard Self.isPlausibleZoneName(timeZone) else {
            throw ScheduleError("unknown time zone \"\(timeZone)\" (use an IANA name such as Europe/Berlin)")
        }
        do {
            self.timeZone = try TimeZoneRules(identifier: timeZone)
        } catch {
            throw ScheduleError("\(error.description) (use an IANA name such as Europe/Berlin)")
        }
        self.source = text
        let trimmed = text.trimmingWhitespace()
        switch trimmed.lowercased() {
        case "@hourly": kind = .cron(try CronExpression("0 * * * *"))
        case "@daily", "@midnight": kind = .cron(try CronExpression("0 0 * * *"))
        case "@weekly": kind = .cron(try CronExpression("0 0 * * 0"))
        case "@monthly": kind = .cron(try CronExpression("0 0 1 * *"))
        case "@yearly", "@annually": kind = .cron(try CronExpression("0 0 1 1 *"))
        case let s where s.hasPrefix("@every"):
            let seconds = try Self.duration(String(s.dropFirst(6)).trimmingWhitespace())
            guard seconds >= 1 else { throw ScheduleError("@every needs at least 1s") }
            guard seconds <= 366 * 86400 else { throw ScheduleError("@every takes at most 366d") }
            kind = .every(seconds)
        case let s where s.hasPrefix("@"):
            throw ScheduleError("unknown shortcut \"\(trimmed)\" (known: @hourly, @daily, @weekly, @monthly, @yearly, @every <duration>)")
        default:
            kind = .cron(try CronExpression(trimmed))
        }
    }

    /// An IANA-shaped name (`Europe/Berlin`, `UTC`, `Etc/GMT+5`): ASCII letters, digits, `/ _ - +`, at most 64
    /// bytes, no empty or dot segments; checked before the name reaches the time zone database.
    static func isPlausibleZoneName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 64 else { return false }
        guard name.utf8.allSatisfy({ b in
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x2F || b == 0x5F || b == 0x2D || b == 0x2B
        }) else { return false }
        return name.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
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
            var local = CivilTime(seconds: after + Int64(timeZone.secondsFromGMT(at: after)) + 60)
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
        let offsets = Set([-43200, 43200].map { Int64(timeZone.secondsFromGMT(at: wall + Int64($0))) })
        let valid = offsets.map { wall - $0 }.filter { Int64(timeZone.secondsFromGMT(at: $0)) == wall - $0 }
        if let first = valid.min() { return first }
        // Skipped by a jump forward: fire when the clock jumps.
        let before = wall - (offsets.max() ?? 0)
        return timeZone.nextTransition(after: before - 1)
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

    /// The longest duration any key takes: ten years (so seconds × 1000 or × 1e9 never overflows downstream).
    public static let maximumDurationSeconds: Int64 = 10 * 366 * 86400

    /// Seconds in a duration written as `90s`, `5m`, `1h30m`, `2d` (a sum of number-unit pairs, ASCII digits),
    /// at most `maximumDurationSeconds`; never traps, whatever the text.
    public static func seconds(inDuration text: String) throws(ScheduleError) -> Int64 { try duration(text) }

    /// Seconds in a duration, refused outside `range` with a message naming the range.
    public static func seconds(inDuration text: String, range: ClosedRange<Int64>) throws(ScheduleError) -> Int64 {
        let seconds = try duration(text)
        guard range.contains(seconds) else {
            throw ScheduleError("duration \"\(text)\" is outside \(describe(range.lowerBound))–\(describe(range.upperBound))")
        }
        return seconds
    }

    /// `90s`, `5m`, `2h`, `3d` for a number of seconds (the largest unit that divides it).
    public static func describe(_ seconds: Int64) -> String {
        if seconds > 0, seconds % 86400 == 0 { return "\(seconds / 86400)d" }
        if seconds > 0, seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        if seconds > 0, seconds % 60 == 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }

    static func duration(_ text: String) throws(ScheduleError) -> Int64 {
        let shown = String(text.unicodeScalars.prefix(40).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
        func tooLong() -> ScheduleError { ScheduleError("duration \"\(shown)\" is longer than \(maximumDurationSeconds / 86400)d") }
        var total: Int64 = 0
        var number: Int64?
        var sawUnit = false
        for c in text.unicodeScalars {
            if c.value >= 0x30 && c.value <= 0x39 {
                let digit = Int64(c.value - 0x30)
                let (times10, o1) = (number ?? 0).multipliedReportingOverflow(by: 10)
                let (next, o2) = times10.addingReportingOverflow(digit)
                guard !o1, !o2, next <= maximumDurationSeconds else { throw tooLong() }
                number = next
                continue
            }
            let unit: Int64
            switch c {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3600
            case "d": unit = 86400
            default: throw ScheduleError("duration \"\(shown)\": unknown unit \"\(c.value < 0x20 || c.value == 0x7F ? "?" : String(c))\" (use s, m, h, d)")
            }
            guard let n = number else { throw ScheduleError("duration \"\(shown)\": a unit needs a number before it") }
            let (part, o1) = n.multipliedReportingOverflow(by: unit)
            let (sum, o2) = total.addingReportingOverflow(part)
            guard !o1, !o2, sum <= maximumDurationSeconds else { throw tooLong() }
            total = sum
            number = nil
            sawUnit = true
        }
        guard number == nil, sawUnit else { throw ScheduleError("duration \"\(shown)\" needs a unit: 90s, 5m, 1h30m, 1d") }
        return total
    }
}
