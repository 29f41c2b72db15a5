import Foundation
import OutputText
import Testing
import TestSupport

@Suite("ISODate: the instants of answers and tables")
struct ISODateTests {
    @Test("generated instants from 1970 to 9999 read as Foundation's ISO 8601 formatter writes them; odd ones never trap")
    func matchesFoundation() {
        var g = SeededGenerator.fromEnvironment()
        print("seed \(g.seed) (STEWARD_TEST_SEED replays it)")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        for _ in 0..<5000 {
            let date = Date(timeIntervalSince1970: Double.random(in: 0...253_402_300_799, using: &g))
            #expect(ISODate.string(date) == formatter.string(from: date), "seed \(g.seed): \(date.timeIntervalSince1970)")
        }
        #expect(ISODate.string(Date(timeIntervalSince1970: 1_795_876_870.9)) == "2026-11-28T14:41:10Z")
        for odd in [Double.nan, .infinity, -.infinity, 1e300, -1e300] {
            let text = ISODate.string(Date(timeIntervalSince1970: odd))
            #expect(text.hasSuffix("Z") || text.hasSuffix("infinity"), "\(odd): \(text)")
        }
    }
}
