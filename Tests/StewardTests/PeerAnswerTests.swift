import Foundation
import Postgres
import Testing
import TestSupport

/// The Management API emulator with a token file, for the Apple paths (push, status, webhook).
struct ManagementWorld {
    let emulator: EmulatorProcess
    let token = "sbp_peer\(UInt32.random(in: 0...UInt32.max))secrettoken"
    let ref = "abcdefghijklmnopqrst"
    let tokenFile: String

    init(folder: String) throws {
        emulator = try EmulatorProcess(script: "management-emulator.py", arguments: ["--ref", ref, "--token", token, "--secret-hash", "deadbeef"])
        tokenFile = folder + "/token-\(UUID().uuidString)"
        try token.write(toFile: tokenFile, atomically: true, encoding: .utf8)
        chmod(tokenFile, 0o600)
    }

    var url: String { "http://127.0.0.1:\(emulator.port)" }
    var api: String { "project_ref = \(ref)\naccess_token_file = \(tokenFile)\nmanagement_url = \(url)" }
    /// A webhook URL whose path is a secret, as Slack's are.
    var hook: String { "\(url)/hook/T000/B000/\(token.dropFirst(4))hook" }

    func faults(_ settings: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: settings)
        try shell("curl -sf -X POST --data-binary @- \(url)/__emulator/faults <<'EOF'\n\(String(decoding: data, as: UTF8.self))\nEOF")
    }
}

/// Every form in which a secret might show: raw and percent-encoded.
func forms(of secret: String) -> [String] {
    [secret, secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? secret,
     secret.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? secret]
}

/// What Steward stored about its runs: every summary and error.
func storedRunText(_ db: TestDatabase) throws -> String {
    try db.connect().query("select coalesce(summary::text, '') || ' ' || coalesce(error, '') from steward.job_runs").rows
        .map { try $0.decode(String.self, at: 0) }.joined(separator: "\n")
}

@Suite("answers from remote peers: invalid Retry-After, huge bodies, echoed secrets, hangs", .needsCluster, .serialized)
struct PeerAnswerTests {
    @Test("Retry-After: nan from Storage, the Management API and a webhook is ignored (named in the log), never a trap")
    func retryAfterNaN() throws {
        try AvatarWorld.with(users: 2) { w in
            try w.seed(orphans: ["o1.jpeg", "o2.jpeg"], kept: 2)
            try w.storage.faults(["rate_limit_next": 1, "retry_after": "nan"])
            let (arguments, path) = try w.arguments([], config: "")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let run = try MeasuredProcess.run(arguments, timeout: 60)
            #expect(run.signal == nil, "killed by signal \(run.signal ?? 0): \(run.stderr.suffix(2000))")
            #expect(run.exitCode == 0, "\(run.output.suffix(2000))")
            #expect(run.stderr.contains("ignored an invalid Retry-After header") && run.stderr.contains("Retry-After"), "\(run.stderr.suffix(2000))")
            #expect(try w.storage.objects() == ["keep0.jpeg", "keep1.jpeg"])
        }
        try AppleWorld.with { w in
            let m = try ManagementWorld(folder: w.folder)
            try m.faults(["rate_limit_next": 1, "retry_after": "nan"])
            let push = try MeasuredProcess.run(["apple-secret", "generate", "--push", "--days", "5", "--config", try w.config(m.api), "--database-url", w.db.url])
            #expect(push.signal == nil && push.exitCode == 0, "\(push.output.suffix(2000))")
            let soon = try w.secret(days: 3)
            try m.faults(["rate_limit_next": 1, "retry_after": "nan"])
            let hook = try MeasuredProcess.run(["job", "run", "apple-secret", "--json", "--config", try w.config("secret_file = \(soon)\nwebhook_url = \(m.hook)"),
                                                "--database-url", w.db.url])
            #expect(hook.signal == nil && hook.exitCode == 0, "\(hook.output.suffix(2000))")
            #expect(hook.stdout.contains("\"webhook_failures\":0"), "\(hook.output.suffix(2000))")
        }
    }

