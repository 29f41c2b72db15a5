@testable import OrphanAvatars
import Testing

@Suite("safety brake: the decision from the scan's counts")
struct SafetyBrakeTests {
    let brake = SafetyBrake(maxFraction: 0.5, maxPerRun: 100)

    func bucket(_ name: String = "avatars", objects: Int64, candidates: Int64) -> SafetyBrake.Bucket {
        SafetyBrake.Bucket(name: name, objects: objects, candidates: candidates)
    }

    @Test func anEmptyBucketNeverRefuses() {
        #expect(brake.decide([bucket(objects: 0, candidates: 0)], force: false, dryRun: false) == .proceed)
        #expect(brake.refusal(bucket(objects: 0, candidates: 0)) == nil)
        #expect(brake.decide([], force: false, dryRun: false) == .proceed)
    }

    @Test func exactlyAtTheFractionGoesOn() {
        #expect(brake.decide([bucket(objects: 100, candidates: 50)], force: false, dryRun: false) == .proceed)
        // One more is over it.
        guard case .refuse(let text) = brake.decide([bucket(objects: 100, candidates: 51)], force: false, dryRun: false) else {
            Issue.record("51 of 100 is over a fraction of 0.5")
            return
        }
        #expect(text.hasPrefix("safety brake: 51 of 100 objects in avatars (51 %) would be deleted; the limits are 50 % of a bucket (max_fraction) and 100 a run (max_per_run)"))
    }

    @Test func exactlyAtMaxPerRunGoesOnAndOneMoreRefuses() {
        #expect(brake.decide([bucket(objects: 1000, candidates: 100)], force: false, dryRun: false) == .proceed)
        guard case .refuse(let text) = brake.decide([bucket(objects: 1000, candidates: 101)], force: false, dryRun: false) else {
            Issue.record("101 candidates are over max_per_run 100 although under the fraction")
            return
        }
        #expect(text.hasPrefix("safety brake: this run would delete 101 objects (101 in avatars); the limit is 100 a run (max_per_run)"))
    }

    @Test func aFractionOfZeroRefusesAnyCandidateAndOfOneOnlyThePerRunLimit() {
        let strict = SafetyBrake(maxFraction: 0, maxPerRun: 100)
        #expect(strict.decide([bucket(objects: 10, candidates: 0)], force: false, dryRun: false) == .proceed)
        #expect(strict.refusal(bucket(objects: 10, candidates: 1)) != nil)
        let loose = SafetyBrake(maxFraction: 1, maxPerRun: 100)
        #expect(loose.refusal(bucket(objects: 10, candidates: 10)) == nil)
        #expect(loose.refusal(bucket(objects: 200, candidates: 200)) == nil)
        #expect(loose.runRefusal([bucket(objects: 200, candidates: 200)]) != nil)
    }

    @Test func forceGoesOnWhateverTheCounts() {
        #expect(brake.decide([bucket(objects: 10, candidates: 10)], force: true, dryRun: false) == .proceed)
        #expect(brake.decide([bucket(objects: 10, candidates: 10)], force: true, dryRun: true) == .proceed)
    }

    @Test func severalBucketsRefuseForTheFirstOverALimit() {
        let buckets = [bucket("a", objects: 10, candidates: 1), bucket("b", objects: 10, candidates: 9), bucket("c", objects: 1000, candidates: 500)]
        guard case .refuse(let text) = SafetyBrake(maxFraction: 0.5, maxPerRun: 1000).decide(buckets, force: false, dryRun: false) else {
            Issue.record("b is over the fraction")
            return
        }
        #expect(text.contains("in b ("))
        // Each bucket is judged on its own: the sums (510 of 1020) would be within the fraction.
        #expect(brake.decide([bucket("a", objects: 1000, candidates: 10), bucket("b", objects: 20, candidates: 19)], force: false, dryRun: false)
                != .proceed)
    }

    @Test func aDryRunNotesEveryBucketARealRunWouldRefuse() {
        let buckets = [bucket("a", objects: 10, candidates: 9), bucket("b", objects: 10, candidates: 1), bucket("c", objects: 4, candidates: 4)]
        guard case .wouldRefuse(let texts) = brake.decide(buckets, force: false, dryRun: true) else {
            Issue.record("a dry run goes on and says what a real run would refuse")
            return
        }
        #expect(texts.count == 2)
        #expect(texts.first?.contains("in a (90 %)") == true)
        #expect(texts.last?.contains("in c (100 %)") == true)
        #expect(brake.decide([bucket(objects: 10, candidates: 1)], force: false, dryRun: true) == .proceed)
    }

    @Test func maxPerRunCountsTheWholeRunAcrossBuckets() {
        // Three buckets of 4 candidates under a limit of 5: 12 deletions in one run, refused; each bucket alone is
        // within every limit.
        let small = SafetyBrake(maxFraction: 0.5, maxPerRun: 5)
        let buckets = ["a", "b", "c"].map { bucket($0, objects: 100, candidates: 4) }
        for one in buckets { #expect(small.refusal(one) == nil) }
        guard case .refuse(let text) = small.decide(buckets, force: false, dryRun: false) else {
            Issue.record("12 candidates over three buckets are over max_per_run 5")
            return
        }
        #expect(text.hasPrefix("safety brake: this run would delete 12 objects (4 in a, 4 in b, 4 in c); the limit is 5 a run (max_per_run)"))
        #expect(small.decide(Array(buckets.prefix(1)), force: false, dryRun: false) == .proceed)
        #expect(small.decide(buckets, force: true, dryRun: false) == .proceed)
        guard case .wouldRefuse(let texts) = small.decide(buckets, force: false, dryRun: true) else {
            Issue.record("a dry run says a real run would refuse")
            return
        }
        #expect(texts.count == 1)
    }

    @Test func theRunSumSaturatesInsteadOfTrapping() {
        let buckets = [bucket("a", objects: .max, candidates: .max), bucket("b", objects: .max, candidates: .max)]
        #expect(SafetyBrake(maxFraction: 1, maxPerRun: .max).runRefusal(buckets) == nil)
        #expect(SafetyBrake(maxFraction: 1, maxPerRun: 10).runRefusal(buckets) != nil)
    }
}
