import Foundation
import OutputText
import Testing
import TestSupport

@Suite("ISODate: RFC 3339 instants without a calendar")
struct ISODateTests {
    @Test("generated instants print as Foundation's ISO 8601 formatter prints them (Gregorian years 1583–9999)")
    func matchesFoundation() {
        let seed = SeededGenerator.seedFromEnvironment
        print("ISODateTests.matchesFoundation seed \(seed) (replay with STEWARD_TEST_SEED=\(seed))")
        var random = SeededGenerator(seed: seed)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        // 1583-01-01 to 9999-12-31: before 1583 Foundation switches to the Julian calendar, PostgreSQL does not.
        let range = -12_212_553_600.0...253_402_300_799.0
        var instants: [Double] = [0, -1, -0.0004, -0.0005, 0.9995, 0.9994, 951_782_400, 1_709_164_800, 4_107_542_400, 253_402_300_799]
        for n in 0..<20_000 {
            switch n % 4 {
            case 0: instants.append(Double.random(in: range, using: &random))
            case 1: instants.append(Double(Int.random(in: -12_212_553_600...253_402_300_799, using: &random)))
            case 2: instants.append(Double(Int.random(in: -400_000...400_000, using: &random)) + Double.random(in: 0..<1, using: &random))
            default: instants.append(Double(Int.random(in: 0...3_000_000_000, using: &random) / 1000 * 1000) + 0.9995)
            }
        }
        var mismatches = 0
        for instant in instants {
            let date = Date(timeIntervalSince1970: instant)
            let expected = formatter.string(from: date)
            let actual = ISODate.string(date)
            if actual != expected {
                mismatches += 1
                if mismatches <= 5 { Issue.record("\(instant): ISODate \(actual), Foundation \(expected) (seed \(seed))") }
            }
        }
        #expect(mismatches == 0)
        #expect(ISODate.string(Date(timeIntervalSince1970: 1_795_876_870.9)) == "2026-11-28T14:41:10Z")
    }

    @Test("instants outside any calendar print as infinity, never trap")
    func outOfRange() {
        #expect(ISODate.string(Date(timeIntervalSince1970: .infinity)) == "infinity")
        #expect(ISODate.string(Date(timeIntervalSince1970: -.infinity)) == "-infinity")
        #expect(ISODate.string(Date(timeIntervalSince1970: 2e15)) == "infinity")
        #expect(ISODate.string(Date(timeIntervalSince1970: .nan)).hasSuffix("infinity"))
        #expect(ISODate.string(Date(timeIntervalSince1970: 9e14)).hasSuffix("Z"))
        for odd in [1e300, -1e300] {
            let text = ISODate.string(Date(timeIntervalSince1970: odd))
            #expect(text.hasSuffix("Z") || text.hasSuffix("infinity"), "\(odd): \(text)")
        }
    }
}
