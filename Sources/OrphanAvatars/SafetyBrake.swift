/// The safety brake: an empty profiles table after a bad restore must not wipe the bucket. A run refuses when, in
/// any bucket, the candidates are more than `maxFraction` of its objects or more than `maxPerRun`, unless forced; a
/// dry run goes on and says what a real run would refuse. A value in, a decision out: no I/O.
struct SafetyBrake: Sendable, Equatable {
    let maxFraction: Double
    let maxPerRun: Int

    /// One bucket as the scan counted it.
    struct Bucket: Sendable, Equatable {
        let name: String
        let objects: Int64
        let candidates: Int64
    }

    enum Decision: Sendable, Equatable {
        /// Within the limits, or forced: the run goes on.
        case proceed
        /// A real run stops, for the first bucket over a limit.
        case refuse(String)
        /// A dry run goes on and notes what a real run would refuse, for every bucket over a limit.
        case wouldRefuse([String])
    }

    func decide(_ buckets: [Bucket], force: Bool, dryRun: Bool) -> Decision {
        guard !force else { return .proceed }
        let refusals = buckets.compactMap(refusal)
        guard let first = refusals.first else { return .proceed }
        return dryRun ? .wouldRefuse(refusals) : .refuse(first)
    }

    /// Why `bucket` is over a limit; nil when it is not (an empty bucket never is: nothing to delete).
    func refusal(_ bucket: Bucket) -> String? {
        guard bucket.objects > 0 else { return nil }
        let share = Double(bucket.candidates) / Double(bucket.objects)
        guard share > maxFraction || bucket.candidates > maxPerRun else { return nil }
        return "safety brake: \(bucket.candidates) of \(bucket.objects) objects in \(bucket.name) (\(Int(share * 100)) %) would be deleted; "
            + "the limits are \(Int(maxFraction * 100)) % (max_fraction) and \(maxPerRun) (max_per_run). Check that the references are intact "
            + "(an empty or restored profiles table?), then run with --force if this is right"
    }
}
