#if canImport(Glibc)
import Glibc
#endif

/// What `lstat`/`fstat` says about one path: its type, owner and permission bits.
public struct FileStatus: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case regular, folder, symbolicLink, socket, other }

    public let kind: Kind
    public let owner: UInt32
    public let mode: UInt32
    public let device: UInt64
    public let inode: UInt64

    init(_ info: stat) {
        switch info.st_mode & 0o170000 {
        case 0o100000: kind = .regular
        case 0o040000: kind = .folder
        case 0o120000: kind = .symbolicLink
        case 0o140000: kind = .socket
        default: kind = .other
        }
        owner = info.st_uid
        mode = UInt32(info.st_mode & 0o7777)
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// The path itself, never what a link points to (unless `followingLinks`); nil when nothing is there; throws on
    /// any other failure.
    public static func of(_ path: String, followingLinks: Bool = false) throws(FileSystemError) -> FileStatus? {
        var info = stat()
        if (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 { return FileStatus(info) }
        if errno == ENOENT { return nil }
        throw FileSystemError(path: path, message: "cannot stat: \(String(cString: strerror(errno)))")
    }

    /// The kind in words, for messages: "a regular file", "a symbolic link", …
    public var kindDescription: String {
        switch kind {
        case .regular: "a regular file"
        case .folder: "a folder"
        case .symbolicLink: "a symbolic link"
        case .socket: "a socket"
        case .other: "a device or pipe"
        }
    }

    /// Writable by group or others.
    public var sharedWritable: Bool { mode & 0o022 != 0 }
    /// The sticky bit: in such a folder only an entry's owner (or the folder's, or root) may remove or rename it.
    public var sticky: Bool { mode & 0o1000 != 0 }

    /// The permission bits as `0644`.
    public var octalMode: String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
