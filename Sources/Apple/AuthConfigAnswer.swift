import OutputText
import StewardJSON
#if canImport(HTTP)
import HTTP
#endif

/// The Management API's `GET …/config/auth` answer, read for its Apple fields: fields of the wrong type count as
/// absent; a body that is not a JSON object gives nothing enabled, no IDs and no secret. The texts are the peer's:
/// a hash that is not hex, and every ID, come back quoted (cut, control characters escaped), so they are safe to show.
enum AuthConfigAnswer {
    static func appleFields(from body: [UInt8]) -> (enabled: Bool, clientIDs: [String], secretHash: String?) {
        let object = JSON.parse(body) ?? .object([])
        let ids = (object["external_apple_client_id"]?.stringValue ?? "").split(separator: ",").map { $0.trimmingWhitespace() }
            + (object["external_apple_additional_client_ids"]?.stringValue ?? "").split(separator: ",").map { $0.trimmingWhitespace() }
        let enabled = object["external_apple_enabled"]?.boolValue ?? false
        let secret = object["external_apple_secret"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }.map { value in
            value.utf8.count <= 128 && value.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
                ? value : PeerTextRedactor.none.quote(value, limit: 64)
        }
        return (enabled, ids.filter { !$0.isEmpty }.map { PeerTextRedactor.none.quote($0, limit: 255) }, secret)
    }
}
