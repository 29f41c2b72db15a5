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

    /// Whether a secret is expected at all (OAuth flow), as opposed to native sign-in only.
    public var usesSecret: Bool { secretFile != nil || (projectRef != nil && accessTokenFile != nil) || privateKeyFile != nil }
}
