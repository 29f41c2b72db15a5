import Postgres
import Storage

/// The references definition (`ObjectReference`) installed on one connection, for tests that ask it directly.
public struct ReferenceReadings {
    public let connection: Connection
    /// The schema the functions live in (`pg_temp` for Steward's own copy, `steward` for the opt-in migration's).
    public let schema: String

    /// Installs the definition in `pg_temp` of `connection`; with `schema`, uses the copy already installed there.
    public init(_ connection: Connection, schema: String? = nil) throws {
        self.connection = connection
        if let schema {
            self.schema = schema
        } else {
            try connection.execute(ObjectReference.functionsSQL(schema: "pg_temp"))
            self.schema = "pg_temp"
        }
    }

    var prefix: String { schema == "pg_temp" ? "pg_temp.steward_" : "\(schema)." }

    /// The rows `names(value, bucket)` returns, names as bytes, sorted.
    public func rows(_ value: String, bucket: String) throws -> [(name: [UInt8], loose: Bool)] {
        try connection.query("select name, loose from \(unescaped: prefix)reference_names($1, $2) order by name collate \"C\", loose", [value, bucket]).rows.map {
            (Array(try $0.decode(String.self, at: 0).utf8), try $0.decode(Bool.self, at: 1))
        }
    }

    /// Whether `value` may name `object` in `bucket`.
    public func mayName(_ value: String, bucket: String, object: String) throws -> Bool {
        try connection.query("select exists (select 1 from \(unescaped: prefix)reference_names($1, $2) r where \(unescaped: prefix)reference_matches(r.name, r.loose, $3))",
                             [value, bucket, object]).rows[0].decode(Bool.self, at: 0)
    }
}
