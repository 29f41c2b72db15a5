/// Compares the catalog the files are expected to leave with the live one, group by group (see `CatalogSnapshot`):
/// only groups some file changed are compared, so the platform's own objects and whatever the app made at run
/// time are never called drift, and every kind of object the catalog holds is compared the same way.
struct CatalogDiff {
    /// One finding, attributed to the file that last changed the group.
    struct Finding: Sendable, Equatable {
        let version: String
        let text: String
        /// A right the files give that the live database lacks: a hardening revoke, not drift.
        let stricter: Bool
    }

    /// Every difference between `expected` and `live`, in group order.
    static func compare(expected: [String: SchemaRecord.Expected], live: CatalogSnapshot) -> [Finding] {
        var findings: [Finding] = []
        for group in expected.keys.sorted() {
            let want = expected[group]!
            let have = live.groups[group] ?? [:]
            if want.members == have { continue }
            let privileges = CatalogSnapshot.isPrivilegeGroup(group)
            func add(_ text: String, stricter: Bool = false) { findings.append(Finding(version: want.version, text: text, stricter: stricter)) }
            // An object's own group gone or back is one line; an aspect (its policies, columns …) is listed key by key.
            let aspect = aspectSuffixes.contains { group.hasSuffix($0) } || want.members[CatalogSnapshot.partialMarker] != nil
            if want.members.isEmpty && !privileges && !aspect {
                add("\(group) exists, but the files remove it")
                continue
            }
            if have.isEmpty && !privileges && !aspect {
                add("\(group) is missing")
                continue
            }
            // A group recorded in part is compared on the keys the files changed only.
            let partial = want.members[CatalogSnapshot.partialMarker] != nil
            let keys = partial ? Set(want.members.keys).subtracting([CatalogSnapshot.partialMarker]) : Set(want.members.keys).union(have.keys)
            for key in keys.sorted() {
                if want.members[key] == CatalogSnapshot.absent {
                    if let live = have[key] { add("\(group): extra \(key)\(live.isEmpty ? "" : " (\(short(live)))") that the files remove") }
                    continue
                }
                switch (want.members[key], have[key]) {
                case (let files?, nil):
                    if privileges {
                        add("\(group): \(key)\(files.isEmpty ? "" : " " + files) is revoked (the files grant it)", stricter: true)
                    } else {
                        add("\(group): \(key) is missing" + (files.isEmpty ? "" : " (files: \(short(files)))"))
                    }
                case (nil, let live?):
                    add("\(group): extra \(key)\(live.isEmpty ? "" : " (\(short(live)))") that the files do not create")
                case (let files?, let live?) where files != live && privileges && files == "with grant option" && live.isEmpty:
                    add("\(group): \(key) has lost its grant option (the files give it)", stricter: true)
                case (let files?, let live?) where files != live:
                    add("\(group): \(key) differs: \(difference(live: live, files: files))")
                default:
                    break
                }
            }
        }
        return findings
    }

    /// The endings of groups that hold an aspect of an object (see `CatalogSnapshot.query`).
    static let aspectSuffixes = [" columns", " constraints", " indexes", " triggers", " policies", " tables"]

    /// A definition on one line, cut at `limit` characters.
    static func short(_ text: String, limit: Int = 160) -> String {
        let line = text.split(whereSeparator: \.isNewline).map { $0.trimmingPrefix(while: \.isWhitespace) }.joined(separator: " ")
        return line.count > limit ? String(line.prefix(limit - 1)) + "…" : line
    }

    /// The two definitions, or for long ones (function bodies) the lines each has that the other lacks.
    static func difference(live: String, files: String) -> String {
        if !live.contains("\n") && !files.contains("\n") {
            return "live \(short(live, limit: 600)), files \(short(files, limit: 600))"
        }
        let liveLines = live.split(separator: "\n").map { short(String($0)) }
        let fileLines = files.split(separator: "\n").map { short(String($0)) }
        let onlyLive = liveLines.filter { !fileLines.contains($0) }
        let onlyFiles = fileLines.filter { !liveLines.contains($0) }
        func list(_ lines: [String]) -> String {
            lines.isEmpty ? "nothing else" : lines.prefix(3).map { "`\($0)`" }.joined(separator: ", ") + (lines.count > 3 ? " and \(lines.count - 3) more line(s)" : "")
        }
        if onlyLive.isEmpty && onlyFiles.isEmpty { return "the same lines in another order" }
        return "live has \(list(onlyLive)); the files have \(list(onlyFiles))"
    }
}
