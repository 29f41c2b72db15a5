import OutputText
import StewardJSON
import Config
import Control
import Foundation
import Daemon
import Jobs
import Migrations
import StewardLog
import Scheduler
import steward
import Testing
import TestSupport

/// The parsers that read outside text (config files, durations, schedules and time zones, control requests, log
/// values) run on thousands of generated and mutated inputs plus the committed libFuzzer corpora, in-process.
/// A trap ends the test run, so getting to the end is the no-trap proof; each accepted value is also checked
/// against the documented range. The seed is printed; set `STEWARD_TEST_SEED` to replay a run.
@Suite("hostile inputs: generated and fuzzed text through every parser, in-process")
struct HostileInputTests {
    /// How long each generated-corpus test may run (it stops earlier when its case count is reached).
    static let budget: Double = 12

    /// Runs `body` up to `count` times or until the time budget is spent; returns the cases run.
    static func generated(_ count: Int, _ body: (Int) throws -> Void) rethrows -> Int {
        let deadline = Date().addingTimeInterval(budget)
        var done = 0
        while done < count, Date() < deadline {
            try body(done)
            done += 1
        }
        return done
    }

    /// True when `text` holds a scalar that must never reach a log line or terminal raw.
    static func holdsControl(_ text: String) -> Bool { text.unicodeScalars.contains { LogText.needsEscape($0) } }

    @Test("config files: generated, mutated and the fuzz corpus never trap; what is accepted is within range")
    func configFiles() throws {
        let seed = HostileInputs.seed
        print("config files: seed \(seed) (STEWARD_TEST_SEED=\(seed) replays)")
        var inputs = HostileInputs(seed: seed)
        let corpus = HostileInputs.corpus("config")
        #expect(corpus.count >= 20, "the committed corpus Tests/Fuzz/config/corpus/config is missing")
        var accepted = 0, refused = 0
        let cases = Self.generated(6000) { index in
            let bytes = index < corpus.count ? corpus[index] : (index % 3 == 0 ? inputs.mutate(inputs.pick(corpus)) : inputs.configFile())
            do {
                let config = try StewardConfig.parse(path: "generated.ini", bytes: bytes, schema: .steward)
                _ = try JobCatalog.steward.configure(config.jobSections, config: config)
                accepted += 1
                #expect((0...86400).contains(config[MigrationsConfig.lockWait]), "lock_wait out of range, seed \(seed) case \(index)")
                #expect((0...86400).contains(config[DaemonConfig.shutdownTimeout]), "shutdown_timeout out of range, seed \(seed) case \(index)")
                #expect((0.1...60).contains(config[DaemonConfig.leaderPoll]), "leader_poll out of range, seed \(seed) case \(index)")
                #expect((1...86400).contains(config[DaemonConfig.metricsInterval]), "metrics interval out of range, seed \(seed) case \(index)")
                #expect((1...3600).contains(config[DatabaseConfig.connectTimeout]), "connect_timeout out of range, seed \(seed) case \(index)")
                for job in try JobCatalog.steward.configure(config.jobSections, config: config) {
                    #expect(JobSettings.timeoutRange.contains(Int64(job.settings.timeoutSeconds)), "job timeout out of range, seed \(seed) case \(index)")
                    #expect(job.settings.retryBackoffSeconds.isFinite && job.settings.retryBackoffSeconds <= 86400)
                }
            } catch {
                refused += 1
                let text = "\(error)"
                // Every refusal names the file, and never carries a raw control character or line break.
                #expect(text.hasPrefix("generated.ini") || text.hasPrefix("(flags and environment)"), "\(text) — seed \(seed) case \(index)")
                #expect(!Self.holdsControl(text), "a control character in \(LogText.escaped(text)) — seed \(seed) case \(index)")
            }
        }
        print("config files: \(cases) cases (\(corpus.count) from the corpus), \(accepted) accepted, \(refused) refused")
        #expect(cases >= min(6000, corpus.count + 500))
        FaultLedger.check("config files: generated and fuzz corpus, in-process", runs: 1, faults: refused,
                          cases: cases, crashes: 0)
    }

