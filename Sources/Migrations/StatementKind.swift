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
    /// True for statements whose effect is on the whole server, not the database: roles, databases, tablespaces,
    /// subscriptions, server settings, and comments, grants and renames of those. A shadow database on the same
    /// server shares them with the live one, so it must not run these.
    let clusterWide: Bool

    /// Reads libpg_query's JSON for exactly one statement.
    init(parseTree: String) {
        let json = JSONBytes(parseTree)
        node = json.string(after: "\"stmt\":{\"") ?? "unknown"
        switch node {
        case "TransactionStmt":
            let kind = json.string(after: "\"kind\":\"") ?? ""
            controlsTransaction = !["TRANS_STMT_SAVEPOINT", "TRANS_STMT_RELEASE", "TRANS_STMT_ROLLBACK_TO"].contains(kind)
        default:
            controlsTransaction = false
        }
        let concurrent = ["IndexStmt", "DropStmt", "AlterTableStmt"].contains(node) && json.contains("\"concurrent\":true")
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
        let shared = ["\"OBJECT_ROLE\"", "\"OBJECT_DATABASE\"", "\"OBJECT_TABLESPACE\"", "\"OBJECT_PARAMETER_ACL\""]
        switch node {
        case "CreateRoleStmt", "AlterRoleStmt", "AlterRoleSetStmt", "DropRoleStmt", "GrantRoleStmt", "ReassignOwnedStmt",
             "CreatedbStmt", "DropdbStmt", "AlterDatabaseStmt", "AlterDatabaseSetStmt", "AlterDatabaseRefreshCollStmt",
             "CreateTableSpaceStmt", "DropTableSpaceStmt", "AlterTableSpaceOptionsStmt", "AlterSystemStmt",
             "CreateSubscriptionStmt", "AlterSubscriptionStmt", "DropSubscriptionStmt":
            clusterWide = true
        case "CommentStmt", "SecLabelStmt", "RenameStmt", "AlterOwnerStmt", "GrantStmt":
            clusterWide = shared.contains { json.contains($0) }
        default:
            clusterWide = false
        }
    }

    /// Statements whose effect would change how the server reads the statements after them, or that need the
    /// client's copy protocol, which Steward does not speak.
    private static func refusal(node: String, json: JSONBytes) -> String? {
        switch node {
        case "CopyStmt" where !json.contains("\"filename\":"):
            return "COPY … FROM STDIN / TO STDOUT needs the client's copy protocol, which Steward does not speak: load the rows with INSERT (or COPY from a file on the server)"
        case "VariableSetStmt":
            guard let name = json.string(after: "\"name\":\"")?.lowercased() else { return nil }
            let value = json.string(after: "\"sval\":{\"sval\":\"")?.lowercased()
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
}

/// The bytes of a parse tree's JSON, searched as bytes (the trees of large statements are long).
struct JSONBytes {
    let bytes: [UInt8]

    init(_ text: String) { bytes = Array(text.utf8) }

    /// Where `marker` first occurs at or after `from`, as the index just past it.
    func end(of marker: String, from: Int = 0) -> Int? {
        let needle = Array(marker.utf8)
        guard !needle.isEmpty, needle.count <= bytes.count else { return nil }
        var i = from
        let last = bytes.count - needle.count
        while i <= last {
            if bytes[i] == needle[0] {
                var j = 1
                while j < needle.count, bytes[i + j] == needle[j] { j += 1 }
                if j == needle.count { return i + needle.count }
            }
            i += 1
        }
        return nil
    }

    func contains(_ marker: String) -> Bool { end(of: marker) != nil }

    /// How often `marker` occurs (without overlaps).
    func count(of marker: String) -> Int {
        var count = 0
        var from = 0
        while let end = end(of: marker, from: from) { count += 1; from = end }
        return count
    }

    /// The JSON string value that starts right after the first `marker`, up to its closing quote.
    func string(after marker: String) -> String? {
        guard let start = end(of: marker) else { return nil }
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}
