import Postgres

/// The shadow databases a run of `steward` created (it logs each one's name) that still exist afterwards.
public enum ShadowDatabases {
    public static func left(by run: StewardProcess.Result, _ db: TestDatabase) throws -> [String] {
        let names = run.stderr.split(separator: "\n").compactMap { line -> String? in
            guard line.contains("shadow database created"), let start = line.range(of: "database=") else { return nil }
            return String(line[start.upperBound...].prefix { $0 != " " })
        }
        guard !names.isEmpty else { return ["(no shadow database was logged)"] }
        return try db.connect().query("select datname from pg_database where datname = any($1)", [names]).rows.map { try $0.decode(String.self, at: 0) }
    }
}
