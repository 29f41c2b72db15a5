import Testing
import TestSupport

@Suite("the test cluster")
struct TestClusterTests {
    @Test("a cluster named by STEWARD_TEST_ADMIN_URL answers (scripts/test.sh never lets the database tests skip)",
          .enabled(if: TestCluster.isRequired, "STEWARD_TEST_ADMIN_URL is not set: the database tests run only where a cluster answers"))
    func namedClusterAnswers() {
        #expect(TestCluster.unreachable == nil,
                "STEWARD_TEST_ADMIN_URL names \(TestEnvironment.hostAndPort), which does not answer: \(TestCluster.unreachable ?? "")")
        #expect(TestCluster.isAvailable)
    }
}
