/// Steward's own tables in the `steward` schema, as the `.sql` files of their owners (listed in `versions.txt`),
/// embedded at build time: each version is one script, applied once, in order, in its own transaction.
public enum StewardSchema {
    /// One embedded `.sql` file: the version it belongs to and its path under `Sources/`.
    public struct File: Sendable {
        public let version: Int
        public let file: String
        public let sql: String
    }

    /// Every file, in the order of `versions.txt`.
    public static var files: [File] { embedded }

    /// The script of each version, in order (version 1 first): its files joined in `versions.txt` order.
    public static let versions: [String] = {
        var scripts: [String] = []
        for file in embedded {
            if file.version > scripts.count { scripts.append(file.sql) } else { scripts[scripts.count - 1] += "\n" + file.sql }
        }
        return scripts
    }()
}
