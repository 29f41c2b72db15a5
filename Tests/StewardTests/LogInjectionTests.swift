import Foundation
import Testing
import TestSupport
import OutputText

/// Values from the database reach the log (the username-check job logs every new finding with its username):
/// a username holding CR LF, NEL, U+2028 or escape sequences must not start a new journal line or reach the terminal raw.
@Suite("logs: outside values cannot forge a line, in text, journald or JSON format", .needsCluster)
struct LogInjectionTests {
    static let hostileUsernames = [
        "bob\r\n<2>forged: root password changed", "eve\n<0>forged emergency", "mal\u{85}<2>forged after NEL",
        "ann\u{2028}<2>forged after LS", "tty\u{1B}[2J\u{1B}[31mred", "rtl\u{202E}gnp.exe", "nul\u{0}byte", "zw\u{FEFF}nbsp\u{7F}del",
    ]

    /// The lines as journald and `tail` split them: on LF bytes only.
    static func lines(_ text: String) -> [String] {
        text.utf8.split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }
    }

    /// True when a line holds a scalar that ends or rewrites a line on some reader.
    static func holdsBreakOrControl(_ line: String) -> Bool {
        line.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029 || $0.value == 0x202E }
    }

    @Test("usernames with CR LF, NEL, LS, escapes and NUL: one escaped log line each, under journald and as JSON")
    func hostileUsernamesInLogs() throws {
        try withTestDatabase { db in
            let migrated = try StewardProcess.run(["migrate", "--database-url", db.url])
            #expect(migrated.exitCode == 0, "\(migrated.output)")
            let c = try db.connectAsAdmin()
            for (index, name) in Self.hostileUsernames.enumerated() {
                let id = try db.signUp(email: "log\(index)@example.com")
                // Postgres text cannot hold NUL; the rest go in as written.
                try c.query("update public.profiles set username = $1 where id = $2", [name.replacingOccurrences(of: "\u{0}", with: "0"), id])
            }
            let config = NSTemporaryDirectory() + "steward-\(UUID().uuidString).ini"
            try "[job.username-check]\nschedule = @daily\n".write(toFile: config, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: config) }
            let args = ["job", "run", "username-check", "--database-url", db.url, "--config", config]

            let journald = try StewardProcess.run(args, environment: ["JOURNAL_STREAM": "8:12345"])
            #expect(journald.exitCode == 0 || journald.exitCode == 2, "\(journald.output.debugDescription)")
            let journalLines = Self.lines(journald.stderr)
            let findings = journalLines.filter { $0.contains("new username finding") }
            #expect(findings.count >= 4, "\(journald.stderr.debugDescription)")
            for line in journalLines {
                #expect(line.hasPrefix("<6>") || line.hasPrefix("<5>") || line.hasPrefix("<4>"), "a line without its own priority: \(line.debugDescription)")
                #expect(!Self.holdsBreakOrControl(line), "a raw control or line break: \(line.debugDescription)")
                #expect(!line.hasPrefix("<2>") && !line.hasPrefix("<0>"))
            }

            // Findings are logged when new: forget them so the JSON run logs them again.
            try c.execute("delete from steward.username_findings")
            let json = try StewardProcess.run(args + ["--log-format", "json"])
            for line in Self.lines(json.stderr) {
                #expect(!Self.holdsBreakOrControl(line), "a raw control or line break in JSON: \(line.debugDescription)")
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(object?["message"] != nil, "not one JSON object: \(line.debugDescription)")
            }
            let logged = Self.lines(json.stderr).compactMap { line -> String? in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["username"] as? String
            }
            // JSON keeps the value exact once decoded: every hostile username comes back as stored.
            #expect(Set(logged).isSuperset(of: Self.hostileUsernames.filter { !$0.contains("\u{0}") }), "\(logged.map(\.debugDescription))")
            FaultLedger.record("logs: hostile usernames", runs: 2, faults: Self.hostileUsernames.count, objectsChecked: journalLines.count,
                               losses: journalLines.filter { Self.holdsBreakOrControl($0) }.count, cases: Self.hostileUsernames.count)
        }
    }
}
