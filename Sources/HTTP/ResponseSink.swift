import OutputText
/// Collects what libcurl hands over for one transfer, refusing (and so aborting the transfer) past the caps.
final class ResponseSink {
    var bytes: [UInt8] = []
    var headers: [(String, String)] = []
    let maxBodyBytes: Int
    let maxHeaderBytes: Int
    private var headerBytes = 0
    private(set) var bodyOverflow = false
    private(set) var headerOverflow = false

    init(maxBodyBytes: Int, maxHeaderBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
        self.maxHeaderBytes = maxHeaderBytes
    }

    /// Returning less than `count` makes libcurl stop the transfer with CURLE_WRITE_ERROR.
    func body(_ data: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
        guard count <= maxBodyBytes - bytes.count else { bodyOverflow = true; return 0 }
        data.withMemoryRebound(to: UInt8.self, capacity: count) { bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: count)) }
        return count
    }

    func header(_ data: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
        headerBytes += count
        guard headerBytes <= maxHeaderBytes else { headerOverflow = true; return 0 }
        let line = data.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
        accept(line)
        return count
    }

    /// One raw header line (status lines included) as libcurl delivers it.
    func accept(_ raw: [UInt8]) {
        let line = String(decoding: raw, as: UTF8.self)
        if line.hasPrefix("HTTP/") { headers = [] }   // a new response (after 100 Continue or a redirect)
        if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimming(in: " \t\r\n")
            headers.append((name, value))
        }
    }
}
