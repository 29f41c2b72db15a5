/// One HTTP request: method, absolute URL, headers, optional body, and how much of an answer it accepts.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: [UInt8]?
    /// Replaces the client's total timeout for this request (a caller holding a lock wants a short one).
    public var timeoutSeconds: Double?
    /// The largest answer body accepted: past it the transfer is aborted and the request fails, naming the peer.
    public var maxResponseBytes: Int
    /// The URL carries a secret (a webhook's path): it is never shown, and echoes of it are removed from answers.
    public var urlIsSecret: Bool
    /// Other secrets the request carries in its body (a token, a client secret), removed from anything quoted.
    public var secrets: [String]

    /// One MiB: more than any JSON answer Steward reads except a delete batch's.
    public static let defaultMaxResponseBytes = 1 << 20

    public init(method: String, url: String, headers: [(String, String)] = [], body: [UInt8]? = nil, timeoutSeconds: Double? = nil,
                maxResponseBytes: Int = defaultMaxResponseBytes, urlIsSecret: Bool = false, secrets: [String] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeoutSeconds = timeoutSeconds
        self.maxResponseBytes = maxResponseBytes
        self.urlIsSecret = urlIsSecret
        self.secrets = secrets
    }

    /// The request as a log line shows it: method and URL (only scheme and host for a secret URL), never a header.
    public var summary: String { "\(method) \(urlIsSecret ? Self.origin(of: url) + "/…" : url)" }

    /// `scheme://host[:port]` of `url`: the peer as an error names it.
    public var peer: String { Self.origin(of: url) }

    static func origin(of url: String) -> String {
        let bytes = Array(url.utf8)
        var start = 0
        while start + 2 < bytes.count, !(bytes[start] == 0x3A && bytes[start + 1] == 0x2F && bytes[start + 2] == 0x2F) { start += 1 }
        guard start + 2 < bytes.count else { return "(invalid URL)" }
        let hostStart = start + 3
        var end = hostStart
        while end < bytes.count, bytes[end] != 0x2F, bytes[end] != 0x3F, bytes[end] != 0x23 { end += 1 }
        var authorityStart = hostStart
        // Never userinfo: what follows the last @ of the authority.
        for index in hostStart..<end where bytes[index] == 0x40 { authorityStart = index + 1 }
        return String(decoding: bytes[..<hostStart], as: UTF8.self) + String(decoding: bytes[authorityStart..<end], as: UTF8.self)
    }

    /// Everything secret in the request: the key headers, the secret URL, the extra secrets.
    public var redactor: PeerTextRedactor {
        var extra = secrets
        if urlIsSecret {
            extra.append(url)
            let origin = Self.origin(of: url)
            if url.count > origin.count { extra.append(String(url.dropFirst(origin.count))) }
        }
        return PeerTextRedactor(secrets: PeerTextRedactor.secrets(in: headers, extra: extra))
    }
}

/// One response; its text reaches logs only through `quotedBody`/`quotedHeader` (secrets removed, cut, escaped).
public struct HTTPResponse: Sendable {
    public let status: Int
    /// Header names lowercased.
    public let headers: [(String, String)]
    public let body: [UInt8]
    /// The secrets of the request this answers.
    public let redactor: PeerTextRedactor

    public init(status: Int, headers: [(String, String)], body: [UInt8], redactor: PeerTextRedactor = .none) {
        self.status = status
        self.headers = headers
        self.body = body
        self.redactor = redactor
    }

    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.last { $0.0 == lower }?.1
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as an error may quote it: secrets removed, at most `limit` characters, control characters escaped.
    public func quotedBody(limit: Int = PeerTextRedactor.quoteLimit) -> String { redactor.quote(body, limit: limit) }

    /// A header value as a log line may show it (secrets removed, cut, escaped); nil when absent.
    public func quotedHeader(_ name: String, limit: Int = 80) -> String? { header(name).map { redactor.quote($0, limit: limit) } }
}
