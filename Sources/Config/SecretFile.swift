#if canImport(Glibc)
import Glibc
#endif
import OutputText
import StewardLog

/// Reads secret files (passwords, service keys, tokens, `.p8` keys, client secrets) the way ssh and `.pgpass` would
/// have them: a regular file (no symlink, FIFO or device) owned by this user or root, unreadable by group and others,
/// at most `maximumBytes`, UTF-8 without NUL or control bytes. Messages never quote the content; every secret read is
/// registered with `SecretRedactor`.
public enum SecretFile {
    /// The largest secret file read (64 KiB).
    public static let maximumBytes = 64 * 1024

    /// Where `given` points: itself, or `$CREDENTIALS_DIRECTORY/NAME` for `credential:NAME` (a bare name only).
    public static func resolve(_ given: String, what: String, environment: [String: String]? = nil) throws(ConfigError) -> String {
        guard given.hasPrefix("credential:") else {
            guard !given.isEmpty else { throw ConfigError(file: "(empty path)", message: "the \(what) path is empty") }
            return given
        }
        let name = String(given.dropFirst("credential:".count))
        guard !name.isEmpty, name != ".", name != "..", !name.utf8.contains(UInt8(ascii: "/")), !name.utf8.contains(0) else {
            throw ConfigError(file: given, message: "the \(what) names a systemd credential, but \"\(name)\" is not a plain credential name (no /, not . or ..)")
        }
        let directory = environment?["CREDENTIALS_DIRECTORY"] ?? getenv("CREDENTIALS_DIRECTORY").map { String(cString: $0) }
        guard let directory, !directory.isEmpty else {
            throw ConfigError(file: given, message: "the \(what) names a systemd credential, but CREDENTIALS_DIRECTORY is not set (add LoadCredential= to the unit)")
        }
        return directory + "/" + name
    }

    /// The secret in `given` (trailing newlines removed); throws naming the file and the rule it breaks.
    public static func read(_ given: String, what: String) throws(ConfigError) -> String {
        let path = try resolve(given, what: what)
        func fail(_ message: String) -> ConfigError { ConfigError(file: path, message: message) }
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP { throw fail("the \(what) is a symbolic link; point to the file itself") }
            throw fail("cannot read the \(what): \(String(cString: strerror(code)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw fail("cannot read the \(what): \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw fail("the \(what) is not a regular file") }
        let uid = geteuid()
        guard info.st_uid == uid || info.st_uid == 0 else {
            throw fail("the \(what) belongs to uid \(info.st_uid), not to this user (uid \(uid)) or root; chown it")
        }
        if info.st_mode & 0o077 != 0 {
            throw fail("the \(what) is readable by group or others (mode \(String(info.st_mode & 0o777, radix: 8))); run chmod 600 on it")
        }
        guard info.st_size <= maximumBytes else { throw fail("the \(what) is larger than \(maximumBytes) bytes") }
        let bytes: [UInt8]
        switch FileReader.readAll(fd, limit: maximumBytes) {
        case .success(let read): bytes = read
        case .failure(let error): throw fail("cannot read the \(what): \(error.reason)")
        }
        return try secret(from: bytes, path: path, what: what)
    }

    /// Checks and decodes the bytes of a secret file (no NUL, no control bytes but line ends and tabs, valid UTF-8).
    public static func secret(from bytes: [UInt8], path: String, what: String) throws(ConfigError) -> String {
        func fail(_ message: String) -> ConfigError { ConfigError(file: path, message: message) }
        if let index = bytes.firstIndex(where: { $0 == 0 || ($0 < 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09) || $0 == 0x7F }) {
            throw fail("the \(what) holds a \(bytes[index] == 0 ? "NUL" : "control") byte at offset \(index); it must be text")
        }
        guard var secret = String(validating: bytes, as: UTF8.self) else { throw fail("the \(what) is not valid UTF-8") }
        while secret.last == "\n" || secret.last == "\r" || secret.last == "\r\n" { secret.removeLast() }
        guard !secret.isEmpty else { throw fail("the \(what) is empty") }
        SecretRedactor.register(secret)
        let trimmed = secret.trimmingASCIIWhitespace()
        if trimmed != secret, !trimmed.isEmpty { SecretRedactor.register(trimmed) }
        return secret
    }
}

extension String {
    func trimmingASCIIWhitespace() -> String { trimming(in: " \t\n\r\r\n") }
}
