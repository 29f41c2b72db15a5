import Alerts
import Config

/// `[apple]`: where Sign in with Apple's client secret comes from, and how Steward watches and rotates it.
public struct AppleSettings: Sendable {
    public var teamID: String?
    public var keyID: String?
    public var servicesID: String?
    /// The `.p8` key (a secret: mode 600 or `credential:NAME`).
    public var privateKeyFile: String?
    /// A file holding the secret in use (a JWT), when it is not read through the Management API.
    public var secretFile: String?
    /// The project ref, for the Management API and the secret's hash.
    public var projectRef: String?
    /// A file holding the Management API token (`sbp_…`).
    public var accessTokenFile: String?
    public var managementURL = "https://api.supabase.com"
    /// Days before expiry at which to remind, largest first.
    public var remindDays = [30, 14, 7, 3, 1]
    public var autoRotate = false
    public var rotateDaysBefore = 30
    public var webhookURL: String?
    /// The app's bundle IDs: with no secret configured, the app signs in natively and needs none.
    public var nativeBundleIDs: [String] = []

    public init() {}

    /// `[apple]` as configured.
    public init(_ config: StewardConfig) {
        typealias K = AppleConfig
        teamID = config[K.teamID]
        keyID = config[K.keyID]
        servicesID = config[K.servicesID]
        privateKeyFile = config[K.privateKeyFile]
        secretFile = config[K.secretFile]
        projectRef = config[K.projectRef]
        accessTokenFile = config[K.accessTokenFile]
        managementURL = config[K.managementURL]
        remindDays = config[K.remindDays]
        autoRotate = config[K.autoRotate]
        rotateDaysBefore = config[K.rotateDaysBefore]
        webhookURL = config[AlertsConfig.webhookURL]
        nativeBundleIDs = config[K.nativeBundleIDs]
    }

    /// Whether a secret is expected at all (OAuth flow), as opposed to native sign-in only.
    public var usesSecret: Bool { secretFile != nil || (projectRef != nil && accessTokenFile != nil) || privateKeyFile != nil }
}

/// The keys of `[apple]`.
public enum AppleConfig {
    static let optionalText = ConfigValueType<String>.text.optional
    static let secretFileKey = ConfigValueType<String>.secretFile.optional

    public static let teamID = ConfigKey("apple", "team_id", optionalText, default: nil, takes: "the 10-character Team ID")
    public static let keyID = ConfigKey("apple", "key_id", optionalText, default: nil, takes: "the 10-character Key ID")
    public static let servicesID = ConfigKey("apple", "services_id", optionalText, default: nil, takes: "the Services ID (client id)")
    public static let privateKeyFile = ConfigKey("apple", "private_key_file", secretFileKey, default: nil,
                                                 takes: "the .p8 key file, or credential:NAME", secret: "Apple private key (.p8)")
    public static let secretFile = ConfigKey("apple", "secret_file", secretFileKey, default: nil,
                                             takes: "a file holding the current secret (a JWT)", secret: "Apple client secret")
    public static let projectRef = ConfigKey("apple", "project_ref", optionalText, default: nil, takes: "the project ref (the <ref> of <ref>.supabase.co)")
    public static let accessTokenFile = ConfigKey("apple", "access_token_file", secretFileKey, default: nil,
                                                  takes: "a file holding an sbp_ access token, or credential:NAME", secret: "Management API token")
    public static let managementURL = ConfigKey("apple", "management_url", .url, default: "https://api.supabase.com",
                                                takes: "the Management API URL (default https://api.supabase.com; http only to loopback)")
    public static let remindDays = ConfigKey("apple", "remind_days", ConfigValueType<[String]>.list.map({ items in
        let days = items.map { ConfigNumber.integer($0, in: 1...366) }
        guard !days.isEmpty, days.allSatisfy({ $0 != nil }) else { return .failure(.form("days")) }
        return .success(days.compactMap { $0 }.sorted(by: >))
    }, describe: { $0.map(String.init).joined(separator: ", ") }), default: [30, 14, 7, 3, 1],
        takes: "days before expiry to remind (1 to 366), comma-separated (default 30,14,7,3,1)")
    public static let autoRotate = ConfigKey("apple", "auto_rotate", .boolean, default: false, takes: "true or false (or yes/no, on/off, 1/0)")
    public static let rotateDaysBefore = ConfigKey("apple", "rotate_days_before", .integer(1...170), default: 30,
                                                   takes: "days before expiry to rotate when auto_rotate is on (default 30)")
    public static let nativeBundleIDs = ConfigKey("apple", "native_bundle_ids", .list, default: [], takes: "the app's bundle IDs, comma-separated")

    public static let section = ConfigSection("apple", keys: [teamID, keyID, servicesID, privateKeyFile, secretFile, projectRef, accessTokenFile,
                                                               managementURL, remindDays, autoRotate, rotateDaysBefore, AlertsConfig.webhookURL,
                                                               nativeBundleIDs])
}
