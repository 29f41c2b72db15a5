/// One long-lived part of `steward run`: runs until the daemon stops (its `Lifecycle`) or its task is cancelled.
/// The daemon runs every service as a child task of one task group.
protocol DaemonService: Sendable {
    func run() async throws
}
