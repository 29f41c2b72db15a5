import LibCrypto
import FoundationEssentials
import OutputText
import StewardJSON

/// The client secret Sign in with Apple's OAuth flow needs: a JWT signed ES256 with the team's `.p8` key.
public struct AppleClientSecret: Sendable, Equatable {
    /// Apple refuses secrets that live longer than this after `iat` (about six months).
    public static let maximumLifetime: Int64 = 15_777_000

    public let token: String
    /// Header `kid`.
    public let keyID: String
    /// `iss`: the Team ID.
    public let teamID: String
    /// `sub`: the Services ID (client id).
    public let servicesID: String
    public let audience: String
    public let issuedAt: Date
    public let expiresAt: Date

    /// Builds and signs a secret; refuses IDs that are not 10 characters and lifetimes Apple would refuse.
    public static func generate(teamID: String, keyID: String, servicesID: String, signer: ES256Signer,
                                issuedAt: Date = Date(), lifetimeSeconds: Int64 = 180 * 86400) throws -> AppleClientSecret {
        try Self.checkIDs(teamID: teamID, keyID: keyID, servicesID: servicesID)
        guard lifetimeSeconds > 0, lifetimeSeconds <= maximumLifetime else {
            throw CryptoError("the secret may live at most \(maximumLifetime) s (about 182 days) after it is issued; asked \(lifetimeSeconds) s")
        }
        let iat = Int64(issuedAt.timeIntervalSince1970)
        let header = #"{"alg":"ES256","kid":"\#(keyID)","typ":"JWT"}"#
        let claims = #"{"iss":"\#(teamID)","iat":\#(iat),"exp":\#(iat + lifetimeSeconds),"aud":"https://appleid.apple.com","sub":"\#(servicesID)"}"#
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        let signature = try signer.sign(Array(signingInput.utf8))
        return try decode(signingInput + "." + Base64URL.encode(signature))
    }

    /// Reads a secret's header and claims (the signature is Apple's to check).
    public static func decode(_ token: String) throws -> AppleClientSecret {
        let token = token.trimmingWhitespace(newlines: true)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(String(parts[0])), let claimBytes = Base64URL.decode(String(parts[1])),
              let header = JSON.parse(headerBytes), case .object = header,
              let claims = JSON.parse(claimBytes), case .object = claims else {
            throw CryptoError("not a JWT (three base64url parts with a JSON header and claims)")
        }
        guard let iat = claims["iat"]?.numberValue, let exp = claims["exp"]?.numberValue else {
            throw CryptoError("the secret has no iat or exp claim")
        }
        return AppleClientSecret(token: token, keyID: header["kid"]?.stringValue ?? "", teamID: claims["iss"]?.stringValue ?? "",
                                 servicesID: claims["sub"]?.stringValue ?? "", audience: claims["aud"]?.stringValue ?? "",
                                 issuedAt: Date(timeIntervalSince1970: iat), expiresAt: Date(timeIntervalSince1970: exp))
    }

    /// Team and Key IDs are 10 characters (letters and digits); the Services ID is a reverse-DNS name.
    public static func checkIDs(teamID: String, keyID: String, servicesID: String) throws {
        for (name, value) in [("team_id", teamID), ("key_id", keyID)] {
            guard value.count == 10, value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                throw CryptoError("[apple] \(name) must be 10 letters or digits (Apple's \(name == "team_id" ? "Team" : "Key") ID); got \"\(value)\" (\(value.count) characters)")
            }
        }
        guard !servicesID.isEmpty, !servicesID.contains(" ") else { throw CryptoError("[apple] services_id must be the Services ID, e.g. com.example.app.web") }
    }

    /// What Steward knows of a secret it recorded but does not keep (the token itself is empty).
    public static func known(keyID: String, issuedAt: Date, expiresAt: Date) -> AppleClientSecret {
        AppleClientSecret(token: "", keyID: keyID, teamID: "", servicesID: "", audience: "", issuedAt: issuedAt, expiresAt: expiresAt)
    }

    /// `hex(HMAC-SHA256(key: project ref, message: secret))`: what the Management API shows instead of the secret.
    public func managementHash(projectRef: String) -> String { HMACSHA256.hex(key: projectRef, message: token) }
}
