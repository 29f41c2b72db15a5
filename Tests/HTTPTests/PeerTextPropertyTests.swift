import Foundation
import HTTP
import Testing
import TestSupport

@Suite("Retry-After and quoting of peer text: generated inputs")
struct PeerTextPropertyTests {
    @Test("Retry-After: thousands of generated values give nil or a finite wait within the cap; the three date forms agree with Foundation")
    func retryAfterProperties() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = HostileAnswers(seed: seed)
        let alphabet = Array("0123456789 .,-+eEnaNifGMTSunMonNov:\t\u{0}\u{7F}é")
        let now = 1_800_000_000.0
        var cases = 0
        for _ in 0..<5000 {
            let length = Int(generator.next() % 40)
            let value = String((0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
            cases += 1
            if let seconds = RetryAfter.seconds(value, now: now) {
                #expect(seconds.isFinite && seconds >= 0 && seconds <= RetryAfter.maximumSeconds, "seed \(seed): \(value.debugDescription) → \(seconds)")
            }
            let delay = RetryPolicy().delay(afterAttempt: Int(generator.next() % 100), retryAfter: value)
            #expect(delay.isFinite && delay >= 0 && delay <= 30, "seed \(seed): \(value.debugDescription) → \(delay)")
        }
        for invalid in ["nan", "NaN", "inf", "-1", "1e3", "1.5", "0x10", "", " ", "+5", "Mon, 32 Nov 2024 08:49:37 GMT"] {
            #expect(RetryAfter.seconds(invalid) == nil, "\(invalid.debugDescription) must be ignored")
        }
        #expect(RetryAfter.seconds("120") == 120)
        #expect(RetryAfter.seconds("99999999999999999999999999") == RetryAfter.maximumSeconds)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for _ in 0..<2000 {
            let date = Date(timeIntervalSince1970: now + Double(generator.next() % 250))
            for format in ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"] {
                formatter.dateFormat = format
                let text = formatter.string(from: date)
                cases += 1
                let expected = (date.timeIntervalSince1970 - now).rounded(.down)
                #expect(RetryAfter.seconds(text, now: now) == max(0, expected), "seed \(seed): \(text)")
            }
        }
        print("Retry-After: \(cases) generated values (seed \(seed))")
    }

    @Test("quoting: a secret planted raw or percent-encoded anywhere in generated text never survives, nor a control character")
    func quotingProperties() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = HostileAnswers(seed: seed)
        var survived = 0
        for _ in 0..<3000 {
            let secret = "sb_secret_" + String((0..<24).map { _ in Character(UnicodeScalar(UInt8(33 + generator.next() % 94))) })
            let redactor = PeerTextRedactor(secrets: PeerTextRedactor.secrets(in: [("apikey", secret), ("Authorization", "Bearer \(secret)")]))
            let form = generator.next() % 2 == 0 ? secret : (secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? secret)
            let filler = (0..<Int(generator.next() % 600)).map { _ in UInt8(generator.next() % 256) }
            let at = filler.isEmpty ? 0 : Int(generator.next() % UInt64(filler.count))
            // Now and then a scalar that glues onto its neighbour (a prepend mark before, a combining accent after).
            let before: [UInt8] = generator.next() % 4 == 0 ? Array("\u{600}".utf8) : []
            let after: [UInt8] = generator.next() % 4 == 0 ? Array("\u{301}".utf8) : []
            let bytes = Array(filler[..<at]) + before + Array(form.utf8) + after + Array(filler[at...])
            let quoted = redactor.quote(bytes)
            let out = Array(quoted.utf8)
            if out.firstRange(of: Array(secret.utf8)) != nil || out.firstRange(of: Array(form.utf8)) != nil { survived += 1; Issue.record("seed \(seed): the secret survived in \(quoted)") }
            #expect(!quoted.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "seed \(seed): a control character in \(quoted)")
        }
        FaultLedger.check("secrets: planted in generated peer text", runs: 0, cases: 3000, secretsFound: survived)
        #expect(survived == 0)
    }
}
