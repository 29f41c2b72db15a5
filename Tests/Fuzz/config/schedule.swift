// fuzz-modules: OutputText TimeZones Scheduler
import Foundation
import Scheduler

/// libFuzzer entry: `schedule|time zone` text → durations, cron expressions, shortcuts, zone names, the next slots.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parts = text.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    let schedule = parts[0]
    let zone = parts.count > 1 ? parts[1] : "UTC"
    _ = try? Schedule.seconds(inDuration: schedule)
    _ = try? CronExpression(schedule)
    if let parsed = try? Schedule(schedule, timeZone: zone) {
        var date = Date(timeIntervalSince1970: 1_764_547_200)
        for _ in 0..<3 {
            let next = parsed.next(after: date)
            if next <= date { fatalError("an accepted schedule gave a slot that is not later") }
            date = next
        }
        _ = parsed.description
    }
    return 0
}