    @Test("the regressions of the crash reports are refused naming file, line and key")
    func reportedValues() throws {
        for (text, key) in [
            ("[job.prune-history]\ntimeout = 99999999999s\n", "[job.prune-history] timeout"),
            ("[job.prune-history]\ntimeout = 999999999999999d\n", "[job.prune-history] timeout"),
            ("[daemon]\nshutdown_timeout = 1e300\n", "[daemon] shutdown_timeout"),
            ("[migrations]\nlock_wait = inf\n", "[migrations] lock_wait"),
            ("[migrations]\nlock_wait = nan\n", "[migrations] lock_wait"),
            ("[migrations]\nlock_timeout = 99999999999999s\n", "[migrations] lock_timeout"),
            ("[metrics]\ninterval = 0x10\n", "[metrics] interval"),
            ("[apple]\nremind_days = 9223372036854775808\n", "[apple] remind_days"),
        ] {
            do {
                let config = try StewardConfig.parse(path: "s.ini", bytes: Array(text.utf8), schema: .steward)
                _ = try JobCatalog.steward.configure(config.jobSections, config: config)
                Issue.record("accepted: \(text)")
            } catch {
                #expect("\(error)".hasPrefix("s.ini:2: \(key): "), "\(error)")
            }
        }
    }

    @Test("durations: generated text is refused or within 0 to 3660 days, never overflows")
    func durations() {
        let seed = HostileInputs.seed
        print("durations: seed \(seed)")
        var inputs = HostileInputs(seed: seed)
        let alphabet: [String] = ["0", "1", "9", "99999", "9223372036854775807", "s", "m", "h", "d", " ", ".", "-", "+", "e", "٣", "µ", "\u{0}"]
        var accepted = 0
        let cases = Self.generated(40000) { index in
            let text = index < HostileInputs.hostileDurations.count ? HostileInputs.hostileDurations[index]
                : (0..<(1 + Int(inputs.random.next() % 8))).map { _ in inputs.pick(alphabet) }.joined()
            if let seconds = try? Schedule.seconds(inDuration: text) {
                accepted += 1
                #expect((0...Schedule.maximumDurationSeconds).contains(seconds), "\"\(LogText.escaped(text))\" gave \(seconds) — seed \(seed)")
            }
        }
        print("durations: \(cases) cases, \(accepted) accepted")
        FaultLedger.check("durations: generated", runs: 1, cases: cases, crashes: 0)
    }

    @Test("schedules and time zones: generated cron, shortcuts and zone names; accepted ones give slots strictly later")
    func schedules() {
        let seed = HostileInputs.seed
        print("schedules: seed \(seed)")
        var inputs = HostileInputs(seed: seed)
        let corpus = HostileInputs.corpus("schedule").map { String(decoding: $0, as: UTF8.self) }
        let fields = ["*", "*/0", "*/1", "*/15", "0", "7", "59", "60", "61", "1-5", "5-1", "1,2,3", "-1", "99999999999999999999", "MON",
                      "jan-dec", "?", "L", "1-", ",", "*/99999999999999999999", "0-59/7", "31", "32", "2/3", "sun-sat/2", "٣"]
        let zones = ["UTC", "Europe/Berlin", "America/Los_Angeles", "Australia/Lord_Howe", "Pacific/Chatham", "Etc/GMT+12", "Etc/GMT-14",
                     "Mars/Olympus", "../../etc/passwd", "/etc/localtime", "Europe/./Berlin", "", "UTC\u{0}", "Asia/Kathmandu",
                     String(repeating: "A/", count: 40), "right/UTC", "posix/Europe/Paris", "EST5EDT", "GMT+99"]
        var accepted = 0
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let cases = Self.generated(8000) { index in
            let text: String, zone: String
            if index < corpus.count {
                let parts = corpus[index].split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                (text, zone) = (parts[0], parts.count > 1 ? parts[1] : "UTC")
            } else if index % 5 == 0 {
                (text, zone) = ("@every " + inputs.pick(HostileInputs.hostileDurations), inputs.pick(zones))
            } else {
                (text, zone) = ((0..<(4 + Int(inputs.random.next() % 3))).map { _ in inputs.pick(fields) }.joined(separator: " "), inputs.pick(zones))
            }
            guard let schedule = try? Schedule(text, timeZone: zone) else { return }
            accepted += 1
            var date = start.addingTimeInterval(Double(inputs.random.next() % 100_000_000))
            for _ in 0..<3 {
                let next = schedule.next(after: date)
                #expect(next > date, "\"\(text)\" in \(zone): next slot not after \(date) — seed \(seed)")
                date = next
            }
        }
        print("schedules: \(cases) cases (\(corpus.count) from the corpus), \(accepted) accepted")
        FaultLedger.check("schedules and time zones: generated and fuzz corpus", runs: 1,
                          cases: cases, crashes: 0)
    }