    @Test("an endless or huge Storage answer is cut at the cap: the run fails cleanly, naming the peer and the cap, and memory stays bounded")
    func hugeBody() throws {
        try AvatarWorld.with(users: 6) { w in
            try w.seed(orphans: ["n1.jpeg", "n2.jpeg"], kept: 6)
            let (arguments, path) = try w.arguments([], config: "")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let normal = try MeasuredProcess.run(arguments, timeout: 60)
            #expect(normal.exitCode == 0, "\(normal.output.suffix(2000))")
            var runs = 1, lost = 0
            for bytes in [-1, 2_000_000_000] {
                let names = ["h\(runs)a.jpeg", "h\(runs)b.jpeg"]
                try w.storage.reset()
                try w.storage.upload(names)
                try w.storage.age(2 * 86400, names: names)
                try w.storage.reset()
                try w.storage.faults(["huge_body_next": 5, "huge_body_bytes": bytes])
                let huge = try MeasuredProcess.run(arguments, timeout: 60)
                runs += 1
                #expect(huge.signal == nil, "killed by signal \(huge.signal ?? 0)")
                #expect(huge.exitCode != 0, "\(huge.output.suffix(2000))")
                #expect(huge.output.contains("larger than the cap of \(8 << 20) bytes") && huge.output.contains("http://127.0.0.1:\(w.storage.port)"),
                        "\(huge.output.suffix(2000))")
                #expect(normal.maxRSSKiB > 0 && huge.maxRSSKiB > 0)
                #expect(huge.maxRSSKiB < normal.maxRSSKiB + 64 * 1024, "peak RSS \(huge.maxRSSKiB) KiB against \(normal.maxRSSKiB) KiB for a normal run")
                #expect(huge.seconds < 30, "took \(huge.seconds) s")
                // Nothing referenced went: the kept objects are all there.
                let missing = Set(["keep0.jpeg", "keep1.jpeg"]).subtracting(try w.storage.objects())
                lost += missing.count
                #expect(missing.isEmpty, "\(missing)")
                print("huge answer (\(bytes) bytes): exit \(huge.exitCode ?? -1), \(String(format: "%.1f", huge.seconds)) s, peak RSS \(huge.maxRSSKiB) KiB (normal run \(normal.maxRSSKiB) KiB)")
            }
            FaultLedger.record("peer answers: endless and 2 GB bodies", runs: runs, faults: 2, objectsChecked: 4, losses: lost)
        }
    }

    @Test("a peer that echoes the request (Storage, Management API, webhook): no key, token or secret URL reaches output or history")
    func echoedSecrets() throws {
        var secretsFound = 0, runs = 0
        var texts: [String] = []
        var secrets: [String] = []
        try AvatarWorld.with(users: 2) { w in
            try w.seed(orphans: ["e1.jpeg", "e2.jpeg"], kept: 2)
            let (arguments, path) = try w.arguments([], config: "")
            defer { try? FileManager.default.removeItem(atPath: path) }
            for status in [500, 403, 429] {
                try w.storage.faults(["echo_next": 30, "echo_status": status, "retry_after": "0"])
                let run = try MeasuredProcess.run(arguments, timeout: 90)
                runs += 1
                #expect(run.signal == nil)
                #expect(run.output.contains("[redacted]"), "the echo must reach Steward and be scrubbed: \(run.output.suffix(1500))")
                texts.append(run.output)
            }
            try w.storage.reset()
            texts.append(try storedRunText(w.db))
            secrets += forms(of: w.storage.serviceRoleKey)
        }
        try AppleWorld.with { w in
            let m = try ManagementWorld(folder: w.folder)
            for (status, command) in [(401, ["apple-secret", "generate", "--push", "--days", "5"]), (500, ["apple-secret", "status"])] {
                try m.faults(["echo_next": 5, "echo_status": status, "retry_after": "0"])
                let run = try MeasuredProcess.run(command + ["--config", try w.config(m.api), "--database-url", w.db.url])
                runs += 1
                #expect(run.signal == nil && run.exitCode != 0)
                #expect(run.output.contains("[redacted]"), "\(run.output.suffix(1500))")
                texts.append(run.output)
            }
            let soon = try w.secret(days: 3)
            try m.faults(["echo_next": 5, "echo_status": 500, "retry_after": "0"])
            let hook = try MeasuredProcess.run(["job", "run", "apple-secret", "--json", "--config", try w.config("secret_file = \(soon)\nwebhook_url = \(m.hook)"),
                                                "--database-url", w.db.url])
            runs += 1
            #expect(hook.signal == nil && hook.stdout.contains("\"webhook_failures\":1"), "\(hook.output.suffix(1500))")
            #expect(hook.output.contains("[redacted]") || hook.output.contains("/…"), "\(hook.output.suffix(1500))")
            texts.append(hook.output)
            texts.append(try storedRunText(w.db))
            texts.append(try w.db.connect().query("select coalesce(string_agg(message || ' ' || coalesce(webhook_status, ''), E'\\n'), '') from steward.alerts")
                .rows[0].decode(String.self, at: 0))
            secrets += forms(of: m.token) + forms(of: String(m.hook.dropFirst(m.url.count)))
        }
        for secret in Set(secrets) {
            // Bytes, not characters: a secret glued to a neighbouring scalar still counts as found.
            for text in texts where Array(text.utf8).firstRange(of: Array(secret.utf8)) != nil {
                secretsFound += 1
                Issue.record("a secret (\(secret.prefix(6))…) showed in: \(text.suffix(800))")
            }
        }
        FaultLedger.check("secrets: echoed by a peer", runs: runs, faults: runs, objectsChecked: texts.count,
                          cases: secrets.count * texts.count, secretsFound: secretsFound)
        #expect(secretsFound == 0)
    }

    @Test("a hanging Storage or webhook: a job with timeout 2s is recorded failed within 3 s")
    func hangingPeerTimesOut() throws {
        try AvatarWorld.with(users: 2) { w in
            try w.seed(orphans: ["t1.jpeg", "t2.jpeg"], kept: 2)
            try w.storage.faults(["hang_next": 20, "hang_s": 600])
            let (arguments, path) = try w.arguments([], config: "timeout = 2s")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let run = try MeasuredProcess.run(arguments, timeout: 60)
            #expect(run.signal == nil && run.exitCode != 0, "\(run.output.suffix(1500))")
            let row = try w.db.connect().query("select status, extract(epoch from finished_at - started_at)::float8, coalesce(error, '') from steward.job_runs where job = 'orphan-avatars' order by id desc limit 1").rows[0]
            #expect(try row.decode(String.self, at: 0) == "failed")
            let seconds = try row.decode(Double.self, at: 1)
            let error = try row.decode(String.self, at: 2)
            #expect(seconds < 3, "recorded after \(seconds) s: \(error)")
            #expect(run.seconds < 6, "the process took \(run.seconds) s")
            print("hanging Storage, timeout 2 s: recorded failed after \(String(format: "%.2f", seconds)) s, process \(String(format: "%.2f", run.seconds)) s")
        }
        try AppleWorld.with { w in
            let m = try ManagementWorld(folder: w.folder)
            let soon = try w.secret(days: 3)
            try m.faults(["hang_next": 20, "hang_s": 600])
            let run = try MeasuredProcess.run(["job", "run", "apple-secret", "--json", "--config",
                                               try w.config("secret_file = \(soon)\nwebhook_url = \(m.hook)\n[job.apple-secret]\ntimeout = 2s"),
                                               "--database-url", w.db.url], timeout: 60)
            #expect(run.signal == nil, "\(run.output.suffix(1500))")
            let row = try w.db.connect().query("select status, extract(epoch from finished_at - started_at)::float8 from steward.job_runs where job = 'apple-secret' order by id desc limit 1").rows[0]
            let status = try row.decode(String.self, at: 0)
            #expect(status == "failed", "\(status): \(run.output.suffix(1500))")
            let seconds = try row.decode(Double.self, at: 1)
            #expect(seconds < 3, "recorded after \(seconds) s")
            #expect(run.seconds < 6, "the process took \(run.seconds) s")
            print("hanging webhook, timeout 2 s: recorded failed after \(String(format: "%.2f", seconds)) s, process \(String(format: "%.2f", run.seconds)) s")
        }
    }

    @Test("SIGTERM with a job stuck on a hanging webhook and shutdown_timeout 2: the daemon exits within 3 s, 'stopped' is its last line")
    func shutdownDeadline() throws {
        try AppleWorld.with { w in
            let m = try ManagementWorld(folder: w.folder)
            let soon = try w.secret(days: 3)
            try m.faults(["hang_next": 50, "hang_s": 600])
            let apple = try String(contentsOfFile: try w.config("secret_file = \(soon)\nwebhook_url = \(m.hook)"), encoding: .utf8)
            let daemon = try DaemonProcess(databaseURL: w.db.url, config: apple + "\n[job.apple-secret]\nschedule = @every 1s\ntimeout = 1h\n", shutdownTimeout: 2)
            var running = false
            for _ in 0..<300 where !running {
                let jobs = (try? daemon.ctlJSON(["jobs"])["jobs"] as? [[String: Any]]) ?? []
                running = jobs.contains { $0["name"] as? String == "apple-secret" && $0["running"] as? Bool == true }
                if !running { usleep(100_000) }
            }
            #expect(running, "the job never started: \(daemon.process.stderrSoFar.suffix(1500))")
            usleep(500_000)   // inside the webhook transfer
            let started = Date()
            daemon.process.kill(SIGTERM)
            let result = daemon.process.wait(timeout: 30)
            let seconds = Date().timeIntervalSince(started)
            #expect(result.exitCode == 0, "\(result.stderr.suffix(1500))")
            #expect(seconds < 3, "the daemon lived \(seconds) s after SIGTERM")
            let lines = result.stderr.split(separator: "\n").filter { !$0.isEmpty }
            #expect(lines.last?.contains("stopped") == true, "last line: \(lines.last ?? "")")
            let recorded = try w.db.connect().query("select status || ' ' || coalesce(error, '') from steward.job_runs where job = 'apple-secret' order by id").rows
                .map { try $0.decode(String.self, at: 0) }
            #expect(recorded.contains { $0.hasPrefix("failed cancelled before it finished") }, "\(recorded)")
            print("daemon under SIGTERM with a hanging webhook, shutdown_timeout 2 s: exited after \(String(format: "%.2f", seconds)) s; runs: \(recorded)")
        }
    }
}

