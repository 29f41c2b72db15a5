import Apple
import Config
import LibCrypto
import FoundationEssentials
import Postgres

/// Where Sign in with Apple's client secret stands: where it comes from, when it expires, whether Steward knows it.
public struct AppleSecretStatus: Sendable {
    public enum State: Sendable {
        /// Native sign-in only: no secret needed.
        case notNeeded
        /// Configured badly or not at all; the reason says what to set.
        case unconfigured(String)
        /// The secret is known: its expiry is certain.
        case known(AppleClientSecret, hash: String)
        /// The project holds a secret Steward never saw (changed by hand): expiry unknown.
        case unknown(hash: String)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public let state: State
    /// `file` or `management-api`.
    public let source: String
    /// Claims that do not match `[apple]` (iss, sub, kid).
    public let mismatches: [String]

    public var secondsLeft: Double? {
        if case .known(let secret, _) = state { return secret.expiresAt.timeIntervalSinceNow }
        return nil
    }

    public var daysLeft: Double? { secondsLeft.map { $0 / 86400 } }

    /// Reads the secret from `secret_file` or the Management API, and records one Steward has not seen yet.
    public static func read(_ apple: AppleSettings, database: DatabaseSession) async throws -> AppleSecretStatus {
        if !apple.usesSecret {
            return AppleSecretStatus(state: apple.nativeBundleIDs.isEmpty ? .unconfigured("[apple] names no secret_file, no Management API (project_ref, access_token_file) and no native_bundle_ids") : .notNeeded,
                                     source: "none", mismatches: [])
        }
        if let file = apple.secretFile {
            let text = try StewardConfig.readSecret(path: file, what: "Apple client secret")
            let secret = try AppleClientSecret.decode(text)
            let hash = hashOf(secret, apple)
            try await record(secret, hash: hash, delivered: "file", database: database)
            return AppleSecretStatus(state: .known(secret, hash: hash), source: "file", mismatches: mismatches(secret, apple))
        }
        guard let ref = apple.projectRef, let tokenFile = apple.accessTokenFile else {
            return AppleSecretStatus(state: .unconfigured("set [apple] secret_file, or project_ref and access_token_file for the Management API"), source: "none", mismatches: [])
        }
        let token = try StewardConfig.readSecret(path: tokenFile, what: "Management API token")
        let api = ManagementSession(baseURL: apple.managementURL, projectRef: ref, token: token)
        let settings = try await api.run { try $0.appleSettings() }
        guard let hash = settings.secretHash else {
            return AppleSecretStatus(state: apple.nativeBundleIDs.isEmpty ? .unconfigured("the project has no Apple secret set") : .notNeeded,
                                     source: "management-api", mismatches: [])
        }
        let known = try await database.run { c in
            try c.query("select kid, iat, exp from steward.apple_secrets where hmac = \(hash)").rows.first
                .map { try $0.decode((String, Date, Date).self) }
        }
        guard let known else { return AppleSecretStatus(state: .unknown(hash: hash), source: "management-api", mismatches: []) }
        // Steward never keeps the secret itself: rebuild what it knows of it from the record.
        let placeholder = AppleClientSecret.known(keyID: known.0, issuedAt: known.1, expiresAt: known.2)
        return AppleSecretStatus(state: .known(placeholder, hash: hash), source: "management-api", mismatches: [])
    }

    static func hashOf(_ secret: AppleClientSecret, _ apple: AppleSettings) -> String {
        secret.managementHash(projectRef: apple.projectRef ?? "")
    }

    static func mismatches(_ secret: AppleClientSecret, _ apple: AppleSettings) -> [String] {
        var out: [String] = []
        if let team = apple.teamID, secret.teamID != team { out.append("iss is \(secret.teamID), [apple] team_id is \(team)") }
        if let key = apple.keyID, secret.keyID != key { out.append("kid is \(secret.keyID), [apple] key_id is \(key)") }
        if let services = apple.servicesID, secret.servicesID != services { out.append("sub is \(secret.servicesID), [apple] services_id is \(services)") }
        return out
    }

    /// Records a secret (by its hash, never itself); a secret seen before is left as it is.
    public static func record(_ secret: AppleClientSecret, hash: String, delivered: String, database: DatabaseSession) async throws {
        try await database.run { c in
            _ = try c.query("""
                insert into steward.apple_secrets (hmac, kid, iat, exp, delivered) values ($1, $2, to_timestamp($3), to_timestamp($4), $5)
                on conflict (hmac) do nothing
                """, [hash, secret.keyID, secret.issuedAt.timeIntervalSince1970, secret.expiresAt.timeIntervalSince1970, delivered])
        }
    }
}
