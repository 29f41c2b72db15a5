#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials

/// Replaces a file whole or not at all, never through a link and never someone else's file: the contents go to a
/// new temporary file (`O_CREAT|O_EXCL|O_NOFOLLOW`, mode 600) in the target's folder, are synced, get their
/// final mode and are renamed over the target; then the folder is synced.
public enum AtomicFile {
    /// Writes `contents` to `path` with permission bits `mode`. Refuses a target that is a symbolic link, not a
    /// regular file, or owned by another user, and a folder someone else could change (see `FolderTrust`).
    /// Temporary files a crashed write left behind (only ever readable by their owner) are removed first.
    public static func write(_ contents: [UInt8], to path: String, mode: UInt32) throws(FileSystemError) {
        let (folder, name) = FolderTrust.split(path)
        guard !name.isEmpty, name != ".", name != ".." else { throw FileSystemError(path: path, message: "names a folder, not a file") }
        try FolderTrust.check(folder: folder)
        let folderFD = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folderFD >= 0 else { throw failure(folder, "cannot open the folder") }
        defer { close(folderFD) }
        var folderInfo = stat()
        guard fstat(folderFD, &folderInfo) == 0 else { throw failure(folder, "cannot stat the folder") }
        try FolderTrust.check(FileStatus(folderInfo), path: folder)

        if let existing = try status(folderFD, name, path: path) {
            switch existing.kind {
            case .regular: break
            case .symbolicLink:
                throw FileSystemError(path: path, message: "is a symbolic link; Steward never writes through a link: remove it, or name the file it leads to")
            default:
                throw FileSystemError(path: path, message: "exists and is not a regular file")
            }
            guard existing.owner == geteuid() else {
                throw FileSystemError(path: path, message: "belongs to uid \(existing.owner), not to this process's user (uid \(geteuid())): refusing to replace another user's file")
            }
        }
        removeLeftovers(folderFD, name: name)

        let temporary = temporaryPrefix(name) + "\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let fd = openat(folderFD, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure(path, "cannot create a temporary file in \(folder)") }
        var committed = false
        defer { if !committed { unlinkat(folderFD, temporary, 0) } }
        do {
            defer { close(fd) }
            var offset = 0
            while offset < contents.count {
                let n = contents.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw failure(path, "cannot write")
                }
                offset += n
            }
            guard fsync(fd) == 0 else { throw failure(path, "cannot sync") }
            guard fchmod(fd, mode_t(mode & 0o777)) == 0 else { throw failure(path, "cannot set the mode") }
        }
        guard renameat(folderFD, temporary, folderFD, name) == 0 else { throw failure(path, "cannot rename the temporary file over it") }
        committed = true
        guard fsync(folderFD) == 0 else { throw failure(folder, "cannot sync the folder") }
    }

    /// `write` for text.
    public static func write(_ text: String, to path: String, mode: UInt32) throws(FileSystemError) {
        try write(Array(text.utf8), to: path, mode: mode)
    }

    /// Temporary files for `name` start with this; a crashed write may leave one (mode 600).
    public static func temporaryPrefix(_ name: String) -> String { ".\(name).tmp-" }

    private static func status(_ folderFD: Int32, _ name: String, path: String) throws(FileSystemError) -> FileStatus? {
        var info = stat()
        if fstatat(folderFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 { return FileStatus(info) }
        if errno == ENOENT { return nil }
        throw failure(path, "cannot stat")
    }

    /// Removes this user's regular files left by an interrupted write of `name`.
    private static func removeLeftovers(_ folderFD: Int32, name: String) {
        let prefix = temporaryPrefix(name)
        let copy = dup(folderFD)
        guard copy >= 0, let directory = fdopendir(copy) else { if copy >= 0 { close(copy) }; return }
        defer { closedir(directory) }
        var leftovers: [String] = []
        while let entry = readdir(directory) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if entryName.hasPrefix(prefix) { leftovers.append(entryName) }
        }
        for leftover in leftovers {
            var info = stat()
            guard fstatat(folderFD, leftover, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            let status = FileStatus(info)
            if status.kind == .regular && status.owner == geteuid() { unlinkat(folderFD, leftover, 0) }
        }
    }

    private static func failure(_ path: String, _ what: String) -> FileSystemError {
        FileSystemError(path: path, message: "\(what): \(String(cString: strerror(errno)))")
    }
}
