import Foundation
import Postgres
import Testing

extension TestCluster {
    /// Why the shared test cluster does not answer (`TestEnvironment.adminURL`), or nil when it does: one quick connect,
    /// made once per test process.
    public static let unreachable: String? = {
        do {
            _ = try Connection(ConnectionString(TestEnvironment.adminURL + "/postgres"))
            return nil
        } catch {
            return "\(error)"
        }
    }()

    /// True when `scripts/test.sh` (or whoever runs the tests) named a cluster: `STEWARD_TEST_ADMIN_URL` is set.
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["STEWARD_TEST_ADMIN_URL"] != nil }

    /// Whether the tests that need the shared cluster run. A plain `swift test` without a cluster skips them (and
    /// says so); once a cluster is named they always run, so a cluster that is down fails them instead of skipping
    /// everything silently.
    public static var isAvailable: Bool { isRequired || unreachable == nil }
}

extension Trait where Self == ConditionTrait {
    /// For suites and tests that need the shared test cluster (see `TestCluster.isAvailable`).
    public static var needsCluster: Self {
        .enabled(if: TestCluster.isAvailable,
                 "needs the test cluster: start one with scripts/local-db.sh start or run scripts/test.sh")
    }
}
