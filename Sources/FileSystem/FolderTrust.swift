#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials

/// Whether a folder's entries can be replaced by anyone Steward does not trust: every folder from `/` down
/// must belong to a trusted user, and be writable only by its owner unless its sticky bit is set.
public enum FolderTrust {
    /// Root and this process's user.
    public static var ownUsers: Set<UInt32> { [0, geteuid()] }

    /// Throws, naming the first folder on the way to `folder` (itself included) that someone outside `owners`
    /// could change: owned by another user, or writable by group or others without the sticky bit.
    /// Symbolic links on the way must belong to `owners` too; the folders they lead to are checked as well.
    public static func check(folder: String, owners: Set<UInt32> = ownUsers) throws(FileSystemError) {
        let absolute = absolutePath(folder)
        for prefix in prefixes(of: absolute) {
            guard let status = try FileStatus.of(prefix) else {
                throw FileSystemError(path: prefix, message: "no such folder")
            }
            if status.kind == .symbolicLink && !owners.contains(status.owner) {
                throw FileSystemError(path: prefix, message: "is a symbolic link owned by uid \(status.owner): a link someone else made may lead anywhere")
            }
        }
        guard let resolved = realpath(absolute, nil) else {
            throw FileSystemError(path: folder, message: "cannot resolve: \(String(cString: strerror(errno)))")
        }
        let real = String(cString: resolved)
        free(resolved)
        for prefix in prefixes(of: real) {
            guard let status = try FileStatus.of(prefix) else { throw FileSystemError(path: prefix, message: "no such folder") }
            guard status.kind == .folder else { throw FileSystemError(path: prefix, message: "is not a folder") }
            try check(status, path: prefix, owners: owners)
        }
    }

    /// Throws when one folder's status lets someone outside `owners` replace its entries.
    public static func check(_ status: FileStatus, path: String, owners: Set<UInt32> = ownUsers) throws(FileSystemError) {
        guard owners.contains(status.owner) else {
            throw FileSystemError(path: path, message: "the folder belongs to uid \(status.owner); only root or uid \(geteuid()) (this process) may own a folder Steward uses")
        }
        if status.sharedWritable && !status.sticky {
            throw FileSystemError(path: path, message: "the folder is writable by group or others (mode \(status.octalMode)) without the sticky bit: anyone who can write there could replace what Steward puts in it")
        }
    }

    /// `path` made absolute against the working folder, without `.` segments or repeated slashes.
    static func absolutePath(_ path: String) -> String {
        var full = path
        if !path.hasPrefix("/") { full = FileManager.default.currentDirectoryPath + "/" + path }
        let parts = full.split(separator: "/").filter { $0 != "." }
        return "/" + parts.joined(separator: "/")
    }

    /// `/`, `/a`, `/a/b` for `/a/b`.
    static func prefixes(of absolute: String) -> [String] {
        var result = ["/"]
        var current = ""
        for part in absolute.split(separator: "/") {
            current += "/" + part
            result.append(current)
        }
        return result
    }

    /// The folder holding `path` and the last segment: `("/a", "b")` for `/a/b`, `(".", "b")` for `b`.
    public static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = String(path[..<slash])
        return (folder.isEmpty ? "/" : folder, String(path[path.index(after: slash)...]))
    }
}
