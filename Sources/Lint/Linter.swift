import Migrations
import StewardJSON
import Postgres
import SQLParser

/// Why the lint could not judge the files (not a finding: the files or the database are wrong).
public struct LintError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// Reads pending migration files with PostgreSQL's own parser and judges each statement against the live catalog:
/// the lock it takes, on which table, whether it scans or rewrites it, and the rules it breaks. Context decides
/// severity: a statement on a table created earlier in the run, or smaller than `smallTableRows`, is information;
/// the same on a large table blocks `migrate` unless the file allows the rule (`-- steward:allow <rule>`).
///
/// Reads only: catalog queries, and for a table never analysed a count that stops just past `smallTableRows`.
public struct Linter {
    let connection: Connection
    let smallTableRows: Double

    /// `smallTableRows` is `[lint] small_table_rows` (10,000 by default).
    public init(connection: Connection, smallTableRows: Double = 10_000) {
        self.connection = connection
        self.smallTableRows = smallTableRows
    }

    /// What is known of a table while the run is followed statement by statement.
    private struct TableState {
        /// Display name.
        var name: String
        var live: LintCatalog.Table?
        /// The file that creates it earlier in the run.
        var createdIn: String?
    }

    /// Lints `files` (the pending ones, in the order `migrate` applies them) as one run: a table one file creates
    /// is new for the files after it. Throws `LintError` naming `file:line` for an allow line naming no rule, and
    /// the database's errors.
    public func lint(_ files: [MigrationFile]) throws -> LintReport {
        let catalog = LintCatalog(connection: connection, countCap: Int(smallTableRows))
        let serverVersion = connection.serverVersion
        var report = LintReport(smallTableRows: smallTableRows)
        /// Tables created earlier in the run (key → file), and names that tables of the run were renamed to.
        var created: [String: String] = [:]
        var renamedTo: [String: TableName] = [:]
        /// CHECK (col IS NOT NULL) constraints of the run: validated ones by "table|column", pending ones by "table|name".
        var validatedChecks: [String: String] = [:]
        var notValidChecks: [String: String] = [:]

        for unparsed in files {
            let file: MigrationFile
            do { file = try unparsed.parsed() } catch { throw LintError(message: "\(error)") }
            var allowed: [String: Int] = [:]
            for (rule, line) in file.allowedRules {
                guard LintRule.named(rule) != nil else {
                    throw LintError(message: "\(file.fileName):\(line): \"-- \(MigrationFile.allowDirective) \(rule)\" names no lint rule (known: \(LintRule.all.map(\.name).joined(separator: ", ")))")
                }
                allowed[rule] = allowed[rule] ?? line
            }
            if !file.allowedRules.isEmpty { report.allowedRules[file.fileName] = file.allowedRules.map(\.rule) }
            // Locks a transactional file has taken so far, kept until it commits: table key → (lock, where).
            var held: [String: (LockLevel, SourceLocation)] = [:]

            for statement in file.statements {
                let start = file.location(ofOffset: statement.offset)
                let tree: ParseNode
                do {
                    let json = try SQLParser.parseTree(statement.text)
                    guard let parsed = JSON.parse(Array(json.utf8)), let first = parsed["stmts"].map(ParseNode.init)?.items.first?["stmt"] else {
                        throw LintError(message: "\(start): the parser's tree could not be read")
                    }
                    tree = first
                } catch let error as SQLParser.Failure {
                    throw LintError(message: "\(start): \(error.message)")
                }
                let reading = StatementReading(tree, serverVersion: serverVersion)
                func at(_ byteOffset: Int?) -> SourceLocation {
                    guard let byteOffset, byteOffset >= 0 else { return start }
                    let scalars = String(decoding: Array(statement.text.utf8).prefix(byteOffset), as: UTF8.self).unicodeScalars.count
                    return file.location(ofOffset: statement.offset + scalars)
                }

                // Each touched relation, resolved: a table of the run, of the database, or neither.
                var states: [TableState?] = []
                var locks: [LintReport.TableLock] = []
                for touch in reading.touches {
                    var state: TableState?
                    switch touch.target {
                    case .table(let name):
                        state = try resolve(name, catalog: catalog, created: created, renamedTo: renamedTo)
                    case .index(let index):
                        if let table = try catalog.tableOfIndex(index) {
                            state = try resolve(table, catalog: catalog, created: created, renamedTo: renamedTo)
                        } else {
                            state = TableState(name: "the table of index \(index)", live: nil, createdIn: "this run (index \(index) is not in the database)")
                        }
                    case .many(let what):
                        state = nil
                        locks.append(LintReport.TableLock(table: what, lock: touch.lock, held: touch.lock, heldSince: nil, work: touch.work,
                                                          estimatedRows: nil, createdIn: nil))
                    }
                    states.append(state)
                    guard let state else { continue }
                    var heldLock = touch.lock
                    var since: SourceLocation?
                    if file.transactional, let previous = held[state.name], previous.0 > touch.lock {
                        heldLock = previous.0
                        since = previous.1
                    }
                    locks.append(LintReport.TableLock(table: state.name, lock: touch.lock, held: heldLock, heldSince: since, work: touch.work,
                                                      estimatedRows: state.createdIn == nil ? state.live?.rows : nil, createdIn: state.createdIn))
                }
                report.statements.append(LintReport.Statement(location: start, what: reading.what, locks: locks,
                    note: reading.opaque ? "lint cannot see what a DO block runs" : nil))

                for candidate in reading.candidates {
                    let touch = reading.touches[candidate.touch]
                    let state = states[candidate.touch]
                    var detail = candidate.detail
                    var forceInformation: String?
                    var rule = candidate.rule
                    switch rule {
                    case .addingFieldWithDefault:
                        if let functions = candidate.defaultFunctions {
                            let volatile = try catalog.volatileFunctions(functions)
                            if volatile.isEmpty { continue }
                            detail += ": volatile \(volatile.joined(separator: ", ")) is computed for every row"
                        }
                    case .addingNotNullableField:
                        guard let column = candidate.column, let state else { break }
                        let key = state.name + "|" + column
                        if let check = validatedChecks[key] {
                            forceInformation = "the validated CHECK \(check) (\(column) IS NOT NULL) of this run lets PostgreSQL skip the scan"
                        } else if state.createdIn == nil, let live = state.live {
                            if try catalog.isNotNull(table: live.oid, column: column) { continue }
                            if let check = try catalog.validatedNotNullCheck(table: live.oid, column: column) {
                                forceInformation = "the validated CHECK \(check) (\(column) IS NOT NULL) lets PostgreSQL skip the scan"
                            }
                        }
                    default:
                        break
                    }
                    // In a transactional file the table stays under the strongest lock an earlier statement took.
                    let lock = file.transactional ? (state.flatMap { s in held[s.name].map { max($0.0, touch.lock) } } ?? touch.lock) : touch.lock
                    if candidate.onlyUnderStrongerLock, lock <= touch.lock { continue }
                    var context = ""
                    var blocking = false
                    if let forceInformation {
                        context = forceInformation
                    } else {
                        var effective = touch
                        effective.lock = lock
                        (blocking, context) = judge(rule, touch: effective, state: state)
                    }
                    report.findings.append(finding(rule, at: at(candidate.byteOffset), lock: lock, state: state,
                                                   detail: detail, context: context, blocking: blocking, allowed: allowed[rule.name], file: file))

                    // A dropped or renamed column that views, policies or functions use.
                    if rule == .banDropColumn || rule == .renamingColumn, let column = candidate.column, let state, state.createdIn == nil,
                       let live = state.live {
                        let parts = live.name.split(separator: ".").map(String.init)
                        let users = try catalog.users(ofColumn: column, table: live, tableName: parts.last ?? state.name,
                                                      schema: parts.count > 1 ? parts[0] : "public")
                        let broken = rule == .banDropColumn ? users.tracked + users.functions.map { "function \($0)" } : users.functions.map { "function \($0)" }
                        if !broken.isEmpty {
                            rule = .droppedColumnUsed
                            let verb = candidate.rule == .banDropColumn ? "dropping" : "renaming"
                            report.findings.append(finding(rule, at: at(candidate.byteOffset), lock: touch.lock, state: state,
                                detail: "\(verb) \(live.name).\(column), which \(broken.joined(separator: ", ")) use\(broken.count == 1 ? "s" : "")"
                                    + (users.functions.isEmpty ? "" : " (functions found by the text of their bodies)"),
                                context: "blocking on any table: this is about what uses the column, not about locks",
                                blocking: true, allowed: allowed[rule.name], file: file))
                        } else if rule == .renamingColumn, !users.tracked.isEmpty {
                            report.findings.append(finding(.renamingColumn, at: at(candidate.byteOffset), lock: touch.lock, state: state,
                                detail: "\(users.tracked.joined(separator: ", ")) follow the rename (a view's output column keeps the old name); their text in the files no longer matches",
                                context: "information: the server updates tracked users itself", blocking: false, allowed: allowed[rule.name], file: file))
                        }
                    }
                }

                // What later statements see.
                for table in reading.creates where try resolve(table, catalog: catalog, created: created, renamedTo: renamedTo).live == nil {
                    created[table.key] = file.fileName
                }
                for (from, to) in reading.renames {
                    if let origin = created[from.key] { created[to.key] = origin; created[from.key] = nil } else { renamedTo[to.key] = from }
                }
                for table in reading.drops { created[table.key] = nil }
                for check in reading.notNullChecks {
                    let table = try resolve(check.table, catalog: catalog, created: created, renamedTo: renamedTo).name
                    if check.validated {
                        validatedChecks[table + "|" + check.column] = check.name ?? "(unnamed)"
                    } else if let name = check.name {
                        notValidChecks[table + "|" + name] = check.column
                    }
                }
                for validate in reading.validates {
                    let table = try resolve(validate.table, catalog: catalog, created: created, renamedTo: renamedTo).name
                    if let column = notValidChecks[table + "|" + validate.name] { validatedChecks[table + "|" + column] = validate.name }
                }
                if file.transactional {
                    for lock in locks where lock.lock > (held[lock.table]?.0 ?? .accessShare) || held[lock.table] == nil {
                        held[lock.table] = (lock.lock, start)
                    }
                }
            }
        }
        return report
    }

