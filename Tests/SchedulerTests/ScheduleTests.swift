import Foundation
import Scheduler
import Testing

/// `2026-03-29T00:30:00Z` → Date.
func utc(_ text: String) -> Date {
    let f = ISO8601DateFormatter()
    f.formatOptions = [.withInternetDateTime]
    return f.date(from: text)!
}

func iso(_ date: Date) -> String {
    let f = ISO8601DateFormatter()
    f.formatOptions = [.withInternetDateTime]
    return f.string(from: date)
}

@Suite("cron expressions and schedules")
struct ScheduleTests {
    @Test("fields: lists, ranges, steps, names, Sunday as 0 or 7")
    func parsing() throws {
        let cron = try CronExpression("*/15 9-17/4 1,15 jan-mar,dec mon-fri")
        #expect(cron.minutes == [0, 15, 30, 45])
        #expect(cron.hours == [9, 13, 17])
        #expect(cron.daysOfMonth == [1, 15])
        #expect(cron.months == [1, 2, 3, 12])
        #expect(cron.daysOfWeek == [1, 2, 3, 4, 5])
        #expect(try CronExpression("0 0 * * 7").daysOfWeek == [0])
        #expect(try CronExpression("5/20 * * * *").minutes == [5, 25, 45])
    }

    @Test("mistakes are named by field", arguments: [
        ("* * * *", "has 4 field(s)"),
        ("60 * * * *", "minute: \"60\" is outside 0–59"),
        ("* 5-2 * * *", "hour: range \"5-2\" runs backwards"),
        ("* * * foo *", "month: \"foo\" is outside 1–12"),
        ("*/0 * * * *", "minute: step \"0\" must be a positive number"),
        ("@fortnightly", "unknown shortcut"),
        ("@every 5", "needs a unit"),
        ("@every 5w", "unknown unit"),
        ("0 0 31 4 *", "would never run"),
        ("0 0 30 2 *", "would never run"),
        ("@every 99999999999999d", "longer than"),
        ("@every 367d", "at most 366d"),
    ])
    func errors(text: String, message: String) {
        let error = #expect(throws: ScheduleError.self) { try Schedule(text) }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
    }

    @Test("an unknown time zone is refused")
    func badZone() {
        #expect(throws: ScheduleError.self) { try Schedule("@daily", timeZone: "Mars/Olympus") }
    }

    @Test("next slots: strictly after, across month ends and leap days")
    func nextSlots() throws {
        #expect(iso(try Schedule("0 3 * * *").next(after: utc("2026-11-30T03:00:00Z"))) == "2026-12-01T03:00:00Z")
        #expect(iso(try Schedule("0 3 * * *").next(after: utc("2026-11-30T02:59:59Z"))) == "2026-11-30T03:00:00Z")
        #expect(iso(try Schedule("0 0 29 2 *").next(after: utc("2026-03-01T00:00:00Z"))) == "2028-02-29T00:00:00Z")
        #expect(iso(try Schedule("@monthly").next(after: utc("2026-12-15T10:00:00Z"))) == "2027-01-01T00:00:00Z")
        #expect(iso(try Schedule("@weekly").next(after: utc("2026-11-30T10:00:00Z"))) == "2026-12-06T00:00:00Z")
        #expect(iso(try Schedule("30 * * * *").next(after: utc("2026-11-30T23:45:00Z"))) == "2026-12-01T00:30:00Z")
    }

    @Test("both day fields restricted: either matches (Vixie semantics)")
    func dayOrDay() throws {
        // The 13th, or any Friday: 2026-12-04 is a Friday before the 13th.
        #expect(iso(try Schedule("0 12 13 * fri").next(after: utc("2026-12-01T00:00:00Z"))) == "2026-12-04T12:00:00Z")
    }

    @Test("@every is aligned to the wall clock, not to process start")
    func every() throws {
        let s = try Schedule("@every 5m")
        #expect(iso(s.next(after: utc("2026-11-30T10:02:13Z"))) == "2026-11-30T10:05:00Z")
        #expect(iso(try Schedule("@every 1h30m").next(after: utc("2026-11-30T10:02:13Z"))) == "2026-11-30T10:30:00Z")
    }

    @Test("time zones: 03:00 in Berlin is 02:00 UTC in winter, 01:00 in summer")
    func zones() throws {
        let s = try Schedule("0 3 * * *", timeZone: "Europe/Berlin")
        #expect(iso(s.next(after: utc("2026-12-01T00:00:00Z"))) == "2026-12-01T02:00:00Z")
        #expect(iso(s.next(after: utc("2026-07-01T00:00:00Z"))) == "2026-07-01T01:00:00Z")
    }

    @Test("DST gap: a wall time the clock skips fires once, when the clock jumps")
    func gap() throws {
        // Berlin, 2026-03-29: 02:00 CET jumps to 03:00 CEST at 01:00 UTC.
        let s = try Schedule("30 2 * * *", timeZone: "Europe/Berlin")
        #expect(iso(s.next(after: utc("2026-03-28T12:00:00Z"))) == "2026-03-29T01:00:00Z")
        #expect(iso(s.next(after: utc("2026-03-29T01:00:00Z"))) == "2026-03-30T00:30:00Z")
        // Several skipped slots collapse into one run at the jump.
        let quarter = try Schedule("*/15 2 * * *", timeZone: "Europe/Berlin")
        #expect(quarter.slots(after: utc("2026-03-29T00:00:00Z"), upTo: utc("2026-03-29T02:00:00Z")).map(iso) == ["2026-03-29T01:00:00Z"])
        // New York, 2026-03-08: 02:00 EST jumps to 03:00 EDT at 07:00 UTC.
        let ny = try Schedule("15 2 * * *", timeZone: "America/New_York")
        #expect(iso(ny.next(after: utc("2026-03-08T00:00:00Z"))) == "2026-03-08T07:00:00Z")
    }

    @Test("DST repeat: a wall time that occurs twice fires at its first occurrence only")
    func repeatHour() throws {
        // Berlin, 2026-10-25: 03:00 CEST falls back to 02:00 CET at 01:00 UTC; 02:30 happens at 00:30 and 01:30 UTC.
        let s = try Schedule("30 2 * * *", timeZone: "Europe/Berlin")
        let slots = s.slots(after: utc("2026-10-24T12:00:00Z"), upTo: utc("2026-10-26T12:00:00Z"))
        #expect(slots.map(iso) == ["2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"])
        let hourly = try Schedule("0 * * * *", timeZone: "Europe/Berlin")
        let around = hourly.slots(after: utc("2026-10-24T23:30:00Z"), upTo: utc("2026-10-25T02:30:00Z"))
        #expect(around.map(iso) == ["2026-10-25T00:00:00Z", "2026-10-25T02:00:00Z"])
    }

    @Test("slots between two instants, for catching up after downtime")
    func slotsBetween() throws {
        let s = try Schedule("0 */6 * * *")
        #expect(s.slots(after: utc("2026-11-30T01:00:00Z"), upTo: utc("2026-11-30T18:00:00Z")).map(iso)
                == ["2026-11-30T06:00:00Z", "2026-11-30T12:00:00Z", "2026-11-30T18:00:00Z"])
        #expect(s.slots(after: utc("2026-01-01T00:00:00Z"), upTo: utc("2026-12-31T00:00:00Z"), limit: 10).count == 10)
    }
}
