/// PostgreSQL's table lock levels, weakest first (the order of the server's `LOCKMODE` numbers, 1 to 8). What a
/// level blocks is what the app feels while a migration statement holds it, or waits for it.
public enum LockLevel: Int, Sendable, Comparable, CaseIterable {
    case accessShare = 1
    case rowShare
    case rowExclusive
    case shareUpdateExclusive
    case share
    case shareRowExclusive
    case exclusive
    case accessExclusive

    /// The name as PostgreSQL's documentation and `pg_locks` write it, e.g. `ACCESS EXCLUSIVE`.
    public var name: String {
        switch self {
        case .accessShare: "ACCESS SHARE"
        case .rowShare: "ROW SHARE"
        case .rowExclusive: "ROW EXCLUSIVE"
        case .shareUpdateExclusive: "SHARE UPDATE EXCLUSIVE"
        case .share: "SHARE"
        case .shareRowExclusive: "SHARE ROW EXCLUSIVE"
        case .exclusive: "EXCLUSIVE"
        case .accessExclusive: "ACCESS EXCLUSIVE"
        }
    }

    /// What the app's queries on the table do while the lock is held (the app takes ACCESS SHARE to read and
    /// ROW EXCLUSIVE to write; DDL and VACUUM take SHARE UPDATE EXCLUSIVE or more).
    public var blocks: String {
        switch self {
        case .accessShare: "only ACCESS EXCLUSIVE (reads and writes go on)"
        case .rowShare: "EXCLUSIVE and ACCESS EXCLUSIVE (reads and writes go on)"
        case .rowExclusive: "schema changes and other SHARE locks (reads and writes go on; rows it changes wait for it)"
        case .shareUpdateExclusive: "schema changes, VACUUM and other builds (reads and writes go on)"
        case .share: "writes (reads go on)"
        case .shareRowExclusive: "writes (reads go on)"
        case .exclusive: "writes and SELECT … FOR UPDATE (plain reads go on)"
        case .accessExclusive: "reads and writes"
        }
    }

    /// True when app writes (INSERT, UPDATE, DELETE) wait behind the lock.
    public var blocksWrites: Bool { self >= .share }
    /// True when app reads wait behind the lock.
    public var blocksReads: Bool { self == .accessExclusive }

    public static func < (a: LockLevel, b: LockLevel) -> Bool { a.rawValue < b.rawValue }
}

/// What a statement does to the rows of its table while it holds the lock: the lock's duration grows with the
/// table for a scan or a rewrite, not for a catalog-only change.
public enum TableWork: String, Sendable, Comparable {
    /// A catalog change: the lock is held for milliseconds (once granted).
    case catalogOnly = "catalog only"
    /// The rows the statement matches (a bounded UPDATE or DELETE, an INSERT).
    case matchedRows = "matched rows"
    /// Every row is read (a validation, an index build, an unbounded UPDATE or DELETE).
    case scan
    /// The table (and its indexes) is written anew.
    case rewrite

    private var rank: Int {
        switch self {
        case .catalogOnly: 0
        case .matchedRows: 1
        case .scan: 2
        case .rewrite: 3
        }
    }

    public static func < (a: TableWork, b: TableWork) -> Bool { a.rank < b.rank }
}