    @Test("control requests: generated lines and the fuzz corpus are parsed or refused, never trap")
    func controlRequests() {
        let seed = HostileInputs.seed
        var inputs = HostileInputs(seed: seed)
        let corpus = HostileInputs.corpus("control")
        let words = ["status", "jobs", "history", "run", "pause", "resume", "reload", "help", "--dry-run", "--force", "--json", "prune-history",
                     "orphan-avatars", "-1", "99999999999999999999", "\t", " ", "\u{0}", "é", "\u{2028}", "--", String(repeating: "x", count: 500)]
        var parsed = 0
        let cases = Self.generated(20000) { index in
            let bytes = index < corpus.count ? corpus[index]
                : index % 2 == 0 ? inputs.mutate(Array((0..<(1 + Int(inputs.random.next() % 5))).map { _ in inputs.pick(words) }.joined(separator: " ").utf8))
                : inputs.mutate(inputs.pick(corpus))
            let line = String(decoding: bytes, as: UTF8.self)
            if let request = try? ControlRequest(line: line) {
                parsed += 1
                #expect(request.arguments.count <= 2 && request.flags.allSatisfy { $0.hasPrefix("--") })
            }
        }
        print("control requests: seed \(seed), \(cases) cases, \(parsed) parsed")
        FaultLedger.check("control requests: generated and fuzz corpus", runs: 1, cases: cases, crashes: 0)
    }

    @Test("log values: no control character or line break survives escaping, text or JSON; no secret survives redaction")
    func logText() {
        let seed = HostileInputs.seed
        var inputs = HostileInputs(seed: seed)
        let corpus = HostileInputs.corpus("logtext").map { String(decoding: $0, as: UTF8.self) }
        let pieces = ["a", "é", "e\u{301}", "\r\n", "\n", "\r", "\u{0}", "\u{1B}[31m", "\u{7F}", "\u{85}", "\u{2028}", "\u{2029}", "\u{202E}",
                      "\u{FEFF}", "\\", "\"", "<2>", "%", "%25", "+", " ", "🙂", "\u{D7FF}", "\u{10FFFF}"]
        var failures = 0
        let cases = Self.generated(20000) { index in
            let text = index < corpus.count ? corpus[index] : (0..<(1 + Int(inputs.random.next() % 12))).map { _ in inputs.pick(pieces) }.joined()
            let escaped = LogText.escaped(text)
            let json = JSONText.quote(text)
            if Self.holdsControl(escaped) || Self.holdsControl(json) || escaped.utf8.contains(0x0A) || json.utf8.contains(0x0A) {
                failures += 1
                Issue.record("escaping left a control character: \(escaped.debugDescription) — seed \(seed) case \(index)")
            }
            let secret = (0..<(1 + Int(inputs.random.next() % 4))).map { _ in inputs.pick(pieces) }.joined()
            guard !secret.contains("*") else { return }
            let form = inputs.pick(SecretRedactor.variants(of: secret))
            let redacted = SecretRedactor.redact(text + form + text, removing: SecretRedactor.variants(of: secret))
            if SecretRedactor.occurs(form, in: redacted) && form.utf8.count >= 1 && !SecretRedactor.occurs(form, in: SecretRedactor.mask) {
                failures += 1
                Issue.record("a secret form survived redaction: \(form.debugDescription) in \(redacted.debugDescription) — seed \(seed)")
            }
        }
        print("log values: seed \(seed), \(cases) cases")
        FaultLedger.record("log values: generated escaping and redaction", runs: 1, faults: 0, objectsChecked: 0, losses: failures, cases: cases, crashes: 0)
    }
}
