/// How the files on disk relate to the history in the database, file by file.
public struct MigrationStatus: Sendable {
    /// The state of one migration.
    public enum State: String, Sendable {
        /// Recorded and the file is unchanged (or changed only in whitespace and comments).
        case applied
        /// On disk, not recorded yet.
        case pending
        /// Recorded, but the file's statements changed since.
        case changed
        /// Recorded, but no file has that version any more.
        case missing
    }

    /// One line of the status table.
    public struct Item: Sendable {
        public let version: String
        public let name: String
        public let state: State
        /// Extra facts: `out of order`, `whitespace or comments changed`, `adopted`, `renamed from …`.
        public let notes: [String]
        public let appliedAt: String?
        public let recordedChecksum: String?
        public let fileChecksum: String?
        /// `recorded` or `absent` in `steward.schema_migrations`.
        public var stewardHistory = "absent"
        /// In `supabase_migrations.schema_migrations`: `recorded`, `absent`, `differs` (other statements than the
        /// file's), `empty` (no statements stored) or `off` (Steward does not keep that history here).
        public var supabaseHistory = "off"
    }

    public let items: [Item]
    /// Pending files in the order they would be applied.
    public let pending: [MigrationFile]
    /// Disagreements that stop `migrate` (changed, missing, out of order), one sentence each.
    public let problems: [String]
    /// Things worth a warning that do not stop anything (cosmetic changes).
    public let warnings: [String]
    /// Files the Supabase CLI applied that Steward has not recorded, with the same statements: recorded, never re-run.
    public private(set) var takeover: [MigrationFile] = []
    /// Files Steward applied that the Supabase CLI's history lacks: their CLI rows are written on the next migrate.
    public private(set) var cliBackfill: [MigrationFile] = []
    /// Where the two histories disagree in ways the CLI cannot see (for `status` and `verify`), one sentence each.
    public private(set) var historyDrift: [String] = []

    /// True when the recorded normalised checksum matches the file's: `2:` rows against the server's tokens, bare
    /// (version 1) rows against the old reading, and only when that reading agrees with the server's for this file.
    static func differsOnlyInLayout(_ entry: HistoryStore.Entry, _ file: MigrationFile) -> Bool {
        if entry.normalizedChecksum.contains(":") {
            return entry.normalizedChecksum == HistoryStore.recordedNormalizedChecksum(file)
        }
        guard let legacy = file.legacyNormalizedChecksum() else { return false }
        return entry.normalizedChecksum == legacy
    }

