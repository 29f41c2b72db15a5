import Postgres
import OutputText

/// Compares what migration files create with what the live catalog has, letting Postgres itself
/// normalise every definition: each file's statements run under probe names (tables, functions) or on
/// temporary copies of live tables (policies, triggers) inside one transaction that is always rolled back.
/// Live tables get no lock stronger than a share lock, held for the milliseconds of the check.
struct CatalogProbe {
    /// Whether a file's objects exist in the live database.
    enum Presence: Sendable { case present, absent, partial }

    /// The comparison for one file.
    struct FileResult {
        let file: MigrationFile
        let presence: Presence
        /// Differences between the live objects and the file's, one sentence each (empty when absent).
        let differences: [String]
        /// Objects the file creates that the live database lacks.
        let missing: [String]
        /// Live rights narrower than the file gives (a hardening revoke): not a failure.
        var stricter: [String] = []
        /// Objects the file creates that the live database has.
        var found: [String] = []
        /// Statements the probe cannot compare (`file:line: why`): information, not differences; adopt refuses them.
        var notCompared: [String] = []
    }

    /// One object to compare once every file has run in the probe.
    private enum Check {
        case table(live: String, liveOID: Int?, probeOID: Int, probeName: String)
        case rowLevelSecurity(table: String, liveOID: Int?)
        case policy(name: String, table: String, liveTableOID: Int?, probeTableOID: Int, probeName: String)
        /// `signature` is the live name with the argument types (`public.f(text, integer)`): argument names would
        /// make to_regprocedure fail with a syntax error.
        case function(signature: String, probeOID: Int, probeName: String)
        case trigger(name: String, table: String, liveTableOID: Int?, probeTableOID: Int, probeName: String)
        case bucket(expectedJSON: String)
        case index(name: String, table: String, liveTableOID: Int?, probeTableOID: Int, probeName: String)
    }

    let connection: Connection

    /// Compares `files` (in order, each seeing the effect of the ones before it, after `context`, the files already
    /// applied, whose own results are left out) with the live catalog.
    func compare(_ files: [MigrationFile], after context: [MigrationFile] = []) throws -> [FileResult] {
        let files = context + files
        try connection.execute("begin")
        defer { _ = try? connection.execute("rollback") }
        // The statements are read with standard_conforming_strings on; the server must read them the same way.
        try connection.query("select set_config('standard_conforming_strings', 'on', true)")
        var state = ProbeState()
        var checks: [[Check]] = []
        var failures: [[String]] = []
        for file in files {
            var fileChecks: [Check] = []
            var fileFailures: [String] = []
            for statement in file.statements {
                do {
                    if let check = try probe(statement, state: &state) { fileChecks.append(check) }
                } catch let error as ProbeFailure {
                    fileFailures.append("\(file.location(ofOffset: statement.offset)): \(error.message)")
                }
            }
            checks.append(fileChecks)
            failures.append(fileFailures)
        }
        // A function that a later file defines again (`create or replace`) is compared as the last file leaves it.
        var lastDefinition: [String: (file: Int, check: Int)] = [:]
        for (fileIndex, fileChecks) in checks.enumerated() {
            for (checkIndex, check) in fileChecks.enumerated() {
                if case .function(let signature, _, _) = check {
                    lastDefinition[signature.lowercased()] = (fileIndex, checkIndex)
                }
            }
        }
        var results: [FileResult] = []
        for (index, file) in files.enumerated() where index >= context.count {
            var present = 0, absent = 0
            var differences: [String] = []
            var missing: [String] = [], stricter: [String] = [], found: [String] = []
            for (checkIndex, check) in checks[index].enumerated() {
                if case .function(let signature, _, _) = check,
                   let last = lastDefinition[signature.lowercased()], last != (index, checkIndex) {
                    present += 1
                    continue
                }
                let outcome = try evaluate(check, state: state)
                if let gone = outcome.missing { absent += 1; missing.append(gone) } else { present += 1; found += outcome.label.map { [$0] } ?? [] }
                differences += outcome.differences
                stricter += outcome.stricter
            }
            let presence: Presence = absent == 0 ? .present : (present == 0 && differences.isEmpty ? .absent : .partial)
            if presence == .partial { differences += missing.map { "\($0) is missing" } }
            results.append(FileResult(file: file, presence: presence, differences: differences, missing: missing,
                                      stricter: stricter, found: found, notCompared: failures[index]))
        }
        return results
    }

