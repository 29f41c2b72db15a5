#if canImport(Glibc)
import Glibc
#endif

/// Writes command results to standard output and errors to standard error, unbuffered and whole.
enum Output {
    static func print(_ text: String) { write(text.hasSuffix("\n") ? text : text + "\n", to: 1) }

    static func error(_ text: String) { write("steward: " + text + "\n", to: 2) }

    private static func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { if errno == EINTR { continue }; return }
            offset += n
        }
    }
}
