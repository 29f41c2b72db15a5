import Apple
import Config
import LibCrypto
import FoundationEssentials
import StewardLog
import Postgres
import OutputText

/// Making a new Sign in with Apple client secret and handing it to the project: the one implementation behind
/// `auto_rotate` and `steward apple-secret generate --push`.
public enum AppleSecretRotation {
    /// The lifetime of a secret the job rotates in, in days.
    public static let rotatedLifetimeDays = 180

    /// A new secret from `[apple]` team_id, key_id, services_id and the `.p8` key in private_key_file.
    public static func generate(_ apple: AppleSettings, lifetimeDays: Int) throws -> AppleClientSecret {
        guard let team = apple.teamID, let key = apple.keyID, let services = apple.servicesID, let keyFile = apple.privateKeyFile else {
            throw AppleSecretStatus.Failure(description: "generating a secret needs [apple] team_id, key_id, services_id and private_key_file")
        }
        let pem = try StewardConfig.readSecret(path: keyFile, what: "Apple private key (.p8)")
        let signer: ES256Signer
        do { signer = try ES256Signer(pem: pem) } catch { throw AppleSecretStatus.Failure(description: "\(keyFile): \(error.message)") }
        return try AppleClientSecret.generate(teamID: team, keyID: key, servicesID: services, signer: signer,
                                              lifetimeSeconds: Int64(lifetimeDays) * 86400)
    }

    /// Pushes `secret` through the Management API, checks the project now holds it (by hash), and records it;
    /// returns its hash. `purpose` names what asked, for the message when the Management API is not configured.
    public static func push(_ secret: AppleClientSecret, apple: AppleSettings, database: DatabaseSession, purpose: String) async throws -> String {
        guard let ref = apple.projectRef, let tokenFile = apple.accessTokenFile else {
            throw ConfigError(file: "(config)", key: "[apple]",
                              message: "\(purpose) needs the Management API: set [apple] project_ref and access_token_file")
        }
        let token = try StewardConfig.readSecret(path: tokenFile, what: "Management API token")
        let api = ManagementSession(baseURL: apple.managementURL, projectRef: ref, token: token)
        let hash = secret.managementHash(projectRef: ref)
        try await api.run { try $0.setAppleSecret(secret.token) }
        let live = try await api.run { try $0.appleSettings().secretHash }
        guard live == hash else {
            throw AppleSecretStatus.Failure(description: "pushed a new Apple secret, but the project reports another hash (\(live?.prefix(12) ?? "none")…): check the Management API")
        }
        try await AppleSecretStatus.record(secret, hash: hash, delivered: "management-api", database: database)
        return hash
    }

    /// Generates a secret and pushes it (`auto_rotate`).
    public static func rotate(_ apple: AppleSettings, database: DatabaseSession, logger: Logger) async throws -> (secret: AppleClientSecret, hash: String) {
        let secret = try generate(apple, lifetimeDays: rotatedLifetimeDays)
        let hash = try await push(secret, apple: apple, database: database, purpose: "auto_rotate")
        logger.notice("rotated the Sign in with Apple client secret", [("kid", secret.keyID), ("expires", ISODate.string(secret.expiresAt))])
        return (secret, hash)
    }
}