    // MARK: - Running statements under probe names

    private struct ProbeFailure: Error { let message: String }

    /// What the probe has created so far, and how its names map back to the live ones.
    private struct ProbeState {
        var counter = 0
        /// Live table OID → probe table (`public.steward_probe_t1`), for tables the files create.
        var probeTables: [Int: (name: String, oid: Int)] = [:]
        /// Live table OID → a temporary copy (for policies and triggers on tables the files do not create).
        var copies: [Int: (name: String, oid: Int)] = [:]
        /// Probe names to live names, longest first when replaced in definitions.
        var renames: [(probe: String, live: String)] = []
        /// Policies created so far: "tableOID/name" → probe policy name and the table it was created on.
        var policies: [String: (probe: String, target: String)] = [:]

        mutating func next(_ kind: String) -> String { counter += 1; return "steward_probe_\(kind)\(counter)" }

        func unprobed(_ text: String) -> String {
            var text = text
            for rename in renames.sorted(by: { $0.probe.count > $1.probe.count }) {
                text = text.replacing(rename.probe, with: rename.live)
            }
            return text
        }
    }

    private func probe(_ statement: SQLStatement, state: inout ProbeState) throws -> Check? {
        switch StatementShape(statement) {
        case .createTable(let name):
            let probe = state.next("t")
            let qualified = name.schema.map { "\(quoted($0)).\(probe)" } ?? probe
            let words = statement.significant.map { $0.keyword ?? "" }
            if zip(words, words.dropFirst()).contains(where: { $0 == "partition" && $1 == "of" }) {
                // Its bounds are evaluated when it is created (an expression with effects would outlive the
                // rollback) and the probe would be attached to the live table under an exclusive lock.
                throw ProbeFailure(message: "CREATE TABLE … PARTITION OF cannot be compared without attaching a table to the live one")
            }
            var text = statement.rewriting([(name.range, qualified)])
            if statement.kind.node == "CreateTableAsStmt" {
                // The query only gives the columns: planned, never run (a query with effects, such as setval or
                // pg_terminate_backend, would outlive the rollback).
                let words = statement.significant.suffix(3).map { $0.keyword ?? "" }
                if words.suffix(2) == ["with", "data"] {
                    throw ProbeFailure(message: "CREATE TABLE … AS … WITH DATA cannot be compared without running its query; write WITH NO DATA and fill the table with INSERT … SELECT")
                }
                if words != ["with", "no", "data"] { text += " with no data" }
            }
            try run(text)
            let probeOID = try oid(ofRelation: qualified)!
            let liveOID = try oid(ofRelation: name.text)
            if let liveOID { state.probeTables[liveOID] = (qualified, probeOID) }
            state.renames.append((probe, name.object))
            return .table(live: name.text, liveOID: liveOID, probeOID: probeOID, probeName: probe)

        case .enableRowLevelSecurity(let table):
            return .rowLevelSecurity(table: table.text, liveOID: try oid(ofRelation: table.text))

        case .grantOnTable(let table):
            guard let liveOID = try oid(ofRelation: table.text), let probe = state.probeTables[liveOID] else {
                if try oid(ofRelation: table.text) == nil { return nil }
                throw ProbeFailure(message: "\(statement.leadingWords(1)[0].uppercased()) on \(table.text), a table these files do not create, cannot be compared")
            }
            try run(statement.rewriting([(table.range, probe.name)]))
            return nil

        case .grantOnFunction(let function):
            guard let rename = state.renames.last(where: { $0.live == function.object && $0.probe.hasPrefix("steward_probe_f") }) else {
                throw ProbeFailure(message: "\(statement.leadingWords(1)[0].uppercased()) on function \(function.text), a function these files do not create, cannot be compared")
            }
            try run(statement.rewriting([(function.range, function.schema.map { "\(quoted($0)).\(rename.probe)" } ?? rename.probe)]))
            return nil

        case .createPolicy(let name, let table):
            let liveOID = try oid(ofRelation: table.text)
            guard let liveOID else { return .policy(name: name.object, table: table.text, liveTableOID: nil, probeTableOID: 0, probeName: "") }
            let target = try probeTarget(forLive: liveOID, state: &state)
            let probe = state.next("p")
            try run(statement.rewriting([(name.range, probe), (table.range, target.name)]))
            state.policies["\(liveOID)/\(name.object)"] = (probe, target.name)
            return .policy(name: name.object, table: table.text, liveTableOID: liveOID, probeTableOID: target.oid, probeName: probe)

        case .alterPolicy(let name, let table), .dropPolicy(let name, let table):
            // Changes a policy an earlier file created: apply the change to that file's probe policy, so the
            // earlier file's check compares the live policy with the policy as the files leave it.
            guard let liveOID = try oid(ofRelation: table.text), let probe = state.policies["\(liveOID)/\(name.object)"] else {
                throw ProbeFailure(message: "\(statement.leadingWords(2).joined(separator: " ").uppercased()) \(name.text): the policy is not created by an earlier file, so it cannot be compared")
            }
            try run(statement.rewriting([(name.range, probe.probe), (table.range, probe.target)]))
            return nil

        case .createFunction(let name):
            let probe = state.next("f")
            let qualified = name.schema.map { "\(quoted($0)).\(probe)" } ?? probe
            try run(statement.rewriting([(name.range, qualified)]))
            let row = try connection.query(
                "select p.oid, oidvectortypes(p.proargtypes) from pg_proc p where p.proname = $1 order by oid desc limit 1", [probe]).firstRow()
            state.renames.append((probe, name.object))
            return .function(signature: "\(name.text)(\(try row.decode(String.self, at: 1)))", probeOID: try row.decode(Int.self, at: 0), probeName: probe)

        case .createTrigger(let name, let table, let function):
            let liveOID = try oid(ofRelation: table.text)
            guard let liveOID else { return .trigger(name: name.object, table: table.text, liveTableOID: nil, probeTableOID: 0, probeName: "") }
            let target = try probeTarget(forLive: liveOID, state: &state)
            let probe = state.next("g")
            var replacements = [(name.range, probe), (table.range, target.name)]
            if let function, let rename = state.renames.last(where: { $0.live == function.object && $0.probe.hasPrefix("steward_probe_f") }) {
                replacements.append((function.range, function.schema.map { "\(quoted($0)).\(rename.probe)" } ?? rename.probe))
            }
            try run(statement.rewriting(replacements))
            return .trigger(name: name.object, table: table.text, liveTableOID: liveOID, probeTableOID: target.oid, probeName: probe)

        case .insertBucket(let columns, let values):
            let list = PostgresQuery.joined(try columns.map { "\(try SQLIdentifier($0))" }, separator: ", ")
            // The values are evaluated read-only and rolled back: a value that writes (setval, nextval, a function
            // that inserts) fails here instead of outliving the comparison.
            try connection.execute("savepoint steward_probe")
            let json: QueryResult
            do {
                try connection.query("set local transaction_read_only = on")
                json = try connection.query("select row_to_json(v)::text as row from (values \(unescaped: values)) as v(\(list))")
            } catch let error as PostgresError {
                try requireProbeTransaction()
                try connection.execute("rollback to savepoint steward_probe")
                throw ProbeFailure(message: "could not evaluate: \(error)")
            }
            try requireProbeTransaction()
            try connection.execute("rollback to savepoint steward_probe")
            return .bucket(expectedJSON: try json.scalar(String.self))

        case .doBlock:
            return nil

        case .createIndex(let name, let table, let concurrentlyAt):
            let liveOID = try oid(ofRelation: table.text)
            guard let liveOID else { return .index(name: name.object, table: table.text, liveTableOID: nil, probeTableOID: 0, probeName: "") }
            let target = try probeTarget(forLive: liveOID, state: &state)
            let probe = state.next("i")
            var replacements = [(name.range, probe), (table.range, target.name)]
            // Built on an empty copy inside a transaction: CONCURRENTLY is neither needed nor allowed there.
            if let at = concurrentlyAt { replacements.append((at..<(at + 1), "")) }
            try run(statement.rewriting(replacements))
            return .index(name: name.object, table: table.text, liveTableOID: liveOID, probeTableOID: target.oid, probeName: probe)

        case .unsupported(let words):
            throw ProbeFailure(message: "\(words) … cannot be compared with the live catalog (adopt and verify compare tables, row level security, table grants, policies, functions, triggers, indexes and bucket inserts)")
        }
    }

