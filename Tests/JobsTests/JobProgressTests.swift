#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Jobs
import StewardLog
import Testing
import TestSupport

@Suite("job progress: estimates and the periodic log line", .serialized)
struct JobProgressTests {
    /// Numbers from the edges and from anywhere.
    static func int64(_ g: inout SeededGenerator) -> Int64 {
        let edges: [Int64] = [0, 1, -1, 2, Int64.max, Int64.min, Int64.max - 1, 1_000_000, -1_000_000, 1 << 53, (1 << 53) + 1]
        return Bool.random(using: &g) ? edges[Int.random(in: 0..<edges.count, using: &g)] : Int64.random(in: Int64.min...Int64.max, using: &g)
    }

    static func seconds(_ g: inout SeededGenerator) -> Double {
        let edges: [Double] = [0, -0.0, -1, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1e-300, 1e300, 0.001, 3600]
        return Bool.random(using: &g) ? edges[Int.random(in: 0..<edges.count, using: &g)] : Double.random(in: -1e6...1e12, using: &g)
    }

    @Test("rate, time left and ratio stay bounded for generated done, total and elapsed (zero, negative, huge, NaN): never a trap")
    func estimatesNeverTrap() {
        var g = SeededGenerator.fromEnvironment()
        print("seed \(g.seed) (STEWARD_TEST_SEED replays it)")
        for _ in 0..<20_000 {
            let done = Self.int64(&g)
            let total: Int64? = Int.random(in: 0..<4, using: &g) == 0 ? nil : Self.int64(&g)
            let elapsed = Self.seconds(&g)
            let e = JobProgressEstimate(phase: "scanning", done: done, total: total, elapsedSeconds: elapsed)
            let context = "seed \(g.seed) done \(done) total \(String(describing: total)) elapsed \(elapsed)"
            #expect(e.done >= 0 && (e.total ?? 0) >= 0, "\(context)")
            #expect(e.elapsedSeconds.isFinite && e.elapsedSeconds >= 0, "\(context)")
            if let rate = e.ratePerSecond { #expect(rate.isFinite && rate >= 0, "\(context)") }
            if let eta = e.etaSeconds { #expect(eta.isFinite && eta >= 0 && eta <= JobProgressEstimate.maximumSeconds, "\(context)") }
            if let ratio = e.ratio { #expect(ratio >= 0 && ratio <= 1, "\(context)") }
            #expect((e.ratio == nil) == (total == nil), "\(context)")
            if let t = e.total, e.done >= t { #expect(e.etaSeconds == 0 && e.ratio == 1, "\(context)") }
            if e.elapsedSeconds == 0 { #expect(e.ratePerSecond == nil, "\(context)") }
            #expect(e.metadata.map(\.0) == ["phase", "done", "total", "rate_per_s", "eta_s"])
            #expect(e.metadata.allSatisfy { !$0.1.isEmpty }, "\(context)")
            #expect(e.line.count < 120, "\(e.line) \(context)")
        }
    }

    @Test("known figures: 250 of 1000 after 10 s is 25 a second, 30 s left, 25 %")
    func knownFigures() {
        let e = JobProgressEstimate(phase: "deleting", done: 250, total: 1000, elapsedSeconds: 10)
        #expect(e.ratePerSecond == 25 && e.etaSeconds == 30 && e.ratio == 0.25)
        #expect(e.line == "deleting 250/1000 (25.0%) 25/s, 30s left")
        #expect(e.metadata.map(\.1) == ["deleting", "250", "1000", "25.0", "30"])
        let unknown = JobProgressEstimate(phase: "listing", done: 7, total: nil, elapsedSeconds: 2)
        #expect(unknown.line == "listing 7 3.5/s" && unknown.etaSeconds == nil)
        #expect(JobProgressEstimate(phase: "x", done: 1, total: 3_601_000, elapsedSeconds: 1).line.hasSuffix("1000h 16m left"))
    }

    @Test("generated advance/set calls never trap: done saturates, never passes a set total, never goes negative")
    func progressNeverTraps() {
        var g = SeededGenerator.fromEnvironment()
        print("seed \(g.seed) (STEWARD_TEST_SEED replays it)")
        for _ in 0..<200 {
            let progress = JobProgress()
            for _ in 0..<50 {
                switch Int.random(in: 0..<4, using: &g) {
                case 0: progress.begin("phase", total: Bool.random(using: &g) ? Self.int64(&g) : nil)
                case 1: progress.advance(by: Self.int64(&g))
                case 2: progress.set(done: Self.int64(&g))
                default: progress.set(total: Bool.random(using: &g) ? Self.int64(&g) : nil)
                }
                let s = progress.snapshot
                #expect(s.done >= 0 && (s.total ?? 0) >= 0, "seed \(g.seed): \(s)")
                _ = JobProgressEstimate(s).line
            }
        }
    }

    /// Runs `body` under a reporter logging to a pipe every `interval` seconds; `body` is given a count of the lines
    /// written so far. Returns the lines, and how long `body` really ran (on a loaded machine longer than it asked).
    func reported(interval: Double, _ body: (() -> Int) async throws -> Void) async throws -> (lines: [String], ran: Double) {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        let sink = LogSink(minimumLevel: .info, format: .text, fd: fds[1], journald: false)
        let progress = JobProgress()
        progress.begin("copying", total: 100)
        progress.advance(by: 40)
        let reporter = JobProgressReporter(progress: progress, logger: Logger(label: "jobs", sink: sink), job: "demo", runID: 7,
                                           intervalSeconds: interval)
        var bytes: [UInt8] = []
        func drain() -> Int {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(fds[0], &buffer, buffer.count)
                if n <= 0 { break }
                bytes += buffer[0..<n]
            }
            return bytes.filter { $0 == UInt8(ascii: "\n") }.count
        }
        let clock = ContinuousClock()
        var ran = Duration.zero
        try await reporter.reporting {
            let started = clock.now
            try await body(drain)
            ran = clock.now - started
        }
        // Nothing more may come once the run is over.
        try await Task.sleep(for: .milliseconds(Int64(interval * 3000)))
        close(fds[1])
        _ = drain()
        let seconds = Double(ran.components.seconds) + Double(ran.components.attoseconds) / 1e18
        return (String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init), seconds)
    }

    @Test("a run longer than the interval logs 'job progress' with job, run, phase, done, total, rate and eta; a short one logs none; none after the end")
    func periodicLine() async throws {
        // A long run: it lasts until two lines came (at most 20 s), and never gets more than one line an interval.
        let long = try await reported(interval: 0.1) { linesSoFar in
            let clock = ContinuousClock(), until = clock.now + .seconds(20)
            while linesSoFar() < 2 && clock.now < until { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(long.lines.count >= 2 && Double(long.lines.count) <= long.ran / 0.1 + 1, "\(long)")
        for line in long.lines {
            #expect(line.contains("info jobs: job progress job=demo run=7 phase=copying done=40 total=100 rate_per_s="), "\(line)")
            #expect(line.range(of: #"rate_per_s=[0-9]+\.[0-9] eta_s=[0-9]+$"#, options: .regularExpression) != nil, "\(line)")
        }
        // A short run logs nothing, unless the machine stretched it past the interval.
        let short = try await reported(interval: 0.5) { _ in try await Task.sleep(for: .milliseconds(50)) }
        #expect(short.lines.isEmpty || short.ran >= 0.5, "\(short)")
    }
}
