/// One rule of `steward lint`. Rules squawk also has carry squawk's name, so a team that knows squawk's
/// rules knows these; the rest are what a linter that never sees the database cannot know.
public struct LintRule: Sendable, Hashable {
    /// How context changes a finding of the rule from blocking to information.
    public enum Context: Sendable {
        /// A lock whose duration grows with the table: information on a table created earlier in the run or
        /// smaller than `small_table_rows`, blocking otherwise.
        case tableSize
        /// Breaks clients of the table whatever its size (a drop, a rename): information only on a table
        /// created earlier in the same run, where no client can use it yet.
        case clients
        /// Fails as written when the table has rows: information on an empty table.
        case rows
    }

    /// The rule's name, e.g. `require-concurrent-index-creation`; what `-- steward:allow` takes.
    public let name: String
    /// True when squawk has a rule of the same name and meaning.
    public let squawk: Bool
    public let context: Context
    /// One line on what goes wrong.
    public let problem: String
    /// The safe way, written out.
    public let alternative: String

    public static let requireConcurrentIndexCreation = LintRule(
        name: "require-concurrent-index-creation", squawk: true, context: .tableSize,
        problem: "CREATE INDEX holds SHARE on the table while it reads every row: app writes wait for the whole build",
        alternative: "build it in a file of its own that starts with `-- steward:no-transaction`: CREATE INDEX CONCURRENTLY IF NOT EXISTS … (SHARE UPDATE EXCLUSIVE: reads and writes go on; a failed build's INVALID index is dropped before migrate tries again)")
    public static let requireConcurrentIndexDeletion = LintRule(
        name: "require-concurrent-index-deletion", squawk: true, context: .tableSize,
        problem: "DROP INDEX holds ACCESS EXCLUSIVE on the table: app reads and writes wait, and queue behind any long query on it",
        alternative: "in a file that starts with `-- steward:no-transaction`: DROP INDEX CONCURRENTLY IF EXISTS …")
    public static let constraintMissingNotValid = LintRule(
        name: "constraint-missing-not-valid", squawk: true, context: .tableSize,
        problem: "a new CHECK or FOREIGN KEY constraint is checked against every row while the statement's lock is held",
        alternative: "add it with NOT VALID (a catalog change: new rows are checked at once), then in a later file ALTER TABLE … VALIDATE CONSTRAINT … (SHARE UPDATE EXCLUSIVE: reads and writes go on during the scan). Not in the same file: a file is one transaction and keeps the first statement's ACCESS EXCLUSIVE through the scan")
    public static let addingForeignKeyConstraint = LintRule(
        name: "adding-foreign-key-constraint", squawk: true, context: .tableSize,
        problem: "ADD FOREIGN KEY holds SHARE ROW EXCLUSIVE on both tables while every row of the referencing table is checked: writes to both wait",
        alternative: "ALTER TABLE … ADD CONSTRAINT … FOREIGN KEY … NOT VALID; then in a later file ALTER TABLE … VALIDATE CONSTRAINT … (SHARE UPDATE EXCLUSIVE on the table, ROW SHARE on the referenced one)")
    public static let addingNotNullableField = LintRule(
        name: "adding-not-nullable-field", squawk: true, context: .tableSize,
        problem: "SET NOT NULL reads every row under ACCESS EXCLUSIVE: app reads and writes wait for the scan",
        alternative: "ADD CONSTRAINT … CHECK (col IS NOT NULL) NOT VALID; in a later file VALIDATE CONSTRAINT …; then SET NOT NULL, which uses the validated CHECK and skips the scan (PostgreSQL 12 and later), and DROP CONSTRAINT the CHECK")
    public static let addingFieldWithDefault = LintRule(
        name: "adding-field-with-default", squawk: true, context: .tableSize,
        problem: "a column whose value is computed per row (a volatile default such as gen_random_uuid() or now() in a cast, serial, identity, a stored generated column) rewrites the table under ACCESS EXCLUSIVE",
        alternative: "add the column without the default (or with a constant one: no rewrite since PostgreSQL 11), SET DEFAULT for new rows, and fill existing rows in batches from a job or later files (UPDATE … WHERE id BETWEEN …)")
    public static let changingColumnType = LintRule(
        name: "changing-column-type", squawk: true, context: .tableSize,
        problem: "ALTER COLUMN … TYPE rewrites the table and rebuilds its indexes under ACCESS EXCLUSIVE (binary-compatible changes such as varchar(n) to text excepted)",
        alternative: "add a new column of the new type, fill it in batches, switch the app (a trigger can keep both in step), then drop the old one in a later release")
    public static let renamingColumn = LintRule(
        name: "renaming-column", squawk: true, context: .clients,
        problem: "clients that name the old column (the app, the Data API's callers, functions) fail once the file commits",
        alternative: "add the new column, write both, move readers, then drop the old column in a later release; or allow it (`-- steward:allow renaming-column`) when every client is deployed with it")
    public static let renamingTable = LintRule(
        name: "renaming-table", squawk: true, context: .clients,
        problem: "clients that name the old table fail once the file commits",
        alternative: "rename it and leave a view under the old name (CREATE VIEW old AS SELECT * FROM new) until every client uses the new one; or allow it (`-- steward:allow renaming-table`)")
    public static let banDropColumn = LintRule(
        name: "ban-drop-column", squawk: true, context: .clients,
        problem: "clients that still read or write the column fail, and its data is gone",
        alternative: "stop using the column in the app first (deploy), then drop it in a file that says `-- steward:allow ban-drop-column`")
    public static let banDropTable = LintRule(
        name: "ban-drop-table", squawk: true, context: .clients,
        problem: "clients that still use the table fail, and its data is gone",
        alternative: "stop using the table first (deploy), then drop it in a file that says `-- steward:allow ban-drop-table`")
    public static let disallowedUniqueConstraint = LintRule(
        name: "disallowed-unique-constraint", squawk: true, context: .tableSize,
        problem: "ADD UNIQUE builds its index under ACCESS EXCLUSIVE: app reads and writes wait for the build",
        alternative: "CREATE UNIQUE INDEX CONCURRENTLY … in a `-- steward:no-transaction` file, then in a later file ALTER TABLE … ADD CONSTRAINT … UNIQUE USING INDEX … (a catalog change)")
    public static let addingSerialPrimaryKeyField = LintRule(
        name: "adding-serial-primary-key-field", squawk: true, context: .tableSize,
        problem: "ADD PRIMARY KEY builds its index under ACCESS EXCLUSIVE (and a new serial column also rewrites the table)",
        alternative: "CREATE UNIQUE INDEX CONCURRENTLY … in a `-- steward:no-transaction` file (the column NOT NULL first, see adding-not-nullable-field), then ALTER TABLE … ADD CONSTRAINT … PRIMARY KEY USING INDEX …")
    public static let requireConcurrentReindex = LintRule(
        name: "require-concurrent-reindex", squawk: true, context: .tableSize,
        problem: "REINDEX holds SHARE on the table (writes wait) and ACCESS EXCLUSIVE on each index (reads that use it wait) for the rebuild",
        alternative: "in a file that starts with `-- steward:no-transaction`: REINDEX … CONCURRENTLY …")
    public static let addingRequiredField = LintRule(
        name: "adding-required-field", squawk: true, context: .rows,
        problem: "ADD COLUMN … NOT NULL without a default fails on a table that has rows (every existing row would be NULL)",
        alternative: "add it with a constant DEFAULT (no rewrite since PostgreSQL 11), or nullable, fill it, and SET NOT NULL the safe way (see adding-not-nullable-field)")
    public static let vacuumFullOrCluster = LintRule(
        name: "vacuum-full-or-cluster", squawk: false, context: .tableSize,
        problem: "VACUUM FULL and CLUSTER rewrite the whole table under ACCESS EXCLUSIVE: app reads and writes wait for the copy",
        alternative: "leave space to autovacuum (plain VACUUM takes SHARE UPDATE EXCLUSIVE), or repack online with the pg_repack extension outside migrations")
    public static let lockTable = LintRule(
        name: "lock-table", squawk: false, context: .tableSize,
        problem: "LOCK TABLE holds its lock (ACCESS EXCLUSIVE unless a mode is given) until the file commits, and queues the app behind it",
        alternative: "leave locking to the statements themselves: migrate runs each file in short lock slices, which an explicit LOCK TABLE defeats for every statement after it; if the file needs it, allow it (`-- steward:allow lock-table`) and keep the file short")
    public static let unboundedDataChange = LintRule(
        name: "unbounded-data-change", squawk: false, context: .tableSize,
        problem: "an UPDATE or DELETE without WHERE locks every row of a large table until the file commits (app writes to any row wait) and writes the whole table to WAL at once",
        alternative: "change the rows in batches with a WHERE on the key (WHERE id BETWEEN … or a LIMIT-ed subquery), from a job or a series of files, each its own short transaction")
    public static let droppedColumnUsed = LintRule(
        name: "dropped-column-used", squawk: false, context: .clients,
        problem: "a view, policy or function uses the column: dropping it fails (or, with CASCADE, silently drops the view or the policy: a dropped policy changes who sees what); renaming it breaks functions that name it",
        alternative: "change or drop the view, policy or function first (in the same file or an earlier one), then drop or rename the column")

