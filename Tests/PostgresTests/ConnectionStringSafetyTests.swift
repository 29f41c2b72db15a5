import Foundation
import Postgres
import Testing
import TestSupport

/// Malformed database URLs and conninfo strings get Steward's own message, and no message or description ever
/// holds the password, whatever it contains and wherever it sits.
@Suite("connection strings: malformed ones are refused by Steward, the password never shows")
struct ConnectionStringSafetyTests {
    @Test("the reported leaks: a bad %-escape in the password, a space in a conninfo password", .needsCluster, arguments: [
        ("postgresql://postgres:Sup3r%zzSecretPW@db.example.com:5432/postgres", "Sup3r%zzSecretPW", "a % not followed by two hex digits"),
        ("host=db.example.com user=postgres password=two words here", "two words here", "has no ="),
        ("host=db.example.com password='Unterminated-S3cret", "Unterminated-S3cret", "quote that is never closed"),
        ("postgresql://postgres@db.example.com/postgres?password=Sup3r%zzSecretPW", "Sup3r%zzSecretPW", "a % not followed by two hex digits"),
        ("postgresql://postgres:p@ss/w0rd@db.example.com/postgres", "p@ss/w0rd", "an @ after the host"),
        ("host= password='S3cret-In-Host' dbname=d", "S3cret-In-Host", "holds = or ' without quotes"),
        // A URL missing its colon reads as conninfo whose first key holds the password (seed 10071954480468680747).
        ("postgresql//postgres:Pwfdnw\"{!'X0-fdnw@/'X0-@/=postgres", "Pwfdnw\"{!'X0-", "not a connection keyword libpq knows"),
        ("postgresql//u:Sekret-Key9=a'b", "Sekret-Key9", "holds = or ' without quotes"),
    ])
    func reported(text: String, password: String, expected: String) {
        let error = #expect(throws: PostgresError.self) { try ConnectionString(text) }
        let message = error.map { "\($0)" } ?? ""
        #expect(message.contains(expected), "\(message)")
        var scan = SecretScan(secrets: [("password", password)])
        scan.scan(message, place: "error")
        #expect(scan.findings.isEmpty, "\(scan.findings)")
    }

    @Test("every key libpq accepts passes Steward's check, the deprecated requiressl included", arguments: [
        "host=h port=5432 dbname=d user=u", "requiressl=1 host=h", "service=prod", "host = h  sslmode = require",
        "options='-c statement_timeout=0' application_name=x connect_timeout=3", "hostaddr=127.0.0.1 target_session_attrs=any",
    ])
    func knownKeywords(text: String) throws {
        _ = try ConnectionString(text)
    }

    /// Through the binary (`STEWARD_DATABASE_URL=… steward config check` runs Steward's check and libpq's parser): the
    /// guesses a malformed string registers as secrets stay in that process, not in the test's.
    @Test("generated passwords in every position and encoding, in well-formed and mutated strings: never in a message or description", .needsCluster)
    func generated() throws {
        let seed = HostileInputs.seed
        print("connection strings: seed \(seed)")
        var inputs = HostileInputs(seed: seed)
        let alphabet = Array("abcXYZ019%@/:?#&=+ '\"\\.;,-_~[]{}$!*()é€🙂\t")
        var cases = 0, refused = 0, found = 0, crashes = 0
        let deadline = Date().addingTimeInterval(40)
        while cases < 600, Date() < deadline {
            var password = "Pw" + String(inputs.random.next() % 1_000_000, radix: 36)
            for _ in 0..<(2 + Int(inputs.random.next() % 10)) { password.append(inputs.pick(alphabet)) }
            let encoded = SecretScan.forms(of: password).first { $0.form == "percent-encoded" }?.text ?? password
            let quoted = "'" + password.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
            let host = inputs.pick(["db.example.com", "127.0.0.1:1", "[::1]:5432", "h1,h2:5433", "", "[::1", "x:99999", "a@b"])
            var text = inputs.pick([
                "postgresql://postgres:\(password)@\(host)/postgres", "postgresql://postgres:\(encoded)@\(host)/postgres",
                "postgres://u@\(host)/d?password=\(password)", "postgres://u@\(host)/d?sslmode=require&password=\(encoded)",
                "postgresql://u:\(encoded)@\(host)/d?options=-c%20x&bogus=1", "host=\(host) user=u password=\(password)",
                "host=\(host) password=\(quoted) dbname=d", "password=\(quoted) host=\(host) port=x", "user=u password=\(password) sslmode=bogus",
                "POSTGRESQL://u:\(password)@\(host)/d", "postgresql:/u:\(password)@\(host)/d", "host= password=\(quoted) dbname=d",
            ])
            if inputs.random.next() % 3 == 0 { text = String(decoding: inputs.mutate(Array(text.utf8)), as: UTF8.self) }
            // The environment cannot hold NUL.
            text = text.replacingOccurrences(of: "\u{0}", with: "0")
            cases += 1
            let result = try StewardProcess.run(["config", "check"], environment: ["STEWARD_DATABASE_URL": text], timeout: 20)
            if result.crashed { crashes += 1 }
            if result.exitCode != 0 { refused += 1 }
            var scan = SecretScan(secrets: [("password", password)])
            scan.scan(result, place: "config check")
            if !scan.findings.isEmpty {
                found += 1
                Issue.record("\(scan.findings) for a generated string (seed \(seed), case \(cases))")
            }
        }
        #expect(refused < cases, "some generated strings are well-formed and must pass")
        print("connection strings: \(cases) cases, \(refused) refused, \(found) with the password shown, \(crashes) crashes")
        #expect(crashes == 0)
        FaultLedger.check("connection strings: generated passwords", runs: cases, faults: refused,
                          cases: cases, secretsFound: found, crashes: crashes)
    }
}
