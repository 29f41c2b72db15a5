/// What the server's parse tree says one statement is, reduced to the facts migration rules need.
struct StatementKind: Sendable, Equatable {
    /// The parse node of the statement (`CreateStmt`, `TransactionStmt`, `IndexStmt`, …).
    let node: String
    /// Set for statements that open, end or prepare a transaction (not savepoints).
    let controlsTransaction: Bool
    /// A short name of the statement if it cannot run inside a transaction (`CREATE INDEX CONCURRENTLY`, `VACUUM`).
    let needsNoTransaction: String?
    /// Why a migration file may not hold the statement at all, if it may not.
    let refusal: String?

    /// Reads libpg_query's JSON for exactly one statement.
    init(parseTree json: String) {
        node = Self.string(after: "\"stmt\":{\"", in: json) ?? "unknown"
        switch node {
        case "TransactionStmt":
            let kind = Self.string(after: "\"kind\":\"", in: json) ?? ""
            controlsTransaction = !["TRANS_STMT_SAVEPOINT", "TRANS_STMT_RELEASE", "TRANS_STMT_ROLLBACK_TO"].contains(kind)
        default:
            controlsTransaction = false
        }
        let concurrent = json.contains("\"concurrent\":true")
        switch node {
        case "IndexStmt" where concurrent: needsNoTransaction = "CREATE INDEX CONCURRENTLY"
        case "DropStmt" where concurrent: needsNoTransaction = "DROP INDEX CONCURRENTLY"
        case "ReindexStmt" where json.contains("\"defname\":\"concurrently\""): needsNoTransaction = "REINDEX CONCURRENTLY"
        case "ReindexStmt" where json.contains("REINDEX_OBJECT_SYSTEM") || json.contains("REINDEX_OBJECT_DATABASE"):
            needsNoTransaction = "REINDEX DATABASE or SYSTEM"
        case "AlterTableStmt" where concurrent: needsNoTransaction = "DETACH PARTITION CONCURRENTLY"
        case "VacuumStmt" where json.contains("\"is_vacuumcmd\":true"): needsNoTransaction = "VACUUM"
        case "CreatedbStmt": needsNoTransaction = "CREATE DATABASE"
        case "DropdbStmt": needsNoTransaction = "DROP DATABASE"
        case "CreateTableSpaceStmt": needsNoTransaction = "CREATE TABLESPACE"
        case "DropTableSpaceStmt": needsNoTransaction = "DROP TABLESPACE"
        case "AlterSystemStmt": needsNoTransaction = "ALTER SYSTEM"
        default: needsNoTransaction = nil
        }
        refusal = Self.refusal(node: node, json: json)
    }

    /// Statements whose effect would change how the server reads the statements after them, or that need the
    /// client's copy protocol, which Steward does not speak.
    private static func refusal(node: String, json: String) -> String? {
        switch node {
        case "CopyStmt" where !json.contains("\"filename\":"):
            return "COPY … FROM STDIN / TO STDOUT needs the client's copy protocol, which Steward does not speak: load the rows with INSERT (or COPY from a file on the server)"
        case "VariableSetStmt":
            guard let name = string(after: "\"name\":\"", in: json)?.lowercased() else { return nil }
            let value = string(after: "\"sval\":{\"sval\":\"", in: json)?.lowercased()
            let isSet = json.contains("\"kind\":\"VAR_SET_VALUE\"")
            switch name {
            case "standard_conforming_strings" where isSet && value != "on":
                return "SET standard_conforming_strings changes how the server reads every string after it: Steward reads migration files with it on, so leave it on (write E'…' strings for backslash escapes)"
            case "client_encoding" where isSet && value != "utf8" && value != "utf-8" && value != "unicode":
                return "SET client_encoding changes how the server reads the bytes after it: migration files are UTF-8, so leave it"
            case "backslash_quote" where isSet:
                return "SET backslash_quote changes how the server reads strings: leave it at its default"
            default:
                return nil
            }
        default:
            return nil
        }
    }

    /// The JSON string value that starts right after the first `marker`, up to its closing quote.
    private static func string(after marker: String, in json: String) -> String? {
        guard let start = json.firstRange(of: marker)?.upperBound else { return nil }
        var end = start
        while end < json.endIndex, json[end] != "\"" { end = json.index(after: end) }
        return String(json[start..<end])
    }
}
