import Config

/// `[storage]`: the project's Storage API, for jobs that delete objects through it.
public enum StorageConfig {
    public static let url = ConfigKey("storage", "url", ConfigValueType<String>.url.optional, default: nil,
                                      takes: "the project URL https://<ref>.supabase.co or its Storage URL ending in /storage/v1 (http only to loopback)",
                                      defaultText: "unset (jobs that need Storage stay off)")
    /// A legacy service-role JWT or an `sb_secret_…` key.
    public static let serviceKeyFile = ConfigKey("storage", "service_key_file", ConfigValueType<String>.secretFile.optional, default: nil,
                                                 takes: "a file path or credential:NAME", secret: "storage service key")

    public static let section = ConfigSection("storage", keys: [url, serviceKeyFile])
}