    /// Compares `source` with `history`; out-of-order and missing files are problems unless allowed.
    /// With `cli` (the Supabase CLI's rows, when Steward keeps that history) pending files the CLI applied are taken
    /// over when their statements match and are problems when they differ; its rows without a file are missing.
    public init(source: MigrationSource, history: [HistoryStore.Entry], allowOutOfOrder: Bool = false, allowMissing: Bool = false,
                cli: [SupabaseCLIHistory.Row]? = nil) {
        var items: [Item] = []
        var problems: [String] = []
        var warnings: [String] = []
        var takeover: [MigrationFile] = []
        var cliBackfill: [MigrationFile] = []
        var historyDrift: [String] = []
        func cliRow(_ version: String) -> SupabaseCLIHistory.Row? {
            cli?.first { MigrationSource.sameVersion($0.version, version) }
        }
        var newestApplied = history.last?.version
        for row in cli ?? [] where newestApplied.map({ MigrationSource.versionOrder($0, row.version) }) ?? true {
            newestApplied = row.version
        }
        for entry in history {
            guard let file = source.files.first(where: { MigrationSource.sameVersion($0.version, entry.version) }) else {
                var item = Item(version: entry.version, name: entry.name, state: .missing, notes: ["no file in \(source.directory)"],
                                appliedAt: entry.appliedAt, recordedChecksum: entry.checksum, fileChecksum: nil)
                item.stewardHistory = "recorded"
                if cli != nil { item.supabaseHistory = cliRow(entry.version) == nil ? "absent" : "recorded" }
                items.append(item)
                if !allowMissing {
                    problems.append("\(entry.version)_\(entry.name).sql was applied on \(entry.appliedAt) but is missing from \(source.directory) (use --allow-missing if that is intended)")
                }
                continue
            }
            var notes: [String] = []
            if entry.method == "adopt" { notes.append("adopted") }
            if entry.name != file.name { notes.append("recorded as \(entry.version)_\(entry.name).sql") }
            var state = MigrationStatus.State.applied
            if entry.checksum != file.checksum {
                if Self.differsOnlyInLayout(entry, file) {
                    notes.append("whitespace or comments changed since applied")
                    warnings.append("\(file.fileName) changed in whitespace or comments only since it was applied; accepted")
                } else {
                    state = .changed
                    problems.append("\(file.fileName) was changed after it was applied on \(entry.appliedAt): recorded checksum \(entry.checksum.prefix(12)), file now \(file.checksum.prefix(12)); put the change in a new migration file instead")
                    if !entry.normalizedChecksum.contains(":"), file.legacyNormalizedChecksum() == nil {
                        notes.append("the earlier Steward that recorded it read this file differently from the server")
                    }
                }
            }
            var item = Item(version: file.version, name: file.name, state: state, notes: notes, appliedAt: entry.appliedAt,
                            recordedChecksum: entry.checksum, fileChecksum: file.checksum)
            item.stewardHistory = "recorded"
            if cli != nil {
                if let row = cliRow(entry.version) {
                    switch SupabaseCLIHistory.compare(row, with: file) {
                    case .equal: item.supabaseHistory = "recorded"
                    case .empty:
                        item.supabaseHistory = "empty"
                        historyDrift.append("\(file.fileName): the Supabase CLI's row has no statements (written by `supabase migration repair` on an old CLI)")
                    case .different(let what):
                        item.supabaseHistory = "differs"
                        historyDrift.append("\(file.fileName): the Supabase CLI's row holds other statements than the file (\(what))")
                    }
                } else {
                    item.supabaseHistory = "absent"
                    historyDrift.append("\(file.fileName) is in Steward's history but not in the Supabase CLI's: `supabase db push` would apply it again; `steward migrate` records it there")
                    if state == .applied { cliBackfill.append(file) }
                }
            }
            items.append(item)
        }
        // The CLI's rows that neither a file nor Steward's history has: reported like any missing file.
        for row in cli ?? [] where !history.contains(where: { MigrationSource.sameVersion($0.version, row.version) })
            && !source.files.contains(where: { MigrationSource.sameVersion($0.version, row.version) }) {
            var item = Item(version: row.version, name: row.name, state: .missing,
                            notes: ["applied by supabase db push", "no file in \(source.directory)"],
                            appliedAt: nil, recordedChecksum: nil, fileChecksum: nil)
            item.supabaseHistory = (row.statements ?? []).isEmpty ? "empty" : "recorded"
            items.append(item)
            historyDrift.append("\(row.version)_\(row.name).sql is in the Supabase CLI's history but not in Steward's, and has no file")
            if !allowMissing {
                problems.append("\(row.version)_\(row.name).sql was applied by `supabase db push` but is missing from \(source.directory) (use --allow-missing if that is intended)")
            }
        }
        var pending: [MigrationFile] = []
        var outOfOrder: [String] = []
        for file in source.files where !history.contains(where: { MigrationSource.sameVersion($0.version, file.version) }) {
            if cli != nil, let row = cliRow(file.version) {
                var notes = ["applied by supabase db push"]
                var item: Item
                switch SupabaseCLIHistory.compare(row, with: file) {
                case .equal:
                    notes.append("taken over on migrate")
                    takeover.append(file)
                    item = Item(version: file.version, name: file.name, state: .pending, notes: notes, appliedAt: nil,
                                recordedChecksum: nil, fileChecksum: file.checksum)
                    item.supabaseHistory = "recorded"
                case .empty:
                    item = Item(version: file.version, name: file.name, state: .changed, notes: notes, appliedAt: nil,
                                recordedChecksum: nil, fileChecksum: file.checksum)
                    item.supabaseHistory = "empty"
                    problems.append("\(file.fileName) was applied by `supabase db push` but its row in supabase_migrations.schema_migrations has no statements (an old `supabase migration repair`), so Steward cannot tell whether the file changed since; store them with `supabase migration repair --status applied \(file.version)` (a current CLI) and run again")
                    historyDrift.append("\(file.fileName): the Supabase CLI's row has no statements (written by `supabase migration repair` on an old CLI)")
                case .different(let what):
                    item = Item(version: file.version, name: file.name, state: .changed, notes: notes, appliedAt: nil,
                                recordedChecksum: nil, fileChecksum: file.checksum)
                    item.supabaseHistory = "differs"
                    problems.append("\(file.fileName) changed since `supabase db push` applied it (\(what)); put the change in a new migration file instead")
                    historyDrift.append("\(file.fileName): the Supabase CLI's row holds other statements than the file (\(what))")
                }
                items.append(item)
                continue
            }
            var notes: [String] = []
            if let newestApplied, MigrationSource.versionOrder(file.version, newestApplied) {
                notes.append("out of order: older than applied \(newestApplied)")
                outOfOrder.append(file.fileName)
            }
            pending.append(file)
            var item = Item(version: file.version, name: file.name, state: .pending, notes: notes, appliedAt: nil,
                            recordedChecksum: nil, fileChecksum: file.checksum)
            if cli != nil { item.supabaseHistory = "absent" }
            items.append(item)
        }
        if !outOfOrder.isEmpty && !allowOutOfOrder {
            problems.append("pending files older than the newest applied migration (\(newestApplied ?? "")): \(outOfOrder.joined(separator: ", ")); apply them deliberately with --allow-out-of-order")
        }
        self.items = items.sorted { MigrationSource.versionOrder($0.version, $1.version) }
        self.pending = pending
        self.problems = problems
        self.warnings = warnings
        self.takeover = takeover
        self.cliBackfill = cliBackfill
        self.historyDrift = historyDrift
    }
}
