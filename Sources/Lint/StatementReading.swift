/// What one statement's parse tree says, before the catalog is asked anything: the tables it locks and how, the
/// rules it may break, and what it changes that later statements of the run depend on (tables it creates or
/// renames, NOT NULL checks it adds or validates). Pure: the same tree always reads the same.
struct StatementReading {
    /// A relation the statement locks: a table by name, or an index whose table the catalog knows.
    struct Touch {
        enum Target {
            case table(TableName)
            case index(TableName)
            /// Every table of the database or a schema (`REINDEX DATABASE`, `VACUUM FULL` with no table).
            case many(String)
        }
        var target: Target
        var lock: LockLevel
        var work: TableWork
    }

    /// A rule the statement may break; the catalog and the run decide whether it does and how much it matters.
    struct Candidate {
        var rule: LintRule
        /// Index into `touches` of the relation the rule is about.
        var touch: Int
        /// What exactly, in the statement's words (`ADD COLUMN id serial`).
        var detail: String
        /// Byte offset in the statement text of the part that breaks the rule, when the parser gives one.
        var byteOffset: Int?
        /// The column the rule is about, when it is about one (SET NOT NULL, DROP or RENAME COLUMN).
        var column: String?
        /// For a column default: the functions it calls (parts of each name), so the catalog can say which are
        /// volatile. Nil when the rule holds whatever the functions are.
        var defaultFunctions: [[String]]?
        /// For a new NOT NULL column: whether it has a default (then existing rows get it).
        var hasDefault = false
        /// Set for a statement that is safe on its own but not under a stronger lock an earlier statement of the
        /// same transaction keeps (VALIDATE CONSTRAINT after the NOT VALID in the same file): only then a finding.
        var onlyUnderStrongerLock = false
    }

    /// `ALTER TABLE … ADD COLUMN, SET NOT NULL`: the statement in a few words.
    var what: String
    var touches: [Touch] = []
    var candidates: [Candidate] = []
    var creates: [TableName] = []
    /// `CREATE TABLE IF NOT EXISTS`: only new when the catalog does not have it.
    var renames: [(from: TableName, to: TableName)] = []
    var drops: [TableName] = []
    /// CHECK (col IS NOT NULL) constraints added: table, column, constraint name if written, validated at once.
    var notNullChecks: [(table: TableName, column: String, name: String?, validated: Bool)] = []
    var validates: [(table: TableName, name: String)] = []
    /// True when the tree holds something lint cannot see into (a DO block).
    var opaque = false

