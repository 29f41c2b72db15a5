#if canImport(Glibc)
import Glibc
#endif

/// `[migrations] supabase_history`: whether Steward also keeps the Supabase CLI's history.
public enum SupabaseHistoryMode: String, Sendable, CaseIterable {
    /// On when the CLI's table exists or the migrations folder is the CLI's (`supabase/migrations` beside `config.toml`).
    case auto
    case on
    case off

    /// True when `directory` is a Supabase CLI project's migrations folder: its parent holds `config.toml`.
    public static func isCLILayout(_ directory: String) -> Bool {
        var path = directory
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        let parent: String
        if let slash = path.lastIndex(of: "/") {
            parent = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            parent = "."
        }
        return access(parent + "/config.toml", F_OK) == 0
    }

    /// The folder `supabase init` makes, used by default when the working folder holds `supabase/config.toml`.
    public static let cliDirectory = "supabase/migrations"

    /// True when the working folder is a Supabase CLI project (`supabase/config.toml`).
    public static func workingFolderIsCLIProject() -> Bool { access("supabase/config.toml", F_OK) == 0 }
}
