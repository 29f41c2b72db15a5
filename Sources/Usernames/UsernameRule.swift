/// The rules the username check applies; each can be switched off in `[job.username-check] rules`.
public enum UsernameRule: String, Sendable, CaseIterable {
    /// Shorter than the minimum or longer than the maximum, counted in user-perceived characters.
    case length
    /// Does not match the allowed-characters pattern.
    case pattern
    /// A reserved name (admin, support, …), compared after normalisation, or one that looks like it.
    case reserved
    /// Changes under NFKC and case folding (`Bob`, `ｂｏｂ`).
    case normalization
    /// Another profile has the same username after NFKC and case folding.
    case caseDuplicate = "case_duplicate"
    /// Another profile's username looks the same (same UTS #39 skeleton) but differs after folding.
    case confusable
    /// Mixes scripts beyond the allowed restriction level (`pаypal`: Latin and Cyrillic).
    case mixedScript = "mixed_script"
    /// Holds invisible or control characters (zero-width joiners, bidi overrides, soft hyphens, …).
    case invisible
    /// Starts or ends with white space.
    case whitespace
}
