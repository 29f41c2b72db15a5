/// A Bloom filter of the keys seen so far in a scan: `insert` says whether a key may have been seen before (never
/// wrongly "no"), so the keys that repeat can be told apart from the many that do not in bounded memory: a byte a
/// key, at most 8 MiB (past 8 million keys more of them are wrongly "maybe", which costs time, never a finding).
struct SeenFilter {
    private var words: [UInt64]
    private let bits: UInt64
    private let seeds: (Int, Int)

    /// A filter for about `expected` keys: eight bits a key, from 2^20 to 2^26 bits.
    init(expected: Int) {
        let wanted = max(1 << 20, min(1 << 26, max(0, min(expected, 1 << 26)) * 8))
        words = [UInt64](repeating: 0, count: (wanted + 63) / 64)
        bits = UInt64(words.count * 64)
        seeds = (Int.random(in: .min ... .max), Int.random(in: .min ... .max))
    }

    /// Adds `key` (by its UTF-8 bytes); true when every bit it sets was set already: maybe seen before.
    mutating func insert(_ key: String) -> Bool {
        var key = key
        let (first, second) = key.withUTF8 { bytes in
            (Self.hash(bytes, seed: seeds.0), Self.hash(bytes, seed: seeds.1) | 1)
        }
        var seen = true
        for i in 0..<4 {
            // Four positions by double hashing, each mapped onto 0..<bits by a multiply (no division).
            let bit = (first &+ UInt64(i) &* second).multipliedFullWidth(by: bits).high
            let word = Int(bit >> 6), flag = UInt64(1) << (bit & 63)
            if words[word] & flag == 0 { seen = false; words[word] |= flag }
        }
        return seen
    }

    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>, seed: Int) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(seed)
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }
}
