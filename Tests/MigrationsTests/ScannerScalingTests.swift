import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Migrations
import Testing

/// Reading a migration file takes time in proportion to its size: a large seed file does not hold up `status`,
/// `migrate` or the daemon's start (which reads every file before READY=1).
@Suite("migration scanner: reading a file is linear in its size")
struct ScannerScalingTests {
    /// A seed-like file of about `megabytes` MB: inserts with strings, comments and a function now and then.
    static func seedFile(megabytes: Int) -> [UInt8] {
        var text = "create table seed (id int, name text, note text);\n"
        var row = 0
        while text.utf8.count < megabytes * 1_000_000 {
            row += 1
            text += "-- row \(row); with a semicolon\ninsert into seed values (\(row), 'name ''\(row)''; still', E'line\\n\(row)');\n"
            if row % 1000 == 0 {
                text += "create or replace function seed_\(row)() returns int language sql begin atomic select \(row); end;\n/* block; */\n"
            }
        }
        return Array(text.utf8)
    }

    /// CPU seconds this thread has used: unlike wall time, not inflated by other work on the machine.
    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static func secondsToRead(_ bytes: [UInt8]) throws -> (seconds: Double, statements: Int) {
        let start = threadCPUSeconds()
        let file = try MigrationFile(fileName: "0001_seed.sql", bytes: bytes)
        return (threadCPUSeconds() - start, file.statementTexts.count)
    }

    @Test("2 MB and 20 MB seed files: ten times the data takes well under 25 times the time")
    func linear() throws {
        let small = Self.seedFile(megabytes: 2)
        let large = Self.seedFile(megabytes: 20)
        // Warm up (first use of the parser allocates its memory contexts).
        _ = try Self.secondsToRead(Array(small.prefix(10_000)))
        // The small file's best of three: one slow run must not decide the ratio.
        let a = try (0..<3).map { _ in try Self.secondsToRead(small) }.min { $0.seconds < $1.seconds }!
        let b = try Self.secondsToRead(large)
        let ratio = b.seconds / max(a.seconds, 0.001)
        print("migration scanner scaling: \(small.count) bytes \(a.statements) statements in \(a.seconds) s CPU; \(large.count) bytes \(b.statements) statements in \(b.seconds) s CPU; ratio \(ratio)")
        #expect(b.statements > 9 * a.statements)
        #expect(ratio < 25, "reading grows faster than the file: \(a.seconds) s for 2 MB, \(b.seconds) s for 20 MB")
        #expect(b.seconds < 120, "20 MB took \(b.seconds) s of CPU")
    }
}
