/// Finds which of many patterns occur anywhere in a stream of texts, reading each text once: the matching half of
/// the mention rule (`ObjectMention`), whose other half, the texts and patterns themselves, is SQL.
///
/// Each pattern is kept as a 64-bit polynomial hash of its bytes and its length; each text is read with one rolling
/// hash a pattern length, and every window is looked up (a bitmap first, then an open-addressing table). Equal bytes always hash equal, so an occurring pattern is always found; two different byte strings may
/// hash equal, which can only mark a pattern found that is not (an object kept that could have gone), never the other
/// way. The work is a text's length times the number of distinct pattern lengths; the memory is 9 bytes a table slot
/// (at most twice the patterns), whatever the texts.
public struct MentionMatcher: Sendable {
    /// Hashes (with their lengths mixed in) of the patterns; 0 marks an empty slot.
    private var keys: [UInt64]
    /// Whether the pattern in the same slot was found.
    private var found: [Bool]
    private var shift: Int
    /// One bit for each of 2^20 buckets of mixed hashes: most windows stop here, in a table that stays in cache.
    private var filter: [UInt64]
    /// The distinct pattern lengths in bytes, ascending, and base^length for each.
    private var lengths: [Int] = []
    private var powers: [Int: UInt64] = [:]
    /// An empty pattern occurs in every text.
    private var hasEmpty = false
    public private(set) var count = 0
    public private(set) var foundCount = 0
    private let base: UInt64

    public init(expectedPatterns: Int = 0) {
        var slots = 16
        while slots < expectedPatterns * 2 { slots <<= 1 }
        keys = Array(repeating: 0, count: slots)
        found = Array(repeating: false, count: slots)
        shift = 64 - slots.trailingZeroBitCount
        filter = Array(repeating: 0, count: (1 << 20) / 64)
        // A random odd base a run: no text can be written ahead to collide with a pattern.
        base = UInt64.random(in: 1 << 32 ... UInt64.max) | 1
    }

    /// Some pattern occurred (an empty one always does).
    public var foundAny: Bool { foundCount > 0 || hasEmpty }
    /// Every pattern has been found: reading more texts can change nothing.
    public var allFound: Bool { foundCount == count }

    /// Adds one pattern (its bytes).
    public mutating func add(_ pattern: UnsafeBufferPointer<UInt8>) {
        guard !pattern.isEmpty else { hasEmpty = true; return }
        if powers[pattern.count] == nil {
            var power: UInt64 = 1
            for _ in 0..<pattern.count { power = power &* base }
            powers[pattern.count] = power
            lengths.append(pattern.count)
            lengths.sort()
        }
        let key = Self.key(hash(pattern), length: pattern.count)
        if (count + 1) * 2 > keys.count { grow() }
        if insert(key) { count += 1 }
        setFilter(key)
    }

    public mutating func add(_ pattern: [UInt8]) { pattern.withUnsafeBufferPointer { add($0) } }

    /// Reads one text: every pattern occurring in it, or in the bytes a base64 run of it decodes to, is marked found.
    public mutating func scan(_ text: UnsafeBufferPointer<UInt8>) {
        guard count > 0, foundCount < count else { return }
        scanBytes(text)
        scanEncodedRuns(text)
    }

    /// Runs of at least this many base64 characters are always decoded (when the shortest pattern is long enough).
    static let shortestEncodedRun = 8

    /// The shortest run that can hold a pattern: `n` bytes take at least `4n/3` characters, so with a short name
    /// among the patterns (a 5-byte `z:=.F` is `ejo9LkY=`, 7 characters and a pad) shorter runs are decoded too.
    var shortestRunToDecode: Int {
        guard let shortest = lengths.first else { return Self.shortestEncodedRun }
        return min(Self.shortestEncodedRun, max(2, (4 * shortest + 2) / 3))
    }