    /// A table by name: created earlier in the run, renamed earlier in the run, in the database, or none of these
    /// (then named as written).
    private func resolve(_ name: TableName, catalog: LintCatalog, created: [String: String], renamedTo: [String: TableName]) throws -> TableState {
        if let file = created[name.key] { return TableState(name: name.key, live: nil, createdIn: file) }
        if let origin = renamedTo[name.key], let live = try catalog.table(origin) { return TableState(name: name.key, live: live, createdIn: nil) }
        if let live = try catalog.table(name) { return TableState(name: live.name, live: live, createdIn: nil) }
        return TableState(name: name.description, live: nil, createdIn: nil)
    }

    /// Whether a finding of `rule` blocks, and why (or why not).
    private func judge(_ rule: LintRule, touch: StatementReading.Touch, state: TableState?) -> (Bool, String) {
        guard let state else {
            if case .many(let what) = touch.target { return (true, "blocking: it works on \(what), large tables included") }
            return (true, "blocking: its table is not known")
        }
        if let file = state.createdIn {
            return (false, "fine: \(state.name) is created earlier in this run (\(file)), so it is empty and no client uses it yet")
        }
        guard let live = state.live else {
            return (false, "fine here: \(state.name) is not in the database (the statement fails as written unless something lint cannot follow creates it)")
        }
        let rows = LintReport.rows(live.rows)
        switch rule.context {
        case .tableSize:
            if live.rows < smallTableRows {
                return (false, "fine: \(live.name) has about \(rows) rows, fewer than small_table_rows (\(LintReport.rows(smallTableRows))), so the \(touch.lock.name) lock lasts moments")
            }
            let effect = touch.work == .catalogOnly ? "the lock queues every query behind it while it waits" : "the \(touch.work.rawValue) of about \(rows) rows holds the lock"
            return (true, "blocking: \(live.name) has about \(rows) rows (small_table_rows \(LintReport.rows(smallTableRows))): \(effect); \(touch.lock.name) blocks \(touch.lock.blocks)")
        case .clients:
            return (true, "blocking on a table of any size: \(live.name) exists already (about \(rows) rows), so clients may use it")
        case .rows:
            if live.rows == 0 { return (false, "fine: \(live.name) is empty") }
            return (true, "blocking: \(live.name) has about \(rows) rows, so the statement fails as written")
        }
    }

    private func finding(_ rule: LintRule, at location: SourceLocation, lock: LockLevel, state: TableState?, detail: String, context: String,
                         blocking: Bool, allowed: Int?, file: MigrationFile) -> LintReport.Finding {
        LintReport.Finding(location: location, rule: rule.name, lock: lock, table: state?.name,
                           estimatedRows: state?.createdIn == nil ? state?.live?.rows : nil,
                           detail: "\(detail): \(rule.problem)", context: context, alternative: rule.alternative,
                           blocking: blocking, allowed: allowed != nil,
                           allowedAt: allowed.map { file.location(ofLine: $0) })
    }
}
