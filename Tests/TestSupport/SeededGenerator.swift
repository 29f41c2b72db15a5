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

    /// The seed of a generated test: `STEWARD_TEST_SEED` when set (to replay a printed seed), else a fresh one.
    /// A value that is not a decimal seed stops the run: a fresh seed in its place would not replay anything.
    public static var seedFromEnvironment: UInt64 {
        guard let text = ProcessInfo.processInfo.environment["STEWARD_TEST_SEED"] else { return UInt64.random(in: 1...UInt64.max) }
        guard let seed = UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            fatalError("STEWARD_TEST_SEED=\(text.debugDescription) is not a decimal seed (0 to 18446744073709551615)")
        }
        return seed
    }

    /// Seeded from `STEWARD_TEST_SEED` when set, else at random.
    public static func fromEnvironment() -> SeededGenerator {
        SeededGenerator(seed: seedFromEnvironment)
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
