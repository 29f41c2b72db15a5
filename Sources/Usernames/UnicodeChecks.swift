internal import CUnicode
#if canImport(Glibc)
import Glibc
#endif

/// ICU's answers about a string (UTS #39 skeleton, NFKC case folding, restriction level), via the C target.
public enum UnicodeChecks {
    /// How many scripts a string mixes, as ICU's restriction levels rank it.
    public enum RestrictionLevel: Int, Sendable, Comparable, CustomStringConvertible {
        case ascii = 1, singleScript, highlyRestrictive, moderatelyRestrictive, minimallyRestrictive, unrestrictive

        public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

        public var description: String {
            switch self {
            case .ascii: "ascii"
            case .singleScript: "single-script"
            case .highlyRestrictive: "highly-restrictive"
            case .moderatelyRestrictive: "moderately-restrictive"
            case .minimallyRestrictive: "minimally-restrictive"
            case .unrestrictive: "unrestrictive"
            }
        }

        public init?(name: String) {
            guard let level = [RestrictionLevel.ascii, .singleScript, .highlyRestrictive, .moderatelyRestrictive, .minimallyRestrictive, .unrestrictive]
                .first(where: { $0.description == name }) else { return nil }
            self = level
        }
    }

    /// Loads ICU (on first use); throws, naming the library, when it cannot be had: the rules would be meaningless.
    public static func load() throws(UnicodeUnavailable) {
        if let error = steward_unicode_load_error() { throw UnicodeUnavailable(reason: String(cString: error)) }
    }

    /// ICU could not be loaded.
    public struct UnicodeUnavailable: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { "ICU is not available (install libicu72): \(reason)" }
    }

    /// The UTS #39 skeleton: two strings that look alike have the same one (`pаypal` with a Cyrillic а and `paypal`).
    public static func skeleton(_ text: String) -> String { transform(text, steward_skeleton) }

    /// NFKC with case folding: the form in which `Ｂｏｂ`, `BOB` and `bob` are one.
    public static func nfkcCasefold(_ text: String) -> String { transform(text, steward_nfkc_casefold) }

    /// ICU's restriction level of `text`.
    public static func restrictionLevel(_ text: String) -> RestrictionLevel {
        let units = Array(text.utf16)
        return RestrictionLevel(rawValue: Int(steward_restriction_level(units, Int32(units.count)))) ?? .unrestrictive
    }

    /// A username's normal form (`nfkcCasefold`), the skeleton of that form, and the username's restriction level,
    /// in one pass through ICU: the same answers as the three calls one by one.
    public static func keys(_ text: String) -> (folded: String, skeleton: String, level: RestrictionLevel) {
        var text = text
        // The folded form is nil when it is the text itself (most usernames), so no second copy is made.
        let answer = text.withUTF8 { bytes -> (folded: String?, skeleton: String, level: RestrictionLevel)? in
            guard let length = Int32(exactly: bytes.count) else { return nil }
            var result = steward_username_keys_result()
            let status = bytes.withMemoryRebound(to: CChar.self) { steward_username_keys($0.baseAddress, length, &result) }
            guard status == 0, let level = RestrictionLevel(rawValue: Int(result.level)) else { return nil }
            let folded = sameBytes(result.folded, result.folded_length, bytes) ? nil : string(result.folded, result.folded_length)
            return (folded, string(result.skeleton, result.skeleton_length), level)
        }
        guard let answer else {
            let folded = nfkcCasefold(text)
            return (folded, skeleton(folded), restrictionLevel(text))
        }
        return (answer.folded ?? text, answer.skeleton, answer.level)
    }

    private static func sameBytes(_ pointer: UnsafePointer<CChar>?, _ length: Int32, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard Int(length) == bytes.count else { return false }
        guard let pointer, let base = bytes.baseAddress else { return length == 0 }
        return memcmp(pointer, base, bytes.count) == 0
    }

    private static func string(_ pointer: UnsafePointer<CChar>?, _ length: Int32) -> String {
        guard let pointer, length > 0 else { return "" }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
            String(decoding: UnsafeBufferPointer(start: $0, count: Int(length)), as: UTF8.self)
        }
    }

    private static func transform(_ text: String,
                                  _ function: (UnsafePointer<UInt16>?, Int32, UnsafeMutablePointer<UInt16>?, Int32) -> Int32) -> String {
        let units = Array(text.utf16)
        var capacity = max(16, units.count * 3)
        for _ in 0..<2 {
            var out = [UInt16](repeating: 0, count: capacity)
            let n = function(units, Int32(units.count), &out, Int32(capacity))
            if n >= 0 { return String(decoding: out[..<Int(n)], as: UTF16.self) }
            if n == Int32.min { return text }
            capacity = Int(-n) + 1
        }
        return text
    }
}
