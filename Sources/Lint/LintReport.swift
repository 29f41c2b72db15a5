import Migrations
import StewardJSON

/// What `steward lint` found in the pending files: each statement's locks, and each rule a statement breaks with
/// the context that makes it blocking or information.
public struct LintReport: Sendable {
    /// One relation a statement locks.
    public struct TableLock: Sendable {
        /// `public.profiles`, as the catalog names it (as written when the catalog does not have it).
        public let table: String
        /// The lock the statement itself takes.
        public let lock: LockLevel
        /// The lock the table is under while the statement runs: stronger than `lock` when an earlier statement of
        /// the same transactional file took more (a file is one transaction; locks are kept until it commits).
        public let held: LockLevel
        /// Where the stronger lock was taken, when `held` is stronger than `lock`.
        public let heldSince: SourceLocation?
        public let work: TableWork
        /// The row estimate (`pg_class.reltuples`, or a count capped just above `small_table_rows` for a table never
        /// analysed); nil for a table created in this run or not in the database.
        public let estimatedRows: Double?
        /// Set when the table is created earlier in this run: the file that creates it.
        public let createdIn: String?
    }

    /// One statement of a pending file.
    public struct Statement: Sendable {
        public let location: SourceLocation
        /// The statement in a few words: `ALTER TABLE ADD COLUMN`, `CREATE INDEX CONCURRENTLY`.
        public let what: String
        public let locks: [TableLock]
        /// Set when lint cannot see what the statement does (a DO block).
        public let note: String?
    }

    /// One rule a statement breaks.
    public struct Finding: Sendable {
        public let location: SourceLocation
        public let rule: String
        /// The lock held on `table` while the statement runs.
        public let lock: LockLevel?
        public let table: String?
        public let estimatedRows: Double?
        /// What the statement does, in its own words (`ADD COLUMN id serial`), and what goes wrong.
        public let detail: String
        /// Why it blocks `migrate`, or why it is only information ("created earlier in this run", "about 120 rows").
        public let context: String
        /// The safe way, written out.
        public let alternative: String
        /// True when `migrate` would refuse the run for it (on a large or used table); false for information.
        public let blocking: Bool
        /// True when the file allows the rule (`-- steward:allow <rule>`): listed, but `migrate` goes on.
        public let allowed: Bool
        /// The `-- steward:allow` line that allows it.
        public let allowedAt: SourceLocation?
    }

    public internal(set) var statements: [Statement] = []
    public internal(set) var findings: [Finding] = []
    /// The rules each file allows (file name → rule names, in file order), whether or not a finding used them:
    /// what `migrate` records with the file's history row.
    public internal(set) var allowedRules: [String: [String]] = [:]
    /// `[lint] small_table_rows` as used.
    public let smallTableRows: Double

    public init(smallTableRows: Double) { self.smallTableRows = smallTableRows }

    /// The findings that stop `migrate`: blocking and not allowed by their file.
    public var blocking: [Finding] { findings.filter { $0.blocking && !$0.allowed } }

    /// `steward lint`'s text: one line per statement with its locks, then the findings, each with its context
    /// and the safe alternative.
    public var text: String {
        var text = ""
        for statement in statements {
            let locks = statement.locks.isEmpty ? "no table lock" : statement.locks.map(Self.describe).joined(separator: "; ")
            text += "\(statement.location)  \(statement.what): \(locks)"
            if let note = statement.note { text += " (\(note))" }
            text += "\n"
        }
        if findings.isEmpty {
            text += statements.isEmpty ? "nothing pending to lint\n" : "\nno findings\n"
            return text
        }
        text += "\n"
        for finding in findings {
            let label = finding.allowed ? "allowed" : finding.blocking ? "blocking" : "information"
            text += "\(finding.location): \(label): \(finding.rule)"
            if let table = finding.table { text += " on \(table)" }
            if let lock = finding.lock { text += " (\(lock.name))" }
            if let rows = finding.estimatedRows { text += ", about \(Self.rows(rows)) rows" }
            text += "\n  \(finding.detail)\n  \(finding.context)\n"
            if finding.blocking { text += "  instead: \(finding.alternative)\n" }
            if let at = finding.allowedAt { text += "  allowed by \(at)\n" }
        }
        let blocking = self.blocking.count
        let allowed = findings.filter { $0.blocking && $0.allowed }.count
        text += "\n\(blocking) blocking, \(allowed) allowed, \(findings.count - blocking - allowed) information\n"
        return text
    }

    /// `steward lint --json`: `{"statements": […], "findings": […]}` and the totals.
    public var json: JSON {
        func location(_ at: SourceLocation) -> [(String, JSON)] {
            [("file", .string(at.file)), ("line", .number(Double(at.line))), ("column", .number(Double(at.column)))]
        }
        func number(_ value: Double?) -> JSON { value.map { .number($0.rounded()) } ?? .null }
        return .object([
            ("statements", .array(statements.map { statement in
                .object(location(statement.location) + [
                    ("what", .string(statement.what)),
                    ("locks", .array(statement.locks.map { lock in
                        .object([("table", .string(lock.table)), ("lock", .string(lock.lock.name)), ("held", .string(lock.held.name)),
                                 ("held_since", .optional(lock.heldSince?.description)), ("work", .string(lock.work.rawValue)),
                                 ("estimated_rows", number(lock.estimatedRows)), ("created_in", .optional(lock.createdIn))])
                    })),
                    ("note", .optional(statement.note)),
                ])
            })),
            ("findings", .array(findings.map { finding in
                .object(location(finding.location) + [
                    ("rule", .string(finding.rule)), ("lock", .optional(finding.lock?.name)), ("table", .optional(finding.table)),
                    ("estimated_rows", number(finding.estimatedRows)), ("detail", .string(finding.detail)),
                    ("context", .string(finding.context)), ("alternative", .string(finding.alternative)),
                    ("blocking", .bool(finding.blocking)), ("allowed", .bool(finding.allowed)),
                    ("allowed_at", .optional(finding.allowedAt?.description)),
                ])
            })),
            ("blocking", .number(Double(blocking.count))),
            ("small_table_rows", .number(smallTableRows)),
        ])
    }

    static func describe(_ lock: TableLock) -> String {
        var text = "\(lock.lock.name) on \(lock.table)"
        if lock.held > lock.lock, let since = lock.heldSince { text += " (held: \(lock.held.name) since \(since))" }
        text += ", \(lock.work.rawValue)"
        if let created = lock.createdIn {
            text += ", created in \(created)"
        } else if let rows = lock.estimatedRows {
            text += ", ~\(Self.rows(rows)) rows"
        }
        return text
    }

    /// A row count as people read it: 20000 → 20,000.
    static func rows(_ value: Double) -> String {
        let whole = Int(max(0, value).rounded())
        var digits = String(whole)
        var out = ""
        while digits.count > 3 {
            out = "," + digits.suffix(3) + out
            digits = String(digits.dropLast(3))
        }
        return digits + out
    }
}
