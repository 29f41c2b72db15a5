#if canImport(Glibc)
import Glibc
#endif

/// The migration files of one folder, parsed and in version order.
public struct MigrationSource: Sendable {
    /// The folder they came from.
    public let directory: String
    /// The files, ordered by numeric version.
    public let files: [MigrationFile]
    /// True when the main folder is a Supabase CLI project's (`supabase/migrations` beside `supabase/config.toml`).
    public internal(set) var cliLayout = false

    /// Reads every `*.sql` file of `directory` and of each `include` folder (opt-in migrations), as one ordered set;
    /// throws on an unreadable folder, a bad file or a repeated version.
    public init(directory: String, include: [String] = []) throws(MigrationError) {
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
                files.append(try MigrationFile(fileName: name, bytes: try Self.read(folder + "/" + name, name: name)))
            }
        }
        try self.init(directory: ([directory] + include).joined(separator: " + "), files: files)
        cliLayout = SupabaseHistoryMode.isCLILayout(directory)
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
