import FoundationEssentials
import HTTP
import StewardJSON

/// The part of Supabase's Management API that holds the Apple provider's settings:
/// `GET`/`PATCH /v1/projects/{ref}/config/auth` with a personal access token (`sbp_…`). Answers are read under a
/// size cap and quoted in errors only through the request's redactor (the token and the pushed secret removed).
/// Not for concurrent use (one libcurl handle): share it only through a `ManagementSession`.
public final class ManagementAPI {
    /// The Apple fields as `GET` returns them; `secretHash` is `hex(HMAC-SHA256(ref, secret))`, never the secret.
    public struct AppleSettings: Sendable {
        public let enabled: Bool
        public let clientIDs: [String]
        public let secretHash: String?
    }

    public struct APIError: Error, Sendable, CustomStringConvertible {
        public let status: Int?
        public let message: String
        public var description: String { status.map { "Management API answered \($0): \(message)" } ?? "Management API: \(message)" }
    }

    let baseURL: String
    let projectRef: String
    private let token: String
    private let http = HTTPClient()
    private let retry = RetryPolicy()

    /// The switch that stops this client's transfers (the job's, when made inside one).
    public var cancellation: HTTPCancellation { http.cancellation }

    public init(baseURL: String = "https://api.supabase.com", projectRef: String, token: String) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.projectRef = projectRef
        self.token = token
    }

    public func appleSettings() throws -> AppleSettings {
        let response = try send("GET", body: nil)
        let fields = AuthConfigAnswer.appleFields(from: response.body)
        return AppleSettings(enabled: fields.enabled, clientIDs: fields.clientIDs, secretHash: fields.secretHash)
    }

    /// Sets the Apple secret (`PATCH … {"external_apple_secret": …}`).
    public func setAppleSecret(_ secret: String) throws {
        let body = JSON.object([("external_apple_secret", .string(secret))]).rendered
        _ = try send("PATCH", body: Array(body.utf8), secrets: [secret])
    }

    /// The largest answer read: the auth config is a few KiB.
    static let maxAnswerBytes = 1 << 20

    /// One call with retries; an error quotes the answer with the token and `secrets` removed, cut and escaped.
    private func send(_ method: String, body: [UInt8]?, secrets: [String] = []) throws -> HTTPResponse {
        let request = HTTPRequest(method: method, url: "\(baseURL)/v1/projects/\(projectRef)/config/auth",
                                  headers: [("Authorization", "Bearer " + token), ("Content-Type", "application/json")], body: body,
                                  maxResponseBytes: Self.maxAnswerBytes, secrets: [token] + secrets)
        let response: HTTPResponse
        do { response = try http.send(request, retrying: retry).response }
        catch { throw APIError(status: nil, message: request.redactor.quote(error.message)) }
        guard (200...299).contains(response.status) else {
            throw APIError(status: response.status, message: response.quotedBody())
        }
        return response
    }
}

/// One libcurl handle: used by one thread at a time, shared only through `ManagementSession`.
@available(*, unavailable)
extension ManagementAPI: Sendable {}
