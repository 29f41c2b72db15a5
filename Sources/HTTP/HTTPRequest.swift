/// One HTTP request: method, absolute URL, headers, optional body.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: [UInt8]?
    /// Replaces the client's total timeout for this request (a caller holding a lock wants a short one).
    public var timeoutSeconds: Double?

    public init(method: String, url: String, headers: [(String, String)] = [], body: [UInt8]? = nil, timeoutSeconds: Double? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeoutSeconds = timeoutSeconds
    }

    /// The request as a log line shows it: method and URL, never a header (keys live there).
    public var summary: String { "\(method) \(url)" }
}

/// One HTTP response.
public struct HTTPResponse: Sendable {
    public let status: Int
    /// Header names lowercased.
    public let headers: [(String, String)]
    public let body: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.last { $0.0 == lower }?.1
    }

    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// A transfer that did not produce a response: no connection, a timeout, a broken connection.
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    public let request: String
    public let message: String
    /// libcurl's code (7 could not connect, 28 timed out, 52 empty reply, 56 receive failure, …).
    public let curlCode: Int

    public var description: String { "\(request): \(message) (curl \(curlCode))" }
}
