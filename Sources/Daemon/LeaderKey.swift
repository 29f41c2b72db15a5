/// The advisory lock key the leader holds (`'STEWLEAD'`), public so status readers can look for its holder.
public enum LeaderKey {
    public static let value: Int64 = 0x5354_4557_4C45_4144
}
