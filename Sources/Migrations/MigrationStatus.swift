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
    }

    public let items: [Item]
    /// Pending files in the order they would be applied.
    public let pending: [MigrationFile]
    /// Disagreements that stop `migrate` (changed, missing, out of order), one sentence each.
    public let problems: [String]
    /// Things worth a warning that do not stop anything (cosmetic changes).
    public let warnings: [String]

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
    public init(source: MigrationSource, history: [HistoryStore.Entry], allowOutOfOrder: Bool = false, allowMissing: Bool = false) {
        var items: [Item] = []
        var problems: [String] = []
        var warnings: [String] = []
        let newestApplied = history.last?.version
        for entry in history {
            guard let file = source.files.first(where: { MigrationSource.sameVersion($0.version, entry.version) }) else {
                items.append(Item(version: entry.version, name: entry.name, state: .missing, notes: ["no file in \(source.directory)"],
                                  appliedAt: entry.appliedAt, recordedChecksum: entry.checksum, fileChecksum: nil))
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
            items.append(Item(version: file.version, name: file.name, state: state, notes: notes, appliedAt: entry.appliedAt,
                              recordedChecksum: entry.checksum, fileChecksum: file.checksum))
        }
        var pending: [MigrationFile] = []
        var outOfOrder: [String] = []
        for file in source.files where !history.contains(where: { MigrationSource.sameVersion($0.version, file.version) }) {
            var notes: [String] = []
            if let newestApplied, MigrationSource.versionOrder(file.version, newestApplied) {
                notes.append("out of order: older than applied \(newestApplied)")
                outOfOrder.append(file.fileName)
            }
            pending.append(file)
            items.append(Item(version: file.version, name: file.name, state: .pending, notes: notes, appliedAt: nil,
                              recordedChecksum: nil, fileChecksum: file.checksum))
        }
        if !outOfOrder.isEmpty && !allowOutOfOrder {
            problems.append("pending files older than the newest applied migration (\(newestApplied ?? "")): \(outOfOrder.joined(separator: ", ")); apply them deliberately with --allow-out-of-order")
        }
        self.items = items.sorted { MigrationSource.versionOrder($0.version, $1.version) }
        self.pending = pending
        self.problems = problems
        self.warnings = warnings
    }
}
