import Foundation

/// Inputs Steward did not choose, for the tests that try to break its parsers: a seeded generator (the seed is
/// printed by the tests, so any failure replays), byte-level mutations, and the libFuzzer corpora in `Tests/Fuzz/config/corpus`.
public struct HostileInputs {
    /// The same seeded generator as every generated test's.
    public typealias Generator = SeededGenerator

    public var random: Generator
    public init(seed: UInt64) { random = Generator(seed: seed) }

    /// The seed for this run: `STEWARD_TEST_SEED` if set, else a fresh one.
    public static var seed: UInt64 { SeededGenerator.seedFromEnvironment }

    /// The committed libFuzzer corpus `name` (`config`, `schedule`, `control`, `logtext`), file by file.
    public static func corpus(_ name: String) -> [[UInt8]] {
        let folder = TestEnvironment.root + "/Tests/Fuzz/config/corpus/" + name
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.sorted() ?? []
        return files.compactMap { FileManager.default.contents(atPath: folder + "/" + $0).map { Array($0) } }
    }

    /// Numbers and words that have broken parsers: nan, infinities, exponents, hex, overflow, signs, Unicode digits.
    public static let hostileNumbers = [
        "nan", "NaN", "inf", "-inf", "infinity", "1e300", "-1e300", "1e-300", "-1", "-0", "0", "0.0", "1", "0.05", "86401",
        "99999999999", "9223372036854775807", "9223372036854775808", "99999999999999999999999", "0x10", "0x1p3", "+5", " 5",
        "5 ", "1_000", "1,5", "١٢", "½", "", ".", "5.", ".5", "1..2", "--1", "1e3", "4294967296", "2147483648",
    ]

    /// Durations and schedules that have broken parsers.
    public static let hostileDurations = [
        "99999999999s", "999999999999999d", "9223372036854775807s", "9223372036854775807d", "106751991167301d", "1d1d1d1d",
        "0s", "1s", "366d", "367d", "3660d", "3661d", "1h30m", "90", "s", "5x", "5 m", "٣s", "1.5h", "-5s", "+5s", "1e3s",
        String(repeating: "9", count: 400) + "s", "@every 0s", "@every 99999999999999d", "@every 367d", "@every",
    ]

    /// Words that name Steward's keys, with the values they take, for generated config files.
    public static let keys: [(String, String)] = [
        ("database", "url"), ("database", "password_file"), ("database", "connect_timeout"), ("migrations", "lock_wait"),
        ("migrations", "lock_timeout"), ("migrations", "statement_timeout"), ("migrations", "dir"), ("log", "level"),
        ("log", "format"), ("storage", "url"), ("storage", "service_key_file"), ("apple", "remind_days"),
        ("apple", "rotate_days_before"), ("apple", "management_url"), ("apple", "webhook_url"), ("metrics", "interval"),
        ("metrics", "textfile"), ("daemon", "leader_poll"), ("daemon", "shutdown_timeout"), ("daemon", "host"),
        ("job.prune-history", "timeout"), ("job.prune-history", "retry_backoff"), ("job.prune-history", "retries"),
        ("job.prune-history", "schedule"), ("job.prune-history", "time_zone"), ("job.prune-history", "retention"),
        ("job.username-check", "timeout"), ("job.username-check", "page_size"), ("job.orphan-avatars", "grace"),
        ("job.orphan-avatars", "fence_wait"), ("job.orphan-avatars", "fence_request_timeout"), ("job.orphan-avatars", "batch_size"),
        ("job.orphan-avatars", "max_fraction"), ("job.orphan-avatars", "max_per_run"), ("control", "socket"),
    ]

    static let values = hostileNumbers + hostileDurations + [
        "http://example.com", "http://127.0.0.1:9000", "https://x", "credential:../x", "credential:", "credential:a/b",
        "postgresql://u:Sup3r%zzSecretPW@h/db", "host=h password=two words", "Mars/Olympus", "../../etc/passwd", "Etc/GMT+5",
        "0 3 * * *", "61 * * * *", "*/0 * * * *", "* * * * * *", "@hourly", "@every 1h30m", "skip", "catch-up", "true", "on",
        "/run/steward/" + String(repeating: "s", count: 120), "a\u{2028}b", "\u{202E}evil", "x\u{0}y",
    ]

    /// A random pick from `list`.
    public mutating func pick<T>(_ list: [T]) -> T { list[Int(random.next() % UInt64(list.count))] }

    /// A generated config file: known keys with hostile values, and structural faults (duplicates, indents,
    /// control bytes, long lines, missing sections).
    public mutating func configFile() -> [UInt8] {
        var lines: [String] = []
        var section = ""
        for _ in 0..<(1 + Int(random.next() % 6)) {
            let (s, k) = pick(Self.keys)
            if s != section || random.next() % 5 == 0 { lines.append("[\(s)]"); section = s }
            lines.append("\(k) = \(pick(Self.values))")
            switch random.next() % 12 {
            case 0: lines.append(lines.last!)
            case 1: lines.append("  continued")
            case 2: lines.append(String(repeating: "x", count: Int(random.next() % 3000)))
            case 3: lines.insert("key = before any section", at: 0)
            default: break
            }
        }
        var bytes = Array(lines.joined(separator: random.next() % 4 == 0 ? "\r\n" : "\n").utf8)
        if random.next() % 3 == 0 { bytes = mutate(bytes) }
        return bytes
    }

    /// `input` with a few random edits: bytes flipped, inserted (controls, high bytes, `[`, `=`, newlines), removed, repeated.
    public mutating func mutate(_ input: [UInt8]) -> [UInt8] {
        var bytes = input
        let specials: [UInt8] = [0, 0x0A, 0x0D, 0x09, 0x20, 0x3D, 0x5B, 0x5D, 0x3B, 0x23, 0x25, 0x40, 0x2F, 0x7F, 0x80, 0xC2, 0xE2, 0xFF, 0x30, 0x39]
        for _ in 0..<(1 + Int(random.next() % 4)) {
            let position = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count + 1))
            switch random.next() % 5 {
            case 0 where !bytes.isEmpty && position < bytes.count: bytes[position] ^= UInt8(truncatingIfNeeded: 1 << (random.next() % 8))
            case 1: bytes.insert(pick(specials), at: position)
            case 2 where position < bytes.count: bytes.remove(at: position)
            case 3 where position < bytes.count:
                let end = min(bytes.count, position + 1 + Int(random.next() % 16))
                bytes.insert(contentsOf: Array(bytes[position..<end]), at: position)
            default: bytes.insert(contentsOf: Array(pick(Self.values).utf8), at: position)
            }
        }
        return bytes
    }
}