    init(_ tree: ParseNode, serverVersion: Int) {
        guard let (node, body) = tree.typed else { what = "unknown"; return }
        what = Self.words(node)
        switch node {
        case "AlterTableStmt": readAlterTable(body, serverVersion: serverVersion)
        case "IndexStmt":
            let concurrent = body["concurrent"]?.bool == true
            what = (body["unique"]?.bool == true ? "CREATE UNIQUE INDEX" : "CREATE INDEX") + (concurrent ? " CONCURRENTLY" : "")
            guard let table = TableName(rangeVar: body["relation"]) else { return }
            touches.append(Touch(target: .table(table), lock: concurrent ? .shareUpdateExclusive : .share, work: .scan))
            if !concurrent {
                candidates.append(Candidate(rule: .requireConcurrentIndexCreation, touch: 0, detail: "CREATE INDEX \(body["idxname"]?.string ?? "") ON \(table)",
                                            byteOffset: body["relation"]?["location"]?.int))
            }
        case "DropStmt": readDrop(body)
        case "RenameStmt":
            guard let table = TableName(rangeVar: body["relation"]), let newName = body["newname"]?.string else { what = "RENAME"; return }
            switch body["renameType"]?.string {
            case "OBJECT_COLUMN" where body["relationType"]?.string == "OBJECT_TABLE":
                what = "ALTER TABLE RENAME COLUMN"
                touches.append(Touch(target: .table(table), lock: .accessExclusive, work: .catalogOnly))
                let column = body["subname"]?.string ?? ""
                candidates.append(Candidate(rule: .renamingColumn, touch: 0, detail: "RENAME COLUMN \(column) TO \(newName)",
                                            byteOffset: body["relation"]?["location"]?.int, column: column))
            case "OBJECT_TABLE":
                what = "ALTER TABLE RENAME"
                touches.append(Touch(target: .table(table), lock: .accessExclusive, work: .catalogOnly))
                candidates.append(Candidate(rule: .renamingTable, touch: 0, detail: "RENAME \(table) TO \(newName)",
                                            byteOffset: body["relation"]?["location"]?.int))
                renames.append((table, TableName(schema: table.schema, name: newName)))
            default:
                what = "RENAME"
                touches.append(Touch(target: .table(table), lock: .accessExclusive, work: .catalogOnly))
            }
        case "ReindexStmt":
            let concurrent = body["params"]?.items.contains { $0.as("DefElem")?["defname"]?.string == "concurrently" } == true
            what = "REINDEX" + (concurrent ? " CONCURRENTLY" : "")
            let name = TableName(rangeVar: body["relation"])
            let target: Touch.Target
            switch (body["kind"]?.string, name) {
            case ("REINDEX_OBJECT_TABLE", let table?): target = .table(table)
            case ("REINDEX_OBJECT_INDEX", let index?): target = .index(index)
            default: target = .many("every table of the \(body["kind"]?.string == "REINDEX_OBJECT_SCHEMA" ? "schema \(body["name"]?.string ?? "")" : "database")")
            }
            touches.append(Touch(target: target, lock: concurrent ? .shareUpdateExclusive : .share, work: .scan))
            if !concurrent {
                candidates.append(Candidate(rule: .requireConcurrentReindex, touch: 0, detail: "REINDEX without CONCURRENTLY",
                                            byteOffset: body["relation"]?["location"]?.int))
            }
        case "VacuumStmt":
            let options = body["options"]?.items.compactMap { $0.as("DefElem")?["defname"]?.string } ?? []
            let vacuum = body["is_vacuumcmd"]?.bool == true
            let full = vacuum && options.contains("full")
            what = vacuum ? (full ? "VACUUM FULL" : "VACUUM") : "ANALYZE"
            let tables = body["rels"]?.items.compactMap { TableName(rangeVar: $0.as("VacuumRelation")?["relation"]) } ?? []
            let targets: [Touch.Target] = tables.isEmpty ? [.many("every table of the database")] : tables.map { .table($0) }
            for target in targets {
                touches.append(Touch(target: target, lock: full ? .accessExclusive : .shareUpdateExclusive, work: full ? .rewrite : .scan))
                if full {
                    candidates.append(Candidate(rule: .vacuumFullOrCluster, touch: touches.count - 1, detail: "VACUUM FULL", byteOffset: nil))
                }
            }
        case "ClusterStmt":
            let target: Touch.Target = TableName(rangeVar: body["relation"]).map { .table($0) } ?? .many("every table clustered before")
            touches.append(Touch(target: target, lock: .accessExclusive, work: .rewrite))
            candidates.append(Candidate(rule: .vacuumFullOrCluster, touch: 0, detail: "CLUSTER", byteOffset: body["relation"]?["location"]?.int))
        case "LockStmt":
            let lock = LockLevel(rawValue: body["mode"]?.int ?? 8) ?? .accessExclusive
            what = "LOCK TABLE IN \(lock.name) MODE"
            for relation in body["relations"]?.items ?? [] {
                guard let table = TableName(rangeVar: relation.as("RangeVar")) else { continue }
                touches.append(Touch(target: .table(table), lock: lock, work: .catalogOnly))
                candidates.append(Candidate(rule: .lockTable, touch: touches.count - 1, detail: "LOCK TABLE \(table) IN \(lock.name) MODE",
                                            byteOffset: relation.as("RangeVar")?["location"]?.int))
            }
        case "UpdateStmt", "DeleteStmt":
            what = node == "UpdateStmt" ? "UPDATE" : "DELETE"
            guard let table = TableName(rangeVar: body["relation"]) else { return }
            let bounded = body["whereClause"] != nil
            touches.append(Touch(target: .table(table), lock: .rowExclusive, work: bounded ? .matchedRows : .scan))
            if !bounded {
                candidates.append(Candidate(rule: .unboundedDataChange, touch: 0, detail: "\(what) \(table) without WHERE",
                                            byteOffset: body["relation"]?["location"]?.int))
            }
        case "InsertStmt":
            what = "INSERT"
            if let table = TableName(rangeVar: body["relation"]) {
                touches.append(Touch(target: .table(table), lock: .rowExclusive, work: .matchedRows))
            }
        case "TruncateStmt":
            for relation in body["relations"]?.items ?? [] {
                if let table = TableName(rangeVar: relation.as("RangeVar")) {
                    touches.append(Touch(target: .table(table), lock: .accessExclusive, work: .catalogOnly))
                }
            }
        case "CreateStmt":
            what = "CREATE TABLE"
            if let table = TableName(rangeVar: body["relation"]) { creates.append(table) }
            // A foreign key of a new table takes SHARE ROW EXCLUSIVE on the table it references, briefly (nothing to check).
            for constraint in body.all("Constraint") where constraint["contype"]?.string == "CONSTR_FOREIGN" {
                if let referenced = TableName(rangeVar: constraint["pktable"]) {
                    touches.append(Touch(target: .table(referenced), lock: .shareRowExclusive, work: .catalogOnly))
                }
            }
        case "CreateTableAsStmt":
            what = "CREATE TABLE AS"
            if let table = TableName(rangeVar: body["into"]?.as("IntoClause")?["rel"]) { creates.append(table) }
        case "CreateTrigStmt":
            if let table = TableName(rangeVar: body["relation"]) {
                touches.append(Touch(target: .table(table), lock: .shareRowExclusive, work: .catalogOnly))
            }
        case "CreatePolicyStmt", "AlterPolicyStmt":
            if let table = TableName(rangeVar: body["table"]) {
                touches.append(Touch(target: .table(table), lock: .accessExclusive, work: .catalogOnly))
            }
        case "RefreshMatViewStmt":
            let concurrent = body["concurrent"]?.bool == true
            what = "REFRESH MATERIALIZED VIEW" + (concurrent ? " CONCURRENTLY" : "")
            if let view = TableName(rangeVar: body["relation"]) {
                touches.append(Touch(target: .table(view), lock: concurrent ? .exclusive : .accessExclusive, work: concurrent ? .scan : .rewrite))
            }
        case "DoStmt":
            what = "DO block"
            opaque = true
        default:
            break
        }
    }