    /// Where a probe policy or trigger for live table `oid` goes: the probe table, or a temporary copy of the live one.
    private func probeTarget(forLive liveOID: Int, state: inout ProbeState) throws -> (name: String, oid: Int) {
        if let probe = state.probeTables[liveOID] { return probe }
        if let copy = state.copies[liveOID] { return copy }
        let name = state.next("c")
        let live = try connection.query("""
            select format('%I.%I', n.nspname, c.relname) from pg_class c join pg_namespace n on n.oid = c.relnamespace where c.oid = $1
            """, [liveOID]).scalar(String.self)
        try run("create temporary table \(name) (like \(live))")
        let copy = (name: "pg_temp.\(name)", oid: try oid(ofRelation: "pg_temp.\(name)")!)
        state.copies[liveOID] = copy
        state.renames.append((copy.name, live))
        state.renames.append((name, live))
        return copy
    }

    /// Runs one probe statement as its own extended-protocol message (never two), inside the probe's transaction.
    private func run(_ sql: String) throws {
        _ = try savepoint { try connection.query(unsafeSQL: sql) }
    }

    private func savepoint<T>(_ body: () throws -> T) throws -> T {
        try connection.execute("savepoint steward_probe")
        let value: T
        do {
            value = try body()
        } catch let error as PostgresError {
            try requireProbeTransaction()
            try connection.execute("rollback to savepoint steward_probe")
            throw ProbeFailure(message: "could not evaluate: \(error)")
        }
        try requireProbeTransaction()
        try connection.execute("release savepoint steward_probe")
        return value
    }

