#if canImport(Glibc)
import Glibc
#endif

/// A time zone read from the system's tzdata (`/usr/share/zoneinfo`): the UTC offset at any instant and the
/// instants the offset changes, from the file's table and, past its end, from its POSIX `TZ` footer rule.
public struct TimeZoneRules: Sendable, Equatable {
    /// The name it was loaded by (`Europe/Berlin`, `UTC`).
    public let identifier: String
    /// Instants (seconds since 1970-01-01 UTC) at which `types[transitionTypes[i]]` takes effect, ascending.
    let transitions: [Int64]
    let transitionTypes: [UInt8]
    let types: [LocalTimeType]
    /// The rule for instants from the last transition on; nil keeps the last type in force.
    let footer: POSIXZoneRule?

    /// Instants are clamped to ±2⁵⁹ s (about 18 billion years) before any calendar arithmetic.
    static let instantLimit: Int64 = 1 << 59

    /// Where tzdata lives on Debian.
    public static let defaultDirectory = "/usr/share/zoneinfo"

    /// Coordinated Universal Time, known without any file.
    public static let utc = TimeZoneRules(identifier: "UTC", transitions: [], transitionTypes: [],
                                          types: [LocalTimeType(utcOffset: 0, isDaylightSaving: false)], footer: nil)

    init(identifier: String, transitions: [Int64], transitionTypes: [UInt8], types: [LocalTimeType], footer: POSIXZoneRule?) {
        self.identifier = identifier
        self.transitions = transitions
        self.transitionTypes = transitionTypes
        self.types = types
        self.footer = footer
    }

    /// The zone `identifier` (an IANA name such as `Europe/Berlin`) from the tzdata in `directory`.
    /// `UTC` and `GMT` are known without a file.
    public init(identifier: String, directory: String = TimeZoneRules.defaultDirectory) throws(TimeZoneError) {
        if (identifier == "UTC" || identifier == "GMT") && directory == Self.defaultDirectory {
            self = TimeZoneRules(identifier: identifier, transitions: [], transitionTypes: [], types: Self.utc.types, footer: nil)
            return
        }
        guard !identifier.isEmpty, !identifier.hasPrefix("/"), identifier.utf8.count <= 255,
              !identifier.utf8.contains(0),
              identifier.split(separator: "/", omittingEmptySubsequences: false).allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
            throw TimeZoneError("unknown time zone \"\(identifier)\"")
        }
        let path = directory + "/" + identifier
        let bytes = try Self.readFile(path, zone: identifier)
        self = try TZifFile.parse(bytes, identifier: identifier, path: path)
    }

    /// The zone stated by the TZif `bytes` read from `path` (named in any error).
    public init(tzif bytes: [UInt8], identifier: String, path: String) throws(TimeZoneError) {
        self = try TZifFile.parse(bytes, identifier: identifier, path: path)
    }

    /// Seconds east of UTC at `instant` (seconds since 1970-01-01 UTC).
    public func secondsFromGMT(at instant: Int64) -> Int { localTimeType(at: instant).utcOffset }

    /// Whether daylight saving time is in force at `instant`.
    public func isDaylightSavingTime(at instant: Int64) -> Bool { localTimeType(at: instant).isDaylightSaving }

    /// The local time type in force at `instant`.
    public func localTimeType(at instant: Int64) -> LocalTimeType {
        guard let first = transitions.first, instant >= first else { return typeBeforeFirstTransition }
        if let footer, let last = transitions.last, instant >= last { return footer.localTimeType(at: instant) }
        return types[Int(transitionTypes[lastTransitionIndex(atOrBefore: instant)])]
    }

    /// The first instant after `instant` at which the UTC offset changes; nil if it never changes again.
    public func nextTransition(after instant: Int64) -> Int64? {
        var current = secondsFromGMT(at: instant)
        var i = transitions.first.map { instant < $0 ? 0 : lastTransitionIndex(atOrBefore: instant) + 1 } ?? 0
        while i < transitions.count {
            let offset = types[Int(transitionTypes[i])].utcOffset
            if offset != current { return transitions[i] }
            current = offset
            i += 1
        }
        guard let footer else { return nil }
        let from = max(instant, transitions.last ?? instant)
        if from > instant, footer.localTimeType(at: from).utcOffset != current { return from }
        var cursor = from
        // A rule changes the offset at least once a year when it changes it at all.
        for _ in 0..<4 {
            guard let next = footer.nextChange(after: cursor) else { return nil }
            if footer.localTimeType(at: next).utcOffset != current { return next }
            cursor = next
        }
        return nil
    }

    /// The type for instants before the first transition: the first standard-time type, as the C library does.
    private var typeBeforeFirstTransition: LocalTimeType {
        types.first(where: { !$0.isDaylightSaving }) ?? types[0]
    }

    /// The index of the last transition at or before `instant` (which is at or after the first one).
    private func lastTransitionIndex(atOrBefore instant: Int64) -> Int {
        var low = 0, high = transitions.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if transitions[mid] <= instant { low = mid } else { high = mid - 1 }
        }
        return low
    }

    /// The bytes of `path`, at most 1 MiB.
    private static func readFile(_ path: String, zone: String) throws(TimeZoneError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw TimeZoneError("unknown time zone \"\(zone)\" (no file \(path))") }
            throw TimeZoneError("\(path): cannot open: \(String(cString: strerror(code)))")
        }
        defer { close(fd) }
        let limit = 1 << 20
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw TimeZoneError("\(path): cannot read: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > limit { throw TimeZoneError("\(path): larger than 1 MiB, not a tzdata file") }
        }
        return bytes
    }
}
