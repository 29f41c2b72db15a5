import Foundation
import Testing
import TestSupport
import TimeZones

/// The zone reader against the C library's own answers (`TZ=… date`), on every zone of the system's tzdata.
@Suite("time zones from the system's tzdata")
struct TimeZoneRulesTests {
    static let zoneDirectory = "/usr/share/zoneinfo"

    /// Every TZif file under /usr/share/zoneinfo (the `posix/` and `right/` copies left out: `right/` counts leap seconds).
    static func systemZones() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: zoneDirectory)
        var zones: [String] = []
        while let name = enumerator?.nextObject() as? String {
            if name.hasPrefix("posix") || name.hasPrefix("right") { continue }
            guard let handle = FileHandle(forReadingAtPath: zoneDirectory + "/" + name) else { continue }
            let magic = (try? handle.read(upToCount: 4)) ?? Data()
            try? handle.close()
            if magic == Data("TZif".utf8) { zones.append(name) }
        }
        return zones.sorted()
    }

    /// UTC offsets in seconds by `TZ=zone date` for each instant, in one run of `date -f`.
    static func systemOffsets(zone: String, instants: [Int64]) throws -> [Int] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tz-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try instants.map { "@\($0)" }.joined(separator: "\n").appending("\n").write(toFile: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/date")
        process.arguments = ["-f", file, "+%::z"]
        process.environment = ["TZ": zone, "LC_ALL": "C", "PATH": "/usr/bin:/bin"]
        let out = Pipe()
        process.standardOutput = out
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "date for \(zone) exited \(process.terminationStatus)")
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map { line in
            let sign = line.hasPrefix("-") ? -1 : 1
            let parts = line.dropFirst().split(separator: ":").compactMap { Int($0) }
            guard parts.count == 3 else { return Int.min }
            return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2])
        }
    }

    @Test("every zone: thousands of generated instants, every DST edge, the far future past the table, as the C library says")
    func everyZoneAgreesWithTheSystem() throws {
        let zones = Self.systemZones()
        #expect(zones.count > 300, "tzdata found: \(zones.count) zones")
        var random = SeededGenerator.fromEnvironment()
        print("TimeZoneRulesTests seed: \(random.seed) (STEWARD_TEST_SEED replays it)")
        var compared = 0, edges = 0
        for zone in zones {
            let rules = try TimeZoneRules(identifier: zone, directory: Self.zoneDirectory)
            var instants: [Int64] = []
            // Anywhere from 1850 to 2500 (before the first transition, in the table, and past it where the footer rules).
            for _ in 0..<150 { instants.append(Int64.random(in: -3_786_825_600...16_725_225_600, using: &random)) }
            // The far future only: the footer rule.
            for _ in 0..<50 { instants.append(Int64.random(in: 2_208_988_800...13_569_465_600, using: &random)) }
            // Each side of the changes our reader finds, from random starting points; the instant checked is one
            // second before the change (the old offset) and the change itself (the new one).
            var changes: [Int64] = []
            for _ in 0..<40 {
                let from = Int64.random(in: -2_208_988_800...7_258_118_400, using: &random)
                if let change = rules.nextTransition(after: from) {
                    #expect(change > from)
                    changes.append(change)
                    instants.append(contentsOf: [from, change - 1, change])
                }
            }
            let theirs = try Self.systemOffsets(zone: zone, instants: instants)
            try #require(theirs.count == instants.count, "date answered \(theirs.count) lines for \(instants.count) in \(zone)")
            for (instant, offset) in zip(instants, theirs) {
                #expect(rules.secondsFromGMT(at: instant) == offset, "\(zone) at \(instant): ours \(rules.secondsFromGMT(at: instant)), date's \(offset)")
                compared += 1
            }
            // At each change the offset really changes, and it does not change between the start point and it.
            let base = 200
            for i in 0..<changes.count {
                let (from, before, at) = (theirs[base + 3 * i], theirs[base + 3 * i + 1], theirs[base + 3 * i + 2])
                #expect(before != at, "\(zone): no change at \(changes[i])")
                #expect(from == before, "\(zone): a change before \(changes[i]) was skipped")
                edges += 1
            }
        }
        print("TimeZoneRulesTests: \(zones.count) zones, \(compared) instants, \(edges) transitions compared with date")
        #expect(edges > 1000)
    }

    @Test("generated POSIX TZ rules give the C library's offsets")
    func generatedRulesAgreeWithTheSystem() throws {
        var random = SeededGenerator.fromEnvironment()
        print("generated POSIX rules seed: \(random.seed)")
        func offset() -> String {
            let hours = Int.random(in: -12...14, using: &random), minutes = [0, 0, 30, 45][Int.random(in: 0...3, using: &random)]
            return "\(hours)" + (minutes == 0 ? "" : ":\(minutes)")
        }
        func day() -> String {
            switch Int.random(in: 0...2, using: &random) {
            case 0: return "J\(Int.random(in: 1...365, using: &random))"
            case 1: return "\(Int.random(in: 0...365, using: &random))"
            default: return "M\(Int.random(in: 1...12, using: &random)).\(Int.random(in: 1...5, using: &random)).\(Int.random(in: 0...6, using: &random))"
            }
        }
        func time() -> String { Bool.random(using: &random) ? "" : "/\(Int.random(in: 0...24, using: &random))" }
        for _ in 0..<60 {
            let std = offset()
            let dstOffset = Bool.random(using: &random) ? "" : "\(Int(std.split(separator: ":")[0])! - 1)"
            let text = "<STD>\(std)<DST>\(dstOffset),\(day())\(time()),\(day())\(time())"
            guard let rule = try POSIXZoneRule(text) else { Issue.record("no rule from \(text)"); continue }
            let instants = (0..<200).map { _ in Int64.random(in: 0...4_102_444_800, using: &random) }
            let theirs = try Self.systemOffsets(zone: text, instants: instants)
            try #require(theirs.count == instants.count)
            for (instant, offset) in zip(instants, theirs) {
                #expect(rule.localTimeType(at: instant).utcOffset == offset, "\(text) at \(instant)")
            }
        }
    }

    @Test("truncated, empty, garbage and mutated tzdata files: an error naming the file, never a trap")
    func badFilesGiveAnErrorNamingTheFile() throws {
        var random = SeededGenerator.fromEnvironment()
        print("bad tzdata seed: \(random.seed)")
        let zones = Self.systemZones()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tz-bad-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // On disk: the loader names the path it read.
        let onDisk: [(String, [UInt8])] = [("Empty", []), ("Garbage", (0..<3000).map { _ in UInt8.random(in: 0...255, using: &random) }),
                                           ("Magic", Array("TZif2".utf8) + [UInt8](repeating: 0xFF, count: 60))]
        for (name, bytes) in onDisk {
            FileManager.default.createFile(atPath: folder + "/" + name, contents: Data(bytes))
            #expect {
                try TimeZoneRules(identifier: name, directory: folder)
            } throws: { error in
                (error as? TimeZoneError)?.description.contains(folder + "/" + name) == true
            }
        }
        #expect(throws: TimeZoneError.self) { try TimeZoneRules(identifier: "Mars/Olympus") }
        #expect(throws: TimeZoneError.self) { try TimeZoneRules(identifier: "../../etc/passwd") }
        #expect(throws: TimeZoneError.self) { try TimeZoneRules(identifier: "Europe") }
        // In memory: every truncation of some real files, and random byte changes to them.
        var parsed = 0, refused = 0
        for _ in 0..<12 {
            let zone = zones[Int.random(in: 0..<zones.count, using: &random)]
            let real = Array(FileManager.default.contents(atPath: Self.zoneDirectory + "/" + zone) ?? Data())
            var cases: [[UInt8]] = (0..<real.count).map { Array(real[0..<$0]) }
            for _ in 0..<400 {
                var bytes = real
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
                cases.append(bytes)
            }
            for bytes in cases {
                do {
                    let rules = try TimeZoneRules(tzif: bytes, identifier: zone, path: "/test/\(zone)")
                    parsed += 1
                    for _ in 0..<4 {
                        let t = Int64.random(in: Int64.min...Int64.max, using: &random)
                        _ = rules.secondsFromGMT(at: t)
                        _ = rules.nextTransition(after: t)
                    }
                } catch {
                    refused += 1
                    #expect(error.description.hasPrefix("/test/\(zone): "), "\(error.description)")
                }
            }
        }
        print("bad tzdata: \(parsed) mutated files still valid, \(refused) refused")
        #expect(refused > 1000)
    }
}
