import Jobs
import Postgres

/// A column as `schema.table.column`.
public struct ColumnName: Sendable, Hashable, CustomStringConvertible {
    public let schema: String, table: String, column: String
    public init(schema: String, table: String, column: String) { (self.schema, self.table, self.column) = (schema, table, column) }
    public var description: String { "\(schema).\(table).\(column)" }
    var relation: String { "\(schema).\(table)" }
}

/// A column `ignore_columns` leaves out, with the reason the log repeats.
public struct IgnoredColumn: Sendable {
    public let column: ColumnName
    public let reason: String
}

/// A relation whose columns the mention rule reads, every column of it in one pass over its rows.
struct ReferenceTable: Sendable {
    let schema: String, table: String
    var columns: [String]
    /// Its rows have a `ctid` no other row it reads has (`ReferenceRelation.rowAddressed`).
    let rowAddressed: Bool
    /// Its rows carry `xmin` (`ReferenceRelation.carriesXmin`): a re-check reads only the rows written since.
    let carriesXmin: Bool
    /// Read without its inheritance children (`only`): found in the catalog, where each child is a table of its own.
    let only: Bool

    var name: String { "\(schema).\(table)" }
    /// A plain table: split in halves by page, re-read by transaction age.
    var plain: Bool { rowAddressed && carriesXmin }
    var columnNames: [ColumnName] { columns.map { ColumnName(schema: schema, table: table, column: $0) } }
}

/// Which columns a run reads, decided from the catalog at the moment it runs (`OrphanAvatarsJob.referenceColumns`).
///
/// By default (`reference_columns = auto`) every column that can hold a reference is read by the mention rule, which
/// decides (`every-column.sql`): no list of where an app keeps its references can leave one out. The quickstart's
/// `public.profiles.avatar_url`, when it is there, is also read exactly (the names each value names): that keeps the
/// objects profiles name out of the candidates cheaply and feeds the dangling-reference report. A configured list
/// narrows what is read; the columns it leaves out are then sampled (`sample_rows` each), and a run refuses when a
/// sample mentions a candidate. `ignore_columns` leaves a column out with a reason.
struct ReferenceColumns: Sendable {
    /// Read exactly too (`steward.orphan_refs`): the configured list, or the quickstart's column.
    var exact: [ColumnName] = []
    var exactRelations: [OrphanAvatarsJob.ReferenceRelation] = []
    /// Read by the mention rule, one entry a relation.
    var read: [ReferenceTable] = []
    /// The columns a configured list leaves out, to be sampled.
    var leftOut: [ReferenceTable] = []
    /// Columns that can hold a reference but this role cannot read whole.
    var unreadable: [ColumnName] = []
    /// Columns left out by `ignore_columns` (those the catalog has).
    var ignored: [IgnoredColumn] = []
    /// Whether `reference_columns` is `auto`.
    var auto = true

    /// The quickstart's reference column, read exactly when it is there.
    static let quickstart = ColumnName(schema: "public", table: "profiles", column: "avatar_url")

    var columnCount: Int { read.reduce(0) { $0 + $1.columns.count } }

    /// `columns` grouped by relation, in their order.
    static func grouped(_ columns: [(ColumnName, OrphanAvatarsJob.ReferenceRelation)], only: Bool) -> [ReferenceTable] {
        var tables: [ReferenceTable] = []
        for (column, relation) in columns {
            if let index = tables.firstIndex(where: { $0.schema == column.schema && $0.table == column.table }) {
                if !tables[index].columns.contains(column.column) { tables[index].columns.append(column.column) }
            } else {
                tables.append(ReferenceTable(schema: column.schema, table: column.table, columns: [column.column],
                                             rowAddressed: relation.rowAddressed, carriesXmin: relation.carriesXmin, only: only))
            }
        }
        return tables
    }
}

extension OrphanAvatarsJob {
    /// Every column of the catalog that can hold a reference (`every-column.sql`), with whether this role can read it.
    func everyColumn(_ c: Connection) throws -> [(column: ColumnName, readable: Bool, relation: ReferenceRelation)] {
        try c.query("\(unescaped: EmbeddedSQL.everyColumn)").rows.map { row in
            let materialised = try row.decode(Bool.self, at: 4)
            // A table is read `only`, without its children, so its rows have a ctid of their own; a materialised
            // view has no children and no xmin worth reading (a refresh rewrites it whole).
            return (ColumnName(schema: try row.decode(String.self, at: 0), table: try row.decode(String.self, at: 1), column: try row.decode(String.self, at: 2)),
                    try row.decode(Bool.self, at: 3), ReferenceRelation(rowAddressed: true, carriesXmin: !materialised))
        }
    }

    /// The phase that decides what the run reads: the catalog's columns now, narrowed by `reference_columns` and
    /// `ignore_columns` (`ReferenceColumns`).
    func referenceColumns(_ c: Connection) throws -> ReferenceColumns {
        var columns = ReferenceColumns()
        let catalog = try everyColumn(c)
        let ignoredNames = Set(settings.ignoreColumns.map(\.column))
        columns.ignored = settings.ignoreColumns.filter { ignored in catalog.contains { $0.column == ignored.column } }
        let kept = catalog.filter { !ignoredNames.contains($0.column) }
        columns.unreadable = kept.filter { !$0.readable }.map(\.column)
        let readable = kept.filter(\.readable)
        if let configured = settings.referenceColumns {
            columns.auto = false
            columns.exact = configured
            columns.exactRelations = try checkReferenceColumns(c, configured)
            columns.read = ReferenceColumns.grouped(Array(zip(configured, columns.exactRelations)), only: false)
            let listed = Set(configured)
            columns.leftOut = ReferenceColumns.grouped(readable.filter { !listed.contains($0.column) }.map { ($0.column, $0.relation) }, only: true)
            // A listed column this role cannot read is refused by the check above; one left out is not sampled.
            columns.unreadable.removeAll { listed.contains($0) }
        } else {
            columns.read = ReferenceColumns.grouped(readable.map { ($0.column, $0.relation) }, only: true)
            if readable.contains(where: { $0.column == ReferenceColumns.quickstart }) {
                columns.exact = [ReferenceColumns.quickstart]
                columns.exactRelations = try checkReferenceColumns(c, columns.exact)
            }
        }
        return columns
    }
}
