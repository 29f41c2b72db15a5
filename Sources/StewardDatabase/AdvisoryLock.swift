/// Every PostgreSQL advisory lock key Steward takes, in one place so no two concerns share one by accident.
/// The keys are fixed forever: instances of different versions must agree on them.
public enum AdvisoryLock {
    /// `'STEWMIGR'`: one migrator at a time (`pg_advisory_lock(bigint)`).
    public static let migrations: Int64 = 0x5354_4557_4D49_4752
    /// `'STEWLEAD'`: the leader among `steward run` instances (`pg_advisory_lock(bigint)`).
    public static let leader: Int64 = 0x5354_4557_4C45_4144
    /// `'ST'`: the first half of a job's lock `(0x5354, hashtext(job name))` (`pg_advisory_lock(int, int)`),
    /// a two-key space apart from the one-key locks above.
    public static let jobNamespace = 0x5354
}
