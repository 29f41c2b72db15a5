/// A Bloom filter of the keys seen so far in a scan: `insert` says whether a key may have been seen before (never
/// wrongly "no"), so the keys that repeat can be told apart from the many that do not in bounded memory: a byte a
/// key, at most 8 MiB (past 8 million keys more of them are wrongly "maybe", which costs time, never a finding).
struct SeenFilter {
    private var words: [UInt64]
    private let seed: Int

    /// A filter for about `expected` keys: eight bits a key, from 2^20 to 2^26 bits.
    init(expected: Int) {
        let wanted = max(1 << 20, min(1 << 26, max(0, min(expected, 1 << 26)) * 8))
        words = [UInt64](repeating: 0, count: (wanted + 63) / 64)
        seed = Int.random(in: .min ... .max)
    }

    /// Adds `key` (by its UTF-8 bytes); true when every bit it sets was set already: maybe seen before.
    mutating func insert(_ key: String) -> Bool {
        var key = key
        let hash = key.withUTF8 { bytes in Self.hash(bytes, seed: seed) }
        // Four bits in one word (one memory access a key): the word from the hash's high bits, the bits from its low ones.
        let word = Int(hash.multipliedFullWidth(by: UInt64(words.count)).high)
        var flags: UInt64 = 0
        for i in 0..<4 { flags |= UInt64(1) << ((hash >> (6 * i)) & 63) }
        let seen = words[word] & flags == flags
        words[word] |= flags
        return seen
    }

    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>, seed: Int) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(seed)
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }
}
