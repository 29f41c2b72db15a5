/// A Bloom filter of the keys seen so far in a scan: `insert` says whether a key may have been seen before (never
/// wrongly "no"), so the keys that repeat can be told apart from the many that do not in fixed memory, a byte a key.
struct SeenFilter {
    private var words: [UInt64]
    private let mask: UInt64
    private let seeds: (Int, Int)

    /// A filter for about `expected` keys (at least a million bits).
    init(expected: Int) {
        var bits = 1 << 20
        let wanted = max(0, min(expected, 1 << 32)) * 8
        while bits < wanted { bits <<= 1 }
        words = [UInt64](repeating: 0, count: bits / 64)
        mask = UInt64(bits - 1)
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
            let bit = (first &+ UInt64(i) &* second) & mask
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