    /// `AlterTableStmt` → `ALTER TABLE`; `CreateFunctionStmt` → `CREATE FUNCTION`.
    static func words(_ node: String) -> String {
        var words: [String] = []
        var current = ""
        for character in node.replacing("Stmt", with: "") {
            if character.isUppercase, !current.isEmpty { words.append(current); current = "" }
            current.append(character)
        }
        if !current.isEmpty { words.append(current) }
        return words.joined(separator: " ").uppercased()
    }

    private mutating func readDrop(_ body: ParseNode) {
        let concurrent = body["concurrent"]?.bool == true
        let objects = body["objects"]?.items.map { $0.as("List")?["items"]?.names ?? [] } ?? []
        switch body["removeType"]?.string {
        case "OBJECT_INDEX":
            what = "DROP INDEX" + (concurrent ? " CONCURRENTLY" : "")
            for parts in objects {
                guard let index = TableName(parts: parts) else { continue }
                touches.append(Touch(target: .index(index), lock: concurrent ? .shareUpdateExclusive : .accessExclusive, work: .catalogOnly))
                if !concurrent {
                    candidates.append(Candidate(rule: .requireConcurrentIndexDeletion, touch: touches.count - 1, detail: "DROP INDEX \(index)", byteOffset: nil))
                }
            }
        case "OBJECT_TABLE":
            what = "DROP TABLE"
            for parts in objects {
                guard let table = TableName(parts: parts) else { continue }
                touches.append(Touch(target: .table(table), lock: .accessExclusive, work: .catalogOnly))
                candidates.append(Candidate(rule: .banDropTable, touch: touches.count - 1, detail: "DROP TABLE \(table)", byteOffset: nil))
                drops.append(table)
            }
        case "OBJECT_POLICY", "OBJECT_TRIGGER":
            // `DROP POLICY p ON t`: the last part is the policy, the ones before it the table.
            what = body["removeType"]?.string == "OBJECT_POLICY" ? "DROP POLICY" : "DROP TRIGGER"
            for parts in objects where parts.count >= 2 {
                if let table = TableName(parts: Array(parts.dropLast())) {
                    touches.append(Touch(target: .table(table), lock: .accessExclusive, work: .catalogOnly))
                }
            }
        default:
            what = "DROP " + (body["removeType"]?.string?.replacing("OBJECT_", with: "") ?? "")
        }
    }

