#if canImport(Glibc)
import Glibc
#endif

/// Reads whole small files (config, secrets); the error is the system's reason, for messages that name the file.
enum FileReader {
    static func bytes(_ path: String) -> Result<[UInt8], FileReadError> {
        guard let file = fopen(path, "r") else { return .failure(FileReadError(reason: String(cString: strerror(errno)))) }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            bytes += buffer[..<n]
            if n < buffer.count { break }
        }
        return .success(bytes)
    }
}

/// Why a file could not be read (`No such file or directory`, …).
struct FileReadError: Error {
    let reason: String
}
