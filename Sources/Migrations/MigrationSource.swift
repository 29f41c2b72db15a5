#if canImport(Glibc)
import Glibc
#endif

/// The migration files of one folder, parsed and in version order.
public struct MigrationSource: Sendable {
    /// The folder they came from.
    public let directory: String
    /// The files, ordered by numeric version.
    public private(set) var files: [MigrationFile]
    /// True when the main folder is a Supabase CLI project's (`supabase/migrations` beside `supabase/config.toml`).
    public internal(set) var cliLayout = false

    /// Reads every `*.sql` file of `directory` and of each `include` folder (opt-in migrations), as one ordered set;
    /// throws on an unreadable folder, a bad file (the first in version order) or a repeated version. With `deferParsing` a file is only named,
    /// decoded and checksummed here; `parsed(skippingApplied:)` parses the files a run needs.
    public init(directory: String, include: [String] = [], deferParsing: Bool = false) throws(MigrationError) {
        var files: [MigrationFile] = []
        for folder in [directory] + include {
            guard let dir = opendir(folder) else {
                throw .source("cannot read the migrations folder \(folder): \(String(cString: strerror(errno)))")
            }
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                if name.hasSuffix(".sql") { names.append(name) }
            }
            closedir(dir)
            for name in names {
                let bytes = try Self.read(folder + "/" + name, name: name)
                files.append(try MigrationFile(unparsedFileName: name, bytes: bytes))
            }
        }
        try self.init(directory: ([directory] + include).joined(separator: " + "), files: files)
        cliLayout = SupabaseHistoryMode.isCLILayout(directory)
        // Parsed in version order, so the error a run reports does not depend on the order the folder lists files in.
        if !deferParsing { self = try parsed() }
    }

    /// Files given directly (embedded or generated); same ordering and duplicate checks.
    public init(directory: String, files: [MigrationFile]) throws(MigrationError) {
        let sorted = files.sorted { Self.versionOrder($0.version, $1.version) }
        for (a, b) in zip(sorted, sorted.dropFirst()) where Self.sameVersion(a.version, b.version) {
            throw .invalidFile(b.fileName, line: nil, "version \(b.version) is used twice (also by \(a.fileName))")
        }
        self.directory = directory
        self.files = sorted
    }

    /// How many files are not parsed yet.
    public var unparsedCount: Int { files.count(where: { !$0.isParsed }) }

    /// These files with every one parsed except those `applied` records with the same version and checksum (the
    /// same bytes were parsed when they were applied); throws the first file's parse error, in version order.
    public func parsed(skippingApplied applied: [HistoryStore.Entry] = []) throws(MigrationError) -> MigrationSource {
        var copy = self
        for (index, file) in files.enumerated() where !file.isParsed {
            if applied.contains(where: { Self.sameVersion($0.version, file.version) && $0.checksum == file.checksum }) { continue }
            copy.files[index] = try file.parsed()
        }
        return copy
    }

    /// These files with every one parsed that can be, and why each of the others cannot (a file that controls its own
    /// transaction, say): for `status` and `verify`, which show the state of a folder `migrate` would refuse to apply.
    public func parsedWhereValid() -> (source: MigrationSource, invalid: [String]) {
        var copy = self
        var invalid: [String] = []
        for (index, file) in files.enumerated() where !file.isParsed {
            do throws(MigrationError) {
                copy.files[index] = try file.parsed()
            } catch {
                invalid.append("\(error)")
            }
        }
        return (copy, invalid)
    }

    /// True when version `a` sorts before `b` (numerically, so 10 comes after 9).
    static func versionOrder(_ a: String, _ b: String) -> Bool {
        let (x, y) = (trimZeros(a), trimZeros(b))
        return x.count != y.count ? x.count < y.count : x < y
    }

    static func sameVersion(_ a: String, _ b: String) -> Bool { trimZeros(a) == trimZeros(b) }

    private static func trimZeros(_ v: String) -> String {
        let t = v.drop(while: { $0 == "0" })
        return t.isEmpty ? "0" : String(t)
    }

    private static func read(_ path: String, name: String) throws(MigrationError) -> [UInt8] {
        guard let file = fopen(path, "rb") else {
            throw .invalidFile(name, line: nil, "cannot read: \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n > 0 { bytes.append(contentsOf: buffer[..<n]) }
            if n < buffer.count { break }
        }
        return bytes
    }
}