    /// Stops the comparison if a statement ended the probe's transaction: nothing may outlive the rollback.
    private func requireProbeTransaction() throws {
        let status = connection.transactionStatus
        guard status == .inTransaction || status == .failedTransaction else {
            throw PostgresError(kind: .server, message: "a replayed statement ended the comparison's transaction (\(status)); verify stopped")
        }
    }

    private func oid(ofRelation name: String) throws -> Int? {
        try connection.query("select to_regclass($1)::oid::int8", [name]).scalar(Int?.self)
    }

    private func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacing("\"", with: "\"\"") + "\""
    }

    // MARK: - Comparing

    private struct Outcome {
        /// Set when the live object does not exist.
        var missing: String?
        var differences: [String] = []
        /// Live rights narrower than the files give.
        var stricter: [String] = []
        /// What the object is (`table public.profiles`), when it exists.
        var label: String?
    }

    private func evaluate(_ check: Check, state: ProbeState) throws -> Outcome {
        switch check {
        case .table(let live, let liveOID, let probeOID, _):
            guard let liveOID else { return Outcome(missing: "table \(live)") }
            var differences = try compareRows(
                label: "table \(live)", what: "column",
                live: columns(liveOID), expected: columns(probeOID))
            differences += try compareRows(
                label: "table \(live)", what: "constraint",
                live: constraints(liveOID), expected: constraints(probeOID).map { (state.unprobed($0.0), state.unprobed($0.1)) })
            let (wider, narrower) = compareGrants(label: "table \(live)", live: try grants(liveOID), expected: try grants(probeOID))
            return Outcome(differences: differences + wider, stricter: narrower, label: "table \(live)")

        case .rowLevelSecurity(let table, let liveOID):
            guard let liveOID else { return Outcome(missing: "table \(table)") }
            let on = try connection.query("select relrowsecurity from pg_class where oid = $1", [liveOID]).scalar(Bool.self)
            return Outcome(differences: on ? [] : ["table \(table): row level security is OFF (every row is open to the API roles' grants)"],
                           label: "row level security on \(table)")

        case .policy(let name, let table, let liveTableOID, let probeTableOID, let probeName):
            let expectedPolicy = try policy(table: probeTableOID, name: probeName)
            let livePolicy = try liveTableOID.flatMap { try policy(table: $0, name: name) }
            guard let expected = expectedPolicy else {
                // A later file drops it.
                return Outcome(differences: livePolicy == nil ? [] : ["policy \"\(name)\" on \(table) exists, but a later migration drops it"])
            }
            guard let live = livePolicy else {
                return Outcome(missing: "policy \"\(name)\" on \(table)")
            }
            var differences: [String] = []
            for (field, (l, e)) in zip(["command", "permissive", "roles", "USING", "WITH CHECK"], zip(live, expected)) where l != e {
                differences.append("policy \"\(name)\" on \(table): \(field) differs: live \(l.isEmpty ? "(none)" : l), files \(e.isEmpty ? "(none)" : e)")
            }
            return Outcome(differences: differences, label: "policy \"\(name)\" on \(table)")

        case .function(let signature, let probeOID, _):
            guard let liveOID = try connection.query("select to_regprocedure($1)::oid::int8", [signature]).scalar(Int?.self) else {
                return Outcome(missing: "function \(signature)")
            }
            let (l, e) = (try function(liveOID), try function(probeOID))
            var differences: [String] = []
            let fields = ["returns", "language", "SECURITY DEFINER", "settings (search_path …)", "volatility", "strict", "body"]
            for (field, (lv, ev)) in zip(fields, zip(l, e)) where lv != state.unprobed(ev) {
                differences.append(field == "body"
                    ? "function \(signature): body differs from the file's (beyond whitespace)"
                    : "function \(signature): \(field) differs: live \(lv.isEmpty ? "(none)" : lv), files \(ev.isEmpty ? "(none)" : ev)")
            }
            let (wider, narrower) = compareGrants(label: "function \(signature)", live: try executeGrants(liveOID), expected: try executeGrants(probeOID))
            return Outcome(differences: differences + wider, stricter: narrower, label: "function \(signature)")

        case .trigger(let name, let table, let liveTableOID, let probeTableOID, let probeName):
            guard let liveTableOID, let live = try trigger(table: liveTableOID, name: name) else {
                return Outcome(missing: "trigger \(name) on \(table)")
            }
            let expected = try trigger(table: probeTableOID, name: probeName)!
            var differences: [String] = []
            let expectedDefinition = state.unprobed(expected.definition).replacing(probeName, with: name)
            if live.definition != expectedDefinition {
                differences.append("trigger \(name) on \(table) differs: live \(live.definition), files \(expectedDefinition)")
            }
            if live.enabled == "D" { differences.append("trigger \(name) on \(table) is DISABLED") }
            return Outcome(differences: differences, label: "trigger \(name) on \(table)")

        case .index(let name, let table, let liveTableOID, let probeTableOID, let probeName):
            let query: PostgresQuery = """
                select pg_get_indexdef(i.indexrelid), i.indisvalid from pg_index i join pg_class c on c.oid = i.indexrelid
                where i.indrelid = $1 and c.relname = $2
                """
            guard let liveTableOID, let live = try connection.query(query, [liveTableOID, name]).rows.first else {
                return Outcome(missing: "index \(name) on \(table)")
            }
            let expected = try connection.query(query, [probeTableOID, probeName]).firstRow()
            let liveDefinition = try live.decode(String.self, at: 0)
            let temporarySchema = try connection.query("select nspname::text from pg_namespace where oid = pg_my_temp_schema()").rows.first?
                .decode(String.self, at: 0)
            var expectedDefinition = try expected.decode(String.self, at: 0).replacing(probeName, with: name)
            if let temporarySchema { expectedDefinition = expectedDefinition.replacing(temporarySchema + ".", with: "pg_temp.") }
            expectedDefinition = state.unprobed(expectedDefinition)
            var differences: [String] = []
            if liveDefinition != expectedDefinition {
                differences.append("index \(name) on \(table) differs: live \(liveDefinition), files \(expectedDefinition)")
            }
            if try !live.decode(Bool.self, at: 1) { differences.append("index \(name) on \(table) is INVALID (a concurrent build failed): drop and rebuild it") }
            return Outcome(differences: differences, label: "index \(name) on \(table)")

        case .bucket(let expectedJSON):
            let rows = try connection.query("""
                with e as (select $1::jsonb as j),
                     l as (select to_jsonb(b) as j from storage.buckets b, e where b.id = e.j ->> 'id')
                select (select count(*) from l) as found,
                       coalesce((select string_agg(format('%s is %s, files say %s', k.key, coalesce(l.j ->> k.key, 'null'), k.value), '; ')
                                 from e, l, jsonb_each_text(e.j || jsonb_build_object('public', coalesce(e.j -> 'public', 'false'))) k
                                 where (l.j ->> k.key) is distinct from k.value), '') as diff,
                       (select j ->> 'id' from e) as id
                """, [expectedJSON]).firstRow()
            let id = try rows.decode(String?.self, "id") ?? "?"
            if try rows.decode(Int.self, "found") == 0 { return Outcome(missing: "bucket \(id)") }
            let diff = try rows.decode(String.self, "diff")
            return Outcome(differences: diff.isEmpty ? [] : ["bucket \(id): \(diff)"], label: "bucket \(id)")
        }
    }

    /// Compares keyed rows: `(key, definition)` pairs, reporting missing, extra and different ones.
    private func compareRows(label: String, what: String, live: [(String, String)], expected: [(String, String)]) throws -> [String] {
        var differences: [String] = []
        let liveByKey = Dictionary(live, uniquingKeysWith: { a, _ in a })
        let expectedByKey = Dictionary(expected, uniquingKeysWith: { a, _ in a })
        for (key, definition) in expected {
            guard let actual = liveByKey[key] else {
                differences.append("\(label): \(what) \(key) is missing (files: \(definition))"); continue
            }
            if actual != definition { differences.append("\(label): \(what) \(key) differs: live \(actual), files \(definition)") }
        }
        for (key, definition) in live where expectedByKey[key] == nil {
            differences.append("\(label): extra \(what) \(key) (\(definition)) that the files do not create")
        }
        return differences
    }

    /// Compares privileges per grantee: rights the live object gives beyond the files' are drift (`wider`); rights the
    /// files give that the live object lacks, with nothing added, are a hardening (`narrower`).
    private func compareGrants(label: String, live: [(String, String)], expected: [(String, String)]) -> (wider: [String], narrower: [String]) {
        func rights(_ text: String) -> Set<String> { Set(text.split(separator: ",").map { $0.trimmingWhitespace() }) }
        let liveByGrantee = Dictionary(live.map { ($0.0, rights($0.1)) }, uniquingKeysWith: { a, b in a.union(b) })
        let expectedByGrantee = Dictionary(expected.map { ($0.0, rights($0.1)) }, uniquingKeysWith: { a, b in a.union(b) })
        var wider: [String] = [], narrower: [String] = []
        for grantee in Set(liveByGrantee.keys).union(expectedByGrantee.keys).sorted() {
            let l = liveByGrantee[grantee] ?? [], e = expectedByGrantee[grantee] ?? []
            guard l != e else { continue }
            let show = { (set: Set<String>) in set.isEmpty ? "(none)" : set.sorted().joined(separator: ", ") }
            if l.isEmpty {
                narrower.append("\(label): grant to \(grantee) is missing (files: \(show(e)))")
            } else if l.isSubset(of: e) {
                narrower.append("\(label): grant to \(grantee) is narrower: live \(show(l)), files \(show(e))")
            } else if e.isEmpty {
                wider.append("\(label): extra grant to \(grantee) (\(show(l))) that the files do not create")
            } else {
                wider.append("\(label): grant to \(grantee) differs: live \(show(l)), files \(show(e)) (wider: \(show(l.subtracting(e))))")
            }
        }
        return (wider, narrower)
    }

    /// Who may execute a function (PUBLIC included), besides its owner.
    private func executeGrants(_ function: Int) throws -> [(String, String)] {
        try connection.query("""
            select case when a.grantee = 0 then 'PUBLIC' else a.grantee::regrole::text end, a.privilege_type
            from pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
            where p.oid = $1 and a.grantee <> p.proowner order by 1
            """, [function]).rows.map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) }
    }

    private func columns(_ table: Int) throws -> [(String, String)] {
        try connection.query("""
            select a.attname::text, format_type(a.atttypid, a.atttypmod)
                   || case when a.attnotnull then ' not null' else '' end
                   || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
                   || case a.attidentity when 'a' then ' generated always as identity' when 'd' then ' generated by default as identity' else '' end
            from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
            where a.attrelid = $1 and a.attnum > 0 and not a.attisdropped order by a.attnum
            """, [table]).rows.map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) }
    }

    private func constraints(_ table: Int) throws -> [(String, String)] {
        try connection.query("select conname::text, pg_get_constraintdef(oid) from pg_constraint where conrelid = $1 order by conname", [table])
            .rows.map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) }
    }

    private func grants(_ table: Int) throws -> [(String, String)] {
        try connection.query("""
            select case when a.grantee = 0 then 'PUBLIC' else a.grantee::regrole::text end as grantee,
                   string_agg(a.privilege_type, ', ' order by a.privilege_type)
            from pg_class c, aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a
            where c.oid = $1 and a.grantee <> c.relowner
            group by 1 order by 1
            """, [table]).rows.map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) }
    }

    private func policy(table: Int, name: String) throws -> [String]? {
        try connection.query("""
            select case polcmd when 'r' then 'SELECT' when 'a' then 'INSERT' when 'w' then 'UPDATE' when 'd' then 'DELETE' else 'ALL' end,
                   case when polpermissive then 'PERMISSIVE' else 'RESTRICTIVE' end,
                   (select string_agg(case when r = 0 then 'public' else r::regrole::text end, ', ' order by 1) from unnest(polroles) r),
                   coalesce(pg_get_expr(polqual, polrelid), ''), coalesce(pg_get_expr(polwithcheck, polrelid), '')
            from pg_policy where polrelid = $1 and polname = $2
            """, [table, name]).rows.first.map { row in try (0..<5).map { try row.decode(String?.self, at: $0) ?? "" } }
    }

    private func function(_ oid: Int) throws -> [String] {
        let row = try connection.query("""
            select pg_get_function_result(p.oid), l.lanname::text, case when p.prosecdef then 'yes' else 'no' end,
                   coalesce(array_to_string(p.proconfig, ', '), ''),
                   case p.provolatile when 'i' then 'immutable' when 's' then 'stable' else 'volatile' end,
                   case when p.proisstrict then 'yes' else 'no' end,
                   btrim(regexp_replace(p.prosrc, '\\s+', ' ', 'g'))
            from pg_proc p join pg_language l on l.oid = p.prolang where p.oid = $1
            """, [oid]).firstRow()
        return try (0..<7).map { try row.decode(String.self, at: $0) }
    }

    private func trigger(table: Int, name: String) throws -> (definition: String, enabled: String)? {
        try connection.query("select pg_get_triggerdef(oid), tgenabled::text from pg_trigger where tgrelid = $1 and tgname = $2 and not tgisinternal",
                             [table, name]).rows.first.map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) }
    }
}
