import FoundationEssentials

/// The proof that a Storage API serves one particular database, before anything is deleted through it.
///
/// A database restored from another project's (a staging copy of production) holds the same `storage.objects` rows
/// with the same ids, while its configured Storage API may be the other project's: a row's presence says nothing
/// about which API serves it (reference section 10). So nothing already in the table can prove anything. A new
/// object can: the canary, a name no copy can hold (a random UUID), uploaded through the API. Its row appears in the
/// database the API writes to, and in no other; so the row (with the id the API answered) seen in this database
/// proves the API serves it, and a restored copy cannot pass.
///
/// This type holds what is not I/O: the canary's name, bytes and content type, and the messages. The orphan job's
/// `StorageProofPhase` does the requests and the reads.
public struct StorageProof: Sendable {
    /// The folder Steward's own objects go in; `StorageProof.isCanary` tells its canaries apart.
    public static let prefix = ".steward/"
    /// How every canary's name starts, in every bucket.
    public static let canaryPrefix = prefix + "canary-"

    /// The bucket the canary goes in: the first one the run cleans.
    public let bucket: String
    /// `.steward/canary-<uuid>.<extension>`.
    public let name: String
    public let contentType: String
    public let bytes: [UInt8]

    /// A canary for `bucket`, in a content type its `allowed_mime_types` takes (nil or empty: any).
    public init(bucket: String, allowedMimeTypes: [String]?, uuid: UUID = UUID()) {
        let (contentType, bytes, fileExtension) = Self.content(allowedMimeTypes: allowedMimeTypes ?? [])
        self.bucket = bucket
        self.name = Self.canaryPrefix + uuid.uuidString.lowercased() + "." + fileExtension
        self.contentType = contentType
        self.bytes = bytes
    }

    /// Whether `name` is a canary (this run's or one a killed run left).
    public static func isCanary(_ name: String) -> Bool { name.hasPrefix(canaryPrefix) }

    /// A 1x1 transparent PNG (67 bytes).
    public static let png: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
        0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
        0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
        0x42, 0x60, 0x82,
    ]

    /// `image/png` when the bucket takes it (Storage matches `type/*` and `*/*` wildcards, case-insensitively);
    /// otherwise the bucket's first allowed type, a wildcard's `*` made `octet-stream`, with one byte of content:
    /// the proof is about the row, not the bytes, and a bucket limited to other types must still be provable.
    static func content(allowedMimeTypes allowed: [String]) -> (contentType: String, bytes: [UInt8], fileExtension: String) {
        let types = allowed.map { String($0.lowercased().filter { $0 != " " }) }.filter { !$0.isEmpty }
        if types.isEmpty || types.contains(where: { ["image/png", "image/*", "*/*", "*"].contains($0) }) {
            return ("image/png", png, "png")
        }
        var first = types[0]
        if first.hasSuffix("/*") { first = String(first.dropLast()) + "octet-stream" }
        return (first, [0x00], "bin")
    }

    /// Why a run that could not prove the Storage API stops: `url` is the API's (no key, no query), `finding` a
    /// clause that follows it ("does not serve this database: …").
    public static func refusal(url: String, _ finding: String) -> String {
        "the Storage API at \(url) \(finding); no object was deleted. Check that the Storage URL ([storage] url, or "
            + "storage_url of [target.NAME]) is this project's own and not another's (a database restored from production keeps "
            + "production's storage.objects rows, but its Storage is the one of the project it was restored into)"
    }
}
