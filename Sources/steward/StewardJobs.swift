import SecurityAdvisor
import AppleSecret
import Jobs
import LegacyImport
import OrphanAvatars
import PruneHistory
import UsernameCheck

extension JobCatalog {
    /// Every job this Steward runs, in the order they are listed: a new job is one more entry here.
    public static let steward = JobCatalog([
        PruneHistoryJob.self,
        UsernameCheckJob.self,
        OrphanAvatarsJob.self,
        AppleSecretJob.self,
        SecurityAdvisorJob.self,
        ImportLegacyUsersJob.self,
    ])
}
