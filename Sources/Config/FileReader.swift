#if canImport(Glibc)
import Glibc
#endif

/// Reads whole small files (config, secrets); the error is the system's reason, for messages that name the file.
enum FileReader {
    /// The bytes of `path`, refusing a file larger than `limit` bytes.
    static func bytes(_ path: String, limit: Int) -> Result<[UInt8], FileReadError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return .failure(FileReadError(reason: String(cString: strerror(errno)))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(FileReadError(reason: String(cString: strerror(errno)))) }
        guard info.st_mode & S_IFMT == S_IFREG else { return .failure(FileReadError(reason: "not a regular file")) }
        return readAll(fd, limit: limit)
    }

    /// Everything left in `fd`, at most `limit` bytes (more is an error); retries EINTR.
    static func readAll(_ fd: Int32, limit: Int) -> Result<[UInt8], FileReadError> {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(FileReadError(reason: String(cString: strerror(errno))))
            }
            if n == 0 { break }
            bytes += buffer[..<n]
            if bytes.count > limit { return .failure(FileReadError(reason: "larger than \(limit) bytes")) }
        }
        return .success(bytes)
    }
}

/// Why a file could not be read (`No such file or directory`, …).
struct FileReadError: Error {
    let reason: String
}
