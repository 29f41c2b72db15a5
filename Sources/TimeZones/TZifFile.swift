/// The TZif format of tzdata files (RFC 8536): version 1 with 32-bit transitions, versions 2+ with 64-bit ones
/// and a POSIX `TZ` footer.
enum TZifFile {
    /// The zone stated by `bytes`, read from `path`; an error naming `path` and the fault for anything malformed.
    static func parse(_ bytes: [UInt8], identifier: String, path: String) throws(TimeZoneError) -> TimeZoneRules {
        func fail(_ what: String) -> TimeZoneError { TimeZoneError("\(path): not a valid tzdata (TZif) file: \(what)") }
        var reader = Reader(bytes: bytes)
        let first = try header(&reader, fail)
        let timeSize = first.version >= 2 ? 8 : 4
        if first.version >= 2 {
            // Skip the version 1 block: the 64-bit block after it says the same for every instant.
            guard reader.skip(first.blockSize(timeSize: 4)) else { throw fail("truncated version 1 data") }
        }
        let h = first.version >= 2 ? try header(&reader, fail) : first
        guard reader.remaining >= h.blockSize(timeSize: timeSize) else { throw fail("truncated data block") }
        var transitions: [Int64] = []
        transitions.reserveCapacity(h.timeCount)
        for _ in 0..<h.timeCount {
            let t = timeSize == 8 ? reader.int64() : Int64(reader.int32())
            if let last = transitions.last, t <= last { throw fail("transition times out of order") }
            transitions.append(t)
        }
        var transitionTypes: [UInt8] = []
        transitionTypes.reserveCapacity(h.timeCount)
        for _ in 0..<h.timeCount {
            let index = reader.byte()
            guard Int(index) < h.typeCount else { throw fail("transition names local time type \(index) of \(h.typeCount)") }
            transitionTypes.append(index)
        }
        var types: [LocalTimeType] = []
        for _ in 0..<h.typeCount {
            let offset = Int(reader.int32())
            let dst = reader.byte()
            let abbreviation = reader.byte()
            // RFC 8536: offsets within (−2³¹, 2³¹); real ones are within a day and a few hours.
            guard offset > -26 * 3600, offset < 26 * 3600 else { throw fail("UTC offset \(offset) s out of range") }
            guard dst <= 1 else { throw fail("daylight-saving flag \(dst) is neither 0 nor 1") }
            guard Int(abbreviation) < h.charCount else { throw fail("abbreviation index \(abbreviation) past \(h.charCount) bytes") }
            types.append(LocalTimeType(utcOffset: offset, isDaylightSaving: dst == 1))
        }
        _ = reader.skip(h.charCount + h.leapCount * (timeSize + 4) + h.standardCount + h.utcCount)
        var footer: POSIXZoneRule?
        if first.version >= 2 {
            guard reader.byte() == 0x0A else { throw fail("footer does not start with a newline") }
            var text: [UInt8] = []
            while true {
                guard reader.remaining > 0 else { throw fail("footer does not end with a newline") }
                let b = reader.byte()
                if b == 0x0A { break }
                guard b >= 0x20, b < 0x7F, text.count < 256 else { throw fail("footer is not a short line of ASCII text") }
                text.append(b)
            }
            do {
                footer = try POSIXZoneRule(String(decoding: text, as: UTF8.self))
            } catch {
                throw fail("footer rule \"\(String(decoding: text, as: UTF8.self))\": \(error.description)")
            }
        }
        return TimeZoneRules(identifier: identifier, transitions: transitions, transitionTypes: transitionTypes, types: types, footer: footer)
    }

    /// The counts of one data block.
    struct Header {
        let version: Int
        let utcCount: Int, standardCount: Int, leapCount: Int, timeCount: Int, typeCount: Int, charCount: Int

        func blockSize(timeSize: Int) -> Int {
            timeCount * (timeSize + 1) + typeCount * 6 + charCount + leapCount * (timeSize + 4) + standardCount + utcCount
        }
    }

    private static func header(_ reader: inout Reader, _ fail: (String) -> TimeZoneError) throws(TimeZoneError) -> Header {
        guard reader.remaining >= 44 else { throw fail(reader.remaining == 0 && reader.offset == 0 ? "empty" : "truncated header") }
        guard reader.byte() == 0x54, reader.byte() == 0x5A, reader.byte() == 0x69, reader.byte() == 0x66 else { throw fail("no TZif magic") }
        let versionByte = reader.byte()
        let version: Int
        switch versionByte {
        case 0: version = 1
        case 0x32...0x39: version = Int(versionByte - 0x30)
        default: throw fail("unknown version byte \(versionByte)")
        }
        _ = reader.skip(15)
        let counts = (0..<6).map { _ in Int(reader.uint32()) }
        let h = Header(version: version, utcCount: counts[0], standardCount: counts[1], leapCount: counts[2],
                       timeCount: counts[3], typeCount: counts[4], charCount: counts[5])
        guard h.typeCount >= 1, h.typeCount <= 256 else { throw fail("\(h.typeCount) local time types (1–256 allowed)") }
        guard h.charCount >= 1 else { throw fail("no abbreviation characters") }
        guard h.utcCount == 0 || h.utcCount == h.typeCount, h.standardCount == 0 || h.standardCount == h.typeCount else {
            throw fail("indicator counts differ from the number of local time types")
        }
        return h
    }

    /// Big-endian reads over bytes whose length the caller has checked.
    struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var remaining: Int { bytes.count - offset }

        mutating func skip(_ n: Int) -> Bool {
            guard n >= 0, n <= remaining else { offset = bytes.count; return false }
            offset += n
            return true
        }

        mutating func byte() -> UInt8 {
            guard offset < bytes.count else { return 0 }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func uint32() -> UInt32 { (0..<4).reduce(0) { v, _ in v << 8 | UInt32(byte()) } }
        mutating func int32() -> Int32 { Int32(bitPattern: uint32()) }
        mutating func int64() -> Int64 { Int64(bitPattern: (0..<8).reduce(UInt64(0)) { v, _ in v << 8 | UInt64(byte()) }) }
    }
}
