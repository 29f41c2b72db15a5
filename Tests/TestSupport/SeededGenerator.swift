import Foundation

/// A seeded random number generator (SplitMix64), so a generated case that fails can be replayed: tests print
/// the seed and take `STEWARD_TEST_SEED` to repeat it.
public struct SeededGenerator: RandomNumberGenerator {
    public let seed: UInt64
    private var state: UInt64

    public init(seed: UInt64) {
        self.seed = seed
        state = seed
    }

    /// Seeded from `STEWARD_TEST_SEED` when set, else at random.
    public static func fromEnvironment() -> SeededGenerator {
        let text = ProcessInfo.processInfo.environment["STEWARD_TEST_SEED"] ?? ""
        return SeededGenerator(seed: UInt64(text) ?? UInt64.random(in: 0...UInt64.max))
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