@Suite("answers from remote peers: generated hostile answers against the real binary", .needsCluster, .serialized)
struct HostilePeerAnswerTests {
    /// Posts `settings` to an emulator's fault route; returns how many raw answers are still queued.
    @discardableResult
    func queue(_ url: String, _ settings: [String: Any]) throws -> Int {
        let data = try JSONSerialization.data(withJSONObject: settings)
        let reply = try shell("curl -sf -X POST --data-binary @- \(url)/__emulator/faults <<'EOF'\n\(String(decoding: data, as: UTF8.self))\nEOF")
        return ((try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any])?["raw_next"] as? [Any])?.count ?? 0
    }

    @Test("generated hostile answers from Storage (orphan-avatars) and the Management API (push): no crash, every run ends")
    func generatedAnswers() throws {
        let seed = SeededGenerator.seedFromEnvironment
        print("hostile answers: seed \(seed) (STEWARD_TEST_SEED=\(seed) replays it)")
        var generator = HostileAnswers(seed: seed)
        var cases = 0, crashes = 0, runs = 0, ignored = 0
        try AvatarWorld.with(users: 2) { w in
            try w.seed(orphans: [], kept: 2)
            // --force: objects the hostile answers kept from being deleted pile up, and the brake would stop every later round.
            let (arguments, path) = try w.arguments(["--force"], config: "timeout = 20s")
            defer { try? FileManager.default.removeItem(atPath: path) }
            for round in 0..<16 {
                try w.storage.reset()
                try w.storage.upload(["g\(round)a.jpeg", "g\(round)b.jpeg"])
                try w.storage.age(2 * 86400, names: ["g\(round)a.jpeg", "g\(round)b.jpeg"])
                let answers = (0..<6).map { _ in generator.answer() }
                try queue(w.storage.url, ["raw_next": answers.map { Data($0).base64EncodedString() }])
                let run = try MeasuredProcess.run(arguments, timeout: 60)
                runs += 1
                let left = try queue(w.storage.url, [:])
                cases += answers.count - left
                ignored += run.stderr.components(separatedBy: "ignored an invalid Retry-After header").count - 1
                if run.crashed {
                    crashes += 1
                    Issue.record("orphan-avatars killed by signal \(run.signal ?? 0) (seed \(seed), round \(round)): \(run.stderr.suffix(1500))")
                }
                #expect(!run.timedOut, "round \(round) did not end (seed \(seed))")
                #expect(try w.storage.objects().isSuperset(of: ["keep0.jpeg", "keep1.jpeg"]), "a referenced object went (seed \(seed))")
            }
        }
        try AppleWorld.with { w in
            let m = try ManagementWorld(folder: w.folder)
            for round in 0..<12 {
                let answers = (0..<4).map { _ in generator.answer() }
                try queue(m.url, ["raw_next": answers.map { Data($0).base64EncodedString() }])
                let command = round % 2 == 0 ? ["apple-secret", "generate", "--push", "--days", "5"] : ["apple-secret", "status"]
                let run = try MeasuredProcess.run(command + ["--config", try w.config(m.api), "--database-url", w.db.url], timeout: 60)
                runs += 1
                let left = try queue(m.url, ["raw_next": []])
                cases += answers.count - left
                if run.crashed {
                    crashes += 1
                    Issue.record("\(command.joined(separator: " ")) killed by signal \(run.signal ?? 0) (seed \(seed), round \(round)): \(run.stderr.suffix(1500))")
                }
                #expect(!run.timedOut, "round \(round) did not end (seed \(seed))")
                #expect(!run.output.contains(m.token))
            }
        }
        print("hostile answers: \(cases) served in \(runs) runs, \(ignored) invalid Retry-After headers ignored, \(crashes) crashes")
        FaultLedger.check("peer answers: fuzzed and hostile", runs: runs, faults: cases,
                          cases: cases, crashes: crashes)
        #expect(crashes == 0)
        #expect(cases > 0)
    }
}
