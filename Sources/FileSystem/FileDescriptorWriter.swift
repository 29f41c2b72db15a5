#if canImport(Glibc)
import Glibc
#endif

/// Writes text to a file descriptor whole, retrying short writes and EINTR, without stdio buffering.
public enum FileDescriptorWriter {
    /// Writes all of `text` to `fd`; gives up silently if the descriptor is closed or broken.
    public static func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { if errno == EINTR { continue }; return }
            offset += n
        }
    }
}