    private mutating func readAlterTable(_ body: ParseNode, serverVersion: Int) {
        guard let table = TableName(rangeVar: body["relation"]) else { return }
        let objectType = body["objtype"]?.string ?? "OBJECT_TABLE"
        what = "ALTER " + objectType.replacing("OBJECT_", with: "").replacing("_", with: " ")
        var lock = LockLevel.accessShare
        var work = TableWork.catalogOnly
        var parts: [String] = []
        var found: [Candidate] = []
        var referenced: [TableName] = []
        for command in body["cmds"]?.items ?? [] {
            guard let cmd = command.as("AlterTableCmd"), let subtype = cmd["subtype"]?.string else { continue }
            parts.append(Self.words(String(subtype.dropFirst(3))))
            let column = cmd["name"]?.string
            var commandLock = LockLevel.accessExclusive
            var commandWork = TableWork.catalogOnly
            func candidate(_ rule: LintRule, _ detail: String, at offset: Int?, column: String? = nil) {
                found.append(Candidate(rule: rule, touch: 0, detail: detail, byteOffset: offset, column: column))
            }
            switch subtype {
            case "AT_AddColumn":
                guard let def = cmd["def"]?.as("ColumnDef") else { break }
                let name = def["colname"]?.string ?? ""
                let typeNames = def["typeName"]?["names"]?.names ?? []
                let type = typeNames.last ?? ""
                let constraints = def["constraints"]?.items.compactMap { $0.as("Constraint") } ?? []
                let kinds = constraints.compactMap { $0["contype"]?.string }
                let offset = def["location"]?.int
                let defaultExpression = constraints.first { $0["contype"]?.string == "CONSTR_DEFAULT" }?["raw_expr"]
                if ["serial", "bigserial", "smallserial", "serial2", "serial4", "serial8"].contains(type) {
                    commandWork = .rewrite
                    candidate(.addingFieldWithDefault, "ADD COLUMN \(name) \(type): its nextval() default is computed for every row", at: offset)
                } else if kinds.contains("CONSTR_IDENTITY") {
                    commandWork = .rewrite
                    candidate(.addingFieldWithDefault, "ADD COLUMN \(name) … GENERATED AS IDENTITY: a value is computed for every row", at: offset)
                } else if kinds.contains("CONSTR_GENERATED") {
                    commandWork = .rewrite
                    candidate(.addingFieldWithDefault, "ADD COLUMN \(name) … GENERATED ALWAYS AS (…) STORED: computed for every row", at: offset)
                } else if let defaultExpression {
                    if serverVersion < 110000 {
                        commandWork = .rewrite
                        candidate(.addingFieldWithDefault, "ADD COLUMN \(name) … DEFAULT: before PostgreSQL 11 any default rewrites the table", at: offset)
                    } else {
                        let functions = defaultExpression.all("FuncCall").map { $0["funcname"]?.names ?? [] }.filter { !$0.isEmpty }
                        if !functions.isEmpty {
                            found.append(Candidate(rule: .addingFieldWithDefault, touch: 0, detail: "ADD COLUMN \(name) … DEFAULT calling \(functions.map { $0.joined(separator: ".") + "()" }.joined(separator: ", "))",
                                                   byteOffset: offset, defaultFunctions: functions))
                        }
                    }
                }
                if kinds.contains("CONSTR_NOTNULL") || kinds.contains("CONSTR_PRIMARY"),
                   defaultExpression == nil, !kinds.contains("CONSTR_IDENTITY"), !kinds.contains("CONSTR_GENERATED"), !type.hasSuffix("serial"),
                   !["serial2", "serial4", "serial8"].contains(type) {
                    var required = Candidate(rule: .addingRequiredField, touch: 0, detail: "ADD COLUMN \(name) … NOT NULL without a default", byteOffset: offset, column: name)
                    required.hasDefault = false
                    found.append(required)
                }
                if kinds.contains("CONSTR_PRIMARY") {
                    commandWork = max(commandWork, .scan)
                    candidate(.addingSerialPrimaryKeyField, "ADD COLUMN \(name) … PRIMARY KEY: its index is built under ACCESS EXCLUSIVE", at: offset)
                }
                if kinds.contains("CONSTR_UNIQUE") {
                    commandWork = max(commandWork, .scan)
                    candidate(.disallowedUniqueConstraint, "ADD COLUMN \(name) … UNIQUE: its index is built under ACCESS EXCLUSIVE", at: offset)
                }
                for constraint in constraints where constraint["contype"]?.string == "CONSTR_FOREIGN" {
                    if let pk = TableName(rangeVar: constraint["pktable"]) { referenced.append(pk) }
                    if constraint["skip_validation"]?.bool != true {
                        commandWork = max(commandWork, .scan)
                        candidate(.addingForeignKeyConstraint, "ADD COLUMN \(name) … REFERENCES: every row is checked", at: constraint["location"]?.int)
                    }
                }
            case "AT_SetNotNull":
                commandWork = .scan
                candidate(.addingNotNullableField, "ALTER COLUMN \(column ?? "") SET NOT NULL", at: nil, column: column)
            case "AT_AlterColumnType":
                commandWork = .rewrite
                let type = cmd["def"]?.as("ColumnDef")?["typeName"]?["names"]?.names.last ?? ""
                candidate(.changingColumnType, "ALTER COLUMN \(column ?? "") TYPE \(type)", at: cmd["def"]?.as("ColumnDef")?["location"]?.int)
            case "AT_DropColumn":
                candidate(.banDropColumn, "DROP COLUMN \(column ?? "")" + (cmd["behavior"]?.string == "DROP_CASCADE" ? " CASCADE" : ""), at: nil, column: column)
            case "AT_AddConstraint":
                guard let constraint = cmd["def"]?.as("Constraint") else { break }
                let name = constraint["conname"]?.string
                let label = name.map { "ADD CONSTRAINT \($0)" } ?? "ADD"
                let offset = constraint["location"]?.int
                let validated = constraint["skip_validation"]?.bool != true
                switch constraint["contype"]?.string {
                case "CONSTR_CHECK":
                    if validated {
                        commandWork = .scan
                        candidate(.constraintMissingNotValid, "\(label) CHECK (…) without NOT VALID", at: offset)
                    }
                    if let test = constraint["raw_expr"]?.as("NullTest"), test["nulltesttype"]?.string == "IS_NOT_NULL",
                       let checked = test["arg"]?.as("ColumnRef")?["fields"]?.names, checked.count == 1 {
                        notNullChecks.append((table, checked[0], name, validated))
                    }
                case "CONSTR_FOREIGN":
                    commandLock = .shareRowExclusive
                    if let pk = TableName(rangeVar: constraint["pktable"]) { referenced.append(pk) }
                    if validated {
                        commandWork = .scan
                        candidate(.constraintMissingNotValid, "\(label) FOREIGN KEY without NOT VALID", at: offset)
                        candidate(.addingForeignKeyConstraint, "\(label) FOREIGN KEY (every row is checked)", at: offset)
                    }
                case "CONSTR_UNIQUE" where constraint["indexname"] == nil:
                    commandWork = .scan
                    candidate(.disallowedUniqueConstraint, "\(label) UNIQUE (…) builds its index", at: offset)
                case "CONSTR_PRIMARY" where constraint["indexname"] == nil:
                    commandWork = .scan
                    candidate(.addingSerialPrimaryKeyField, "\(label) PRIMARY KEY (…) builds its index", at: offset)
                case "CONSTR_EXCLUSION":
                    commandWork = .scan
                default:
                    break
                }
            case "AT_ValidateConstraint":
                commandLock = .shareUpdateExclusive
                commandWork = .scan
                if let column { validates.append((table, column)) }
                var underHeld = Candidate(rule: .constraintMissingNotValid, touch: 0,
                                          detail: "VALIDATE CONSTRAINT \(column ?? "") in the same transaction as a stronger lock on the table", byteOffset: nil)
                underHeld.onlyUnderStrongerLock = true
                found.append(underHeld)
            case "AT_SetRelOptions", "AT_ResetRelOptions", "AT_SetStatistics", "AT_ClusterOn", "AT_DropCluster", "AT_SetOptions",
                 "AT_ResetOptions", "AT_AttachPartition":
                commandLock = .shareUpdateExclusive
            case "AT_DetachPartition" where cmd["def"]?.as("PartitionCmd")?["concurrent"]?.bool == true:
                commandLock = .shareUpdateExclusive
            case "AT_AddIndex", "AT_AddIndexConstraint":
                break
            case "AT_SetLogged", "AT_SetUnLogged", "AT_SetTableSpace", "AT_SetAccessMethod":
                commandWork = .rewrite
            default:
                if subtype.hasPrefix("AT_EnableTrig") || subtype.hasPrefix("AT_DisableTrig") || subtype.hasPrefix("AT_EnableAlwaysTrig")
                    || subtype.hasPrefix("AT_EnableReplicaTrig") || subtype == "AT_AddConstraintRecurse" {
                    commandLock = .shareRowExclusive
                }
            }
            lock = max(lock, commandLock)
            work = max(work, commandWork)
        }
        if !parts.isEmpty { what += " " + parts.joined(separator: ", ") }
        touches.append(Touch(target: .table(table), lock: lock, work: work))
        for pk in referenced where pk != table {
            touches.append(Touch(target: .table(pk), lock: .shareRowExclusive, work: .catalogOnly))
        }
        candidates = found
    }
}
