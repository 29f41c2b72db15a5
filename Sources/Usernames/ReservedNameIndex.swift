import Synchronization

/// The reserved names by NFKC case-folded form and by skeleton, computed once, on first use (it needs ICU).
final class ReservedNameIndex: Sendable {
    private let names: [String]
    private let computed = Mutex<(folded: [String: String], skeletons: [String: String])?>(nil)

    init(names: [String]) { self.names = names }

    /// Both maps; the first call folds every name.
    var keys: (folded: [String: String], skeletons: [String: String]) {
        computed.withLock { cached in
            if let cached { return cached }
            var folded: [String: String] = [:], skeletons: [String: String] = [:]
            for name in names where !name.isEmpty {
                let f = UnicodeChecks.nfkcCasefold(name)
                folded[f] = name
                skeletons[UnicodeChecks.skeleton(f)] = name
            }
            cached = (folded, skeletons)
            return (folded, skeletons)
        }
    }
}
