/// The safety brake: an empty profiles table after a bad restore must not wipe the bucket. A run refuses when, in
/// any bucket, the candidates are more than `maxFraction` of its objects, or when the run's candidates (every bucket's
/// added up) are more than `maxPerRun`, unless forced; a dry run goes on and says what a real run would refuse. A
/// value in, a decision out: no I/O.
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
        /// A real run stops, for the first limit passed (the run's count first, then the buckets in order).
        case refuse(String)
        /// A dry run goes on and notes what a real run would refuse, for every limit passed.
        case wouldRefuse([String])
    }

    func decide(_ buckets: [Bucket], force: Bool, dryRun: Bool) -> Decision {
        guard !force else { return .proceed }
        let refusals = [runRefusal(buckets)].compactMap { $0 } + buckets.compactMap(refusal)
        guard let first = refusals.first else { return .proceed }
        return dryRun ? .wouldRefuse(refusals) : .refuse(first)
    }

    /// Why the run as a whole is over `maxPerRun`: the candidates of every bucket together, since a run deletes them
    /// all (three buckets of 4 are 12 deletions, not 4); nil when it is not.
    func runRefusal(_ buckets: [Bucket]) -> String? {
        let total = buckets.reduce(Int64(0)) { $0.saturatingSum($1.candidates) }
        guard total > Int64(maxPerRun) else { return nil }
        let each = buckets.filter { $0.candidates > 0 }.map { "\($0.candidates) in \($0.name)" }.joined(separator: ", ")
        return "safety brake: this run would delete \(total) objects (\(each)); the limit is \(maxPerRun) a run (max_per_run). Check that the references "
            + "are intact (an empty or restored profiles table?), then run with --force if this is right"
    }

    /// Why `bucket` is over `maxFraction` of its objects; nil when it is not (an empty bucket never is: nothing to
    /// delete).
    func refusal(_ bucket: Bucket) -> String? {
        guard bucket.objects > 0 else { return nil }
        let share = Double(bucket.candidates) / Double(bucket.objects)
        guard share > maxFraction else { return nil }
        return "safety brake: \(bucket.candidates) of \(bucket.objects) objects in \(bucket.name) (\(Int(share * 100)) %) would be deleted; "
            + "the limits are \(Int(maxFraction * 100)) % of a bucket (max_fraction) and \(maxPerRun) a run (max_per_run). Check that the references are intact "
            + "(an empty or restored profiles table?), then run with --force if this is right"
    }
}