    /// Every rule, in the order the README lists them.
    public static let all: [LintRule] = [
        requireConcurrentIndexCreation, requireConcurrentIndexDeletion, constraintMissingNotValid, addingForeignKeyConstraint,
        addingNotNullableField, addingFieldWithDefault, changingColumnType, renamingColumn, renamingTable, banDropColumn, banDropTable,
        disallowedUniqueConstraint, addingSerialPrimaryKeyField, requireConcurrentReindex, addingRequiredField,
        vacuumFullOrCluster, lockTable, unboundedDataChange, droppedColumnUsed,
    ]

    /// The rule called `name`, if there is one.
    public static func named(_ name: String) -> LintRule? { all.first { $0.name == name } }

    /// squawk's rules that Steward does not copy, each with why: Steward sets the session's timeouts itself.
    public static let notCopied: [(name: String, why: String)] = [
        ("require-timeout-settings", "migrate sets lock_timeout (the lock slice) and statement_timeout on every statement itself"),
        ("require-lock-timeout", "the lock slice: [migrations] lock_timeout, retried within lock_retry_budget"),
        ("require-statement-timeout", "[migrations] statement_timeout, set by migrate for every statement"),
        ("prefer-robust-stmts", "a transactional file is all or nothing; a no-transaction file's failed concurrent build is cleaned up before a retry"),
        ("transaction-nesting", "migrate refuses BEGIN/COMMIT in a file before anything runs"),
    ]

    public static func == (a: LintRule, b: LintRule) -> Bool { a.name == b.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}
