import Foundation
import TestSupport

/// Control-socket request lines made up from a seed: valid requests, requests with wrong words, numbers,
/// flags, separators and encodings, and valid ones mutated byte by byte.
enum RequestGenerator {
    struct Request {
        let bytes: [UInt8]
        /// Ends with a half-close instead of a newline.
        let halfClose: Bool
    }

    static let commands = ["status", "jobs", "history", "run", "pause", "resume", "migrations", "verify", "reload", "metrics", "help"]
    static let words = ["prune-history", "orphan-avatars", "username-check", "apple-secret", "nosuchjob", "PRUNE-HISTORY", "prune_history",
                        "../prune-history", "prune-history\u{0}", "%70rune-history", "ｐrune-history", "prune-history\u{301}", ""]
    static let numbers = ["0", "1", "10", "1000", "1001", "-1", "+5", "007", "99999999999999999999999", "9223372036854775807",
                          "-9223372036854775808", "1e3", "1.5", "nan", "inf", "0x10", "٣", "１０", " 5", "5 ", "10\u{0}"]
    static let flags = ["--dry-run", "--DRY-RUN", "--dry-run=1", "--", "---", "-", "--dry", "--help", "--dry-run--dry-run", "—dry-run"]
    static let separators = [" ", "  ", "\t", " \t ", "\u{00A0}", "\u{3000}", "\r", "\u{000B}", "\u{000C}"]

    static func next<G: RandomNumberGenerator>(using random: inout G) -> Request {
        var line: [UInt8]
        switch Int.random(in: 0..<10, using: &random) {
        case 0...3: line = Array(composed(using: &random).utf8)
        case 4...7: line = mutate(Array(composed(using: &random).utf8), using: &random)
        case 8: line = (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        default: line = Array(String(repeating: composed(using: &random) + " ", count: Int.random(in: 1...800, using: &random)).utf8)
        }
        if Int.random(in: 0..<8, using: &random) == 0 { line.append(0x0D) }
        let halfClose = Int.random(in: 0..<10, using: &random) == 0
        if !halfClose { line.append(0x0A) }
        return Request(bytes: line, halfClose: halfClose)
    }

    /// A request built from the protocol's own words and near misses.
    static func composed<G: RandomNumberGenerator>(using random: inout G) -> String {
        var command = commands.randomElement(using: &random)!
        switch Int.random(in: 0..<8, using: &random) {
        case 0: command = command.uppercased()
        case 1: command = String(command.dropLast())
        case 2: command += "\u{0}"
        default: break
        }
        var parts = [command]
        for _ in 0..<Int.random(in: 0...3, using: &random) {
            switch Int.random(in: 0..<3, using: &random) {
            case 0: parts.append(words.randomElement(using: &random)!)
            case 1: parts.append(numbers.randomElement(using: &random)!)
            default: parts.append(flags.randomElement(using: &random)!)
            }
        }
        // Keep the daemon's state sane: never reload or run for real from generated input, only dry runs.
        if parts.first == "run" && !parts.contains("--dry-run") { parts.append("--dry-run") }
        if parts.first == "reload" { parts[0] = "reloa" }
        var text = ""
        for (i, part) in parts.enumerated() {
            if i > 0 { text += separators.randomElement(using: &random)! }
            text += part
        }
        return text
    }

    /// A few random byte edits: insert, delete, replace, duplicate a stretch, flip case.
    static func mutate<G: RandomNumberGenerator>(_ line: [UInt8], using random: inout G) -> [UInt8] {
        var bytes = line
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let at = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<5, using: &random) {
            case 0: bytes.insert(UInt8.random(in: 0...255, using: &random), at: at)
            case 1: if !bytes.isEmpty { bytes.remove(at: at) }
            case 2: if !bytes.isEmpty { bytes[at] = UInt8.random(in: 0...255, using: &random) }
            case 3: if !bytes.isEmpty { bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + 8)], at: at) }
            default: if !bytes.isEmpty { bytes[at] ^= 0x20 }
            }
        }
        // A mutated line could turn into a real run or reload; keep those dry.
        let text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("reload") { bytes.insert(0x5F, at: 0) }
        if text.hasPrefix("run") && !text.contains("--dry-run") { bytes += Array(" --dry-run".utf8) }
        return bytes
    }
}