    /// The value of each byte as a base64 digit (both alphabets: `+` and `-` are 62, `/` and `_` 63), -1 for others.
    static let sextets: [Int8] = (0..<256).map { byte -> Int8 in
        switch UInt8(byte) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): Int8(byte - 65)
        case UInt8(ascii: "a")...UInt8(ascii: "z"): Int8(byte - 97 + 26)
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int8(byte - 48 + 52)
        case UInt8(ascii: "+"), UInt8(ascii: "-"): 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): 63
        default: -1
        }
    }

    /// A name carried base64-encoded (an image proxy's signed URL that embeds the source URL, a request path of
    /// encoded JSON, a `data:` URI, a token): every run of base64 characters in both alphabets at least
    /// `shortestRunToDecode` long is decoded from each of its first four characters (the encoded text may start
    /// anywhere in the run) and the bytes are read as a text. No run is skipped for its look (one case, hex digits
    /// only): a short name's encoding can look like anything (`x.` is `eC4`). Decoding only adds places to look.
    private mutating func scanEncodedRuns(_ text: UnsafeBufferPointer<UInt8>) {
        var start = 0
        var decoded: [UInt8] = []
        let shortest = shortestRunToDecode
        while start < text.count, foundCount < count {
            guard Self.sextets[Int(text[start])] >= 0 else { start += 1; continue }
            var end = start
            while end < text.count, Self.sextets[Int(text[end])] >= 0 { end += 1 }
            if end - start >= shortest {
                for offset in 0..<4 {
                    decoded.removeAll(keepingCapacity: true)
                    // Groups of four characters make three bytes; a last partial group (an unpadded end) of two or
                    // three makes its whole bytes, one or two.
                    var group = start + offset
                    while end - group >= 2 {
                        let characters = min(4, end - group)
                        var bits = 0
                        for k in 0..<4 { bits = bits << 6 | (k < characters ? Int(Self.sextets[Int(text[group + k])]) : 0) }
                        for k in 0..<(characters * 6 / 8) { decoded.append(UInt8(truncatingIfNeeded: bits >> (16 - 8 * k))) }
                        group += characters
                    }
                    decoded.withUnsafeBufferPointer { scanBytes($0) }
                    // A percent-encoded URL inside (an image proxy's source URL): up to four times, as the SQL texts are, `+` as a space or not.
                    for plus in [false, true] {
                        var bytes = decoded
                        for _ in 0..<4 {
                            guard let next = Self.percentDecoded(bytes, plus: plus) else { break }
                            bytes = next
                            bytes.withUnsafeBufferPointer { scanBytes($0) }
                        }
                    }
                }
            }
            start = end
        }
    }

    /// `bytes` with each `%XX` decoded (and `+` read as a space with `plus`), or nil when that changes nothing.
    static func percentDecoded(_ bytes: [UInt8], plus: Bool) -> [UInt8]? {
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 48...57: byte - 48
            case 65...70: byte - 55
            case 97...102: byte - 87
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var changed = false, i = 0
        while i < bytes.count {
            if bytes[i] == 37, i + 2 < bytes.count, let high = hex(bytes[i + 1]), let low = hex(bytes[i + 2]) {
                out.append(high << 4 | low); i += 3; changed = true
            } else if plus && bytes[i] == 43 {
                out.append(32); i += 1; changed = true
            } else {
                out.append(bytes[i]); i += 1
            }
        }
        return changed ? out : nil
    }

    /// Marks every pattern occurring in `text`. One rolling hash a pattern length, so memory does not grow with the text.
    private mutating func scanBytes(_ text: UnsafeBufferPointer<UInt8>) {
        guard count > 0, foundCount < count, let shortest = lengths.first, text.count >= shortest else { return }
        let base = base
        // A local: the loop below marks slots of `self` while it reads this.
        let filter = filter
        for length in lengths {
            guard length <= text.count else { break }
            let power = powers[length]!
            filter.withUnsafeBufferPointer { filter in
                var h: UInt64 = 0
                for i in 0..<length { h = h &* base &+ UInt64(text[i]) &+ 1 }
                var end = length
                while true {
                    let key = Self.key(h, length: length)
                    let bit = Self.filterBit(key)
                    if filter[bit >> 6] & (1 << UInt64(bit & 63)) != 0 { markFound(key) }
                    guard end < text.count else { break }
                    h = h &* base &+ UInt64(text[end]) &+ 1 &- (UInt64(text[end - length]) &+ 1) &* power
                    end += 1
                }
            }
        }
    }

    public mutating func scan(_ text: [UInt8]) { text.withUnsafeBufferPointer { scan($0) } }

    /// Whether `pattern` (added before the texts were read) occurred in some text.
    public func wasFound(_ pattern: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !pattern.isEmpty else { return true }
        guard powers[pattern.count] != nil else { return false }
        let key = Self.key(hash(pattern), length: pattern.count)
        var slot = Int(truncatingIfNeeded: Self.mix(key) >> UInt64(shift))
        while keys[slot] != 0 {
            if keys[slot] == key { return found[slot] }
            slot = (slot + 1) & (keys.count - 1)
        }
        return false
    }

    public func wasFound(_ pattern: [UInt8]) -> Bool { pattern.withUnsafeBufferPointer { wasFound($0) } }

    /// Takes in what `other` found: a copy of this matcher (made once every pattern was added) that read other texts.
    /// Returns false (and takes in nothing) when `other` is not such a copy.
    @discardableResult
    public mutating func merge(_ other: MentionMatcher) -> Bool {
        guard other.keys == keys else { return false }
        for slot in found.indices where other.found[slot] && !found[slot] {
            found[slot] = true
            foundCount += 1
        }
        return true
    }

    // MARK: - Hashing and the table

    private func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0
        for byte in bytes { h = h &* base &+ UInt64(byte) &+ 1 }
        return h
    }

    /// The hash with the length mixed in (a window of another length with the same hash is another key); never 0.
    @inline(__always) static func key(_ hash: UInt64, length: Int) -> UInt64 {
        let key = hash ^ (UInt64(length) &* 0xD6E8_FEB8_6659_FD93)
        return key == 0 ? 1 : key
    }

    @inline(__always) static func mix(_ key: UInt64) -> UInt64 { (key ^ (key >> 31)) &* 0x9E37_79B9_7F4A_7C15 }

    @inline(__always) static func filterBit(_ key: UInt64) -> Int { Int(truncatingIfNeeded: (mix(key) >> 20) & ((1 << 20) - 1)) }

    private mutating func setFilter(_ key: UInt64) {
        let bit = Self.filterBit(key)
        filter[bit >> 6] |= 1 << UInt64(bit & 63)
    }

    /// Inserts `key`; false when it was there already.
    private mutating func insert(_ key: UInt64) -> Bool {
        var slot = Int(truncatingIfNeeded: Self.mix(key) >> UInt64(shift))
        while keys[slot] != 0 {
            if keys[slot] == key { return false }
            slot = (slot + 1) & (keys.count - 1)
        }
        keys[slot] = key
        return true
    }

    @inline(__always) private mutating func markFound(_ key: UInt64) {
        var slot = Int(truncatingIfNeeded: Self.mix(key) >> UInt64(shift))
        while keys[slot] != 0 {
            if keys[slot] == key {
                if !found[slot] { found[slot] = true; foundCount += 1 }
                return
            }
            slot = (slot + 1) & (keys.count - 1)
        }
    }

    private mutating func grow() {
        let old = keys, oldFound = found
        keys = Array(repeating: 0, count: old.count * 2)
        found = Array(repeating: false, count: old.count * 2)
        shift -= 1
        for (key, wasFound) in zip(old, oldFound) where key != 0 {
            var slot = Int(truncatingIfNeeded: Self.mix(key) >> UInt64(shift))
            while keys[slot] != 0 { slot = (slot + 1) & (keys.count - 1) }
            keys[slot] = key
            found[slot] = wasFound
        }
    }
}
