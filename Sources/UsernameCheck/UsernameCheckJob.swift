import Config
import FoundationEssentials
import Jobs
import Postgres
import Usernames
import OutputText

/// Checks every username against the rules the quickstart's schema cannot express, and keeps
/// `steward.username_findings` current. It never changes a username.
///
/// One streaming pass: profiles are read a page at a time through a cursor, each username is checked on
/// its own, and its grouping keys go to a temporary table; collisions are then found by grouping in the
/// database, so memory stays flat and nothing is compared pairwise.
public struct UsernameCheckJob: Job {
    public static let name = "username-check"
    public static let abstract = "Flag usernames that break the rules (length, characters, reserved, normalisation, collisions, look-alikes, scripts, invisible characters)."
    public static let defaultSchedule = "41 4 * * *"
    static let minLength = ConfigKey("min_length", .integer(1...Int.max), default: 3, takes: "fewest characters (as a person counts them)")
    static let maxLength = ConfigKey("max_length", .integer(1...Int.max), default: 30, takes: "most characters")
    static let pattern = ConfigKey("pattern", ConfigValueType<String>.text.checked { pattern in
        (try? Regex(pattern)) == nil ? ConfigProblem("not a valid regular expression", saysAll: false) : nil
    }, default: "[a-z0-9_.]+", takes: "allowed characters, as a regular expression the whole username must match")
    static let reservedFile = ConfigKey("reserved_file", ConfigValueType<String>.text.checked { path in
        path.isEmpty || FileManager.default.isReadableFile(atPath: path) ? nil : ConfigProblem("cannot read \(path)", saysAll: false)
    }, default: "", takes: "reserved names, one a line (default: the built-in list, as in config/reserved-usernames.txt)",
        defaultText: "unset", isPath: true)
    static let maxMixedScript = ConfigKey("max_mixed_script", ConfigValueType<String>.text.map({ name in
        UnicodeChecks.RestrictionLevel(name: name).map { .success($0) } ?? .failure(ConfigProblem("not a restriction level", saysAll: false))
    }, describe: { $0.description }), default: .highlyRestrictive,
        takes: "worst mix of scripts allowed: ascii, single-script, highly-restrictive, moderately-restrictive, minimally-restrictive")
    static let rules = ConfigKey("rules", ConfigValueType<String>.text.map({ value in
        var rules: Set<UsernameRule> = []
        for name in value.split(separator: ",").map({ $0.trimmingWhitespace() }) {
            guard let rule = UsernameRule(rawValue: name) else {
                return .failure(ConfigProblem("unknown rule \(name) (known: \(UsernameRule.allCases.map(\.rawValue).joined(separator: ", ")))", saysAll: false))
            }
            rules.insert(rule)
        }
        return .success(rules)
    }, describe: { rules in UsernameRule.allCases.filter(rules.contains).map(\.rawValue).joined(separator: ",") }),
        default: Set(UsernameRule.allCases), takes: "the rules to apply, comma-separated")
    static let pageSize = ConfigKey("page_size", .integer(100...100_000), default: 5000, takes: "profiles read per page")

    public static let options: [any ConfigKeyDeclaration] = [minLength, maxLength, pattern, reservedFile, maxMixedScript, rules, pageSize]

    /// `[job.username-check]`, read once.
    public struct Settings: Sendable {
        public let policy: UsernamePolicy
        /// Profiles read per page.
        public let pageSize: Int
    }

    public static func settings(_ options: JobOptions, config: StewardConfig) throws(ConfigError) -> Settings {
        var policy = UsernamePolicy()
        policy.minLength = options[minLength]
        policy.maxLength = options[maxLength]
        policy.pattern = options[pattern]
        policy.maxRestrictionLevel = options[maxMixedScript]
        policy.rules = options[rules]
        let path = options[reservedFile]
        if path.isEmpty {
            policy.setReserved(DefaultReservedNames.names)
        } else {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ConfigError(file: path, key: "[job.username-check] reserved_file", message: "cannot read the reserved names")
            }
            policy.setReserved(UsernamePolicy.parseReserved(text))
        }
        return Settings(policy: policy, pageSize: options[pageSize])
    }

    let settings: Settings
    var policy: UsernamePolicy { settings.policy }
    var pageSize: Int { settings.pageSize }

    public init(settings: Settings) { self.settings = settings }

    public func run(_ context: JobContext) async throws -> JobSummary {
        try UnicodeChecks.load()
        let db = context.database
        // Session-local work tables (the session is the job's own); quiet about "already exists" on later runs.
        let started = Date()
        let estimate = try await db.run { c in
            // Room for the work tables in memory; only possible before the session first touches a temporary table.
            _ = try? c.query("select set_config('temp_buffers', '128MB', false) where not exists (select 1 from pg_class where relpersistence = 't' and relnamespace = pg_my_temp_schema())")
            try c.transaction { c in
                _ = try c.execute("""
                    set local client_min_messages = warning;
                    create temporary table if not exists steward_username_keys
                      (profile_id uuid not null, username text not null, folded text not null, skeleton text not null);
                    create temporary table if not exists steward_username_found
                      (profile_id uuid not null, username text not null, rule text not null, detail text not null);
                    create temporary table if not exists steward_username_repeats (key text not null, skeleton bool not null);
                    drop index if exists steward_username_keys_folded, steward_username_keys_skeleton;
                    truncate steward_username_keys, steward_username_found, steward_username_repeats;
                    """)
            }
            // The planner's row count: a total for progress without counting; corrected if the scan passes it.
            return try c.query("select greatest(reltuples, 0)::bigint from pg_class where oid = 'public.profiles'::regclass").scalar(Int64.self)
        }
        let progress = context.progress
        progress.begin("checking", total: estimate > 0 ? estimate : nil)
        _ = try UsernameChecker(policy: policy)   // the pattern compiles, once for the run
        let policy = policy
        let workers = max(1, min(8, ProcessInfo.processInfo.activeProcessorCount))
        var scanned = 0, withoutUsername = 0
        // Keys that may repeat (all that do, and a few that do not): collisions are then looked for among them only.
        var foldedSeen = SeenFilter(expected: Int(clamping: estimate)), skeletonSeen = SeenFilter(expected: Int(clamping: estimate))
        let pageSize = pageSize
        // One pass in the table's own order through a cursor (an index walk over random uuids would visit heap
        // pages at random), in one read transaction. A pipeline: while one page is checked (on every core), the next
        // is fetched and the one before is stored.
        try await db.run { c in
            try c.execute("begin isolation level repeatable read")
            try c.execute("declare steward_username_profiles no scroll cursor for select p.id, p.username from public.profiles p")
        }
        do {
            var page = try await Self.fetchPage(db, pageSize: pageSize)
            while !page.isEmpty {
                let more = page.count == pageSize
                async let next = more ? Self.fetchPage(db, pageSize: pageSize) : []
                let checked = try await Self.check(page, policy: policy, workers: workers)
                let repeatedFolded = checked.folded.filter { foldedSeen.insert($0) }
                let repeatedSkeletons = checked.skeletons.filter { skeletonSeen.insert($0) }
                try await db.run { [checked] c in
                    // unnest in the select list zips the arrays row by row without first gathering them in a tuple store.
                    try c.query("insert into steward_username_keys select unnest(\(checked.keyIDs)), unnest(\(checked.keyNames)), unnest(\(checked.folded)), unnest(\(checked.skeletons))")
                    if !repeatedFolded.isEmpty || !repeatedSkeletons.isEmpty {
                        try c.query("insert into steward_username_repeats select k, false from unnest(\(repeatedFolded)::text[]) k union all select k, true from unnest(\(repeatedSkeletons)::text[]) k")
                    }
                    if !checked.foundIDs.isEmpty {
                        try c.query("insert into steward_username_found select * from unnest(\(checked.foundIDs), \(checked.foundNames), \(checked.foundRules), \(checked.details))")
                    }
                }
                scanned += page.count
                withoutUsername += page.count - checked.keyIDs.count
                if let total = progress.snapshot.total, Int64(scanned) > total { progress.set(total: Int64(scanned)) }
                progress.set(done: Int64(scanned))
                page = try await next
            }
            try await db.run { c in _ = try c.execute("commit") }
        } catch {
            _ = try? await db.run { c in if c.isOpen { _ = try c.execute("rollback") } }
            throw error
        }
        progress.set(total: Int64(scanned))
        progress.set(done: Int64(scanned))

        context.logger.info("usernames scanned", [("profiles", String(scanned)), ("seconds", String(fixed: Date().timeIntervalSince(started), digits: 2))])
        let rules = policy.rules.map(\.rawValue)
        let dryRun = context.dryRun
        let recordStarted = Date()
        progress.begin("finding collisions")
        let result = try await db.run { c in try Self.collideAndRecord(c, rules: rules, dryRun: dryRun, progress: progress) }
        context.logger.info("collisions found and findings recorded", [("seconds", String(fixed: Date().timeIntervalSince(recordStarted), digits: 2))])
        for line in result.newLines { context.logger.warning("new username finding", line) }
        if result.newCount > result.newLines.count {
            context.logger.warning("more new username findings", [("not_shown", String(result.newCount - Int64(result.newLines.count)))])
        }

        var summary = JobSummary()
        summary.set("profiles", Int64(scanned))
        summary.set("without_username", Int64(withoutUsername))
        summary.set("findings", result.byRule.values.reduce(0, +))
        for rule in UsernameRule.allCases where policy.rules.contains(rule) { summary.set(rule.rawValue, result.byRule[rule.rawValue] ?? 0) }
        summary.set(dryRun ? "would_be_new" : "new", result.newCount)
        summary.set(dryRun ? "would_resolve" : "resolved", result.resolved)
        return summary
    }

    /// One profile as read: its id and username (nil when it has none).
    struct Profile: Sendable {
        let id: UUID
        let username: String?
    }

    /// The next page of profiles from the scan's cursor, read in place.
    static func fetchPage(_ db: DatabaseSession, pageSize: Int) async throws -> [Profile] {
        try await db.run { c in
            let result = try c.query(unsafeSQL: "fetch forward \(pageSize) from steward_username_profiles")
            var page: [Profile] = []
            page.reserveCapacity(result.count)
            try result.forEachRow { row in
                guard let id = try row.uuid(0) else {
                    throw PostgresError(kind: .decoding, message: "profile id is NULL (row \(row.index + 1))")
                }
                page.append(Profile(id: id, username: try row.string(1)))
            }
            return page
        }
    }

    /// What checking some profiles gave: the keys of each username, and each finding, as columns to send.
    struct Checked: Sendable {
        var keyIDs: [UUID] = [], keyNames: [String] = [], folded: [String] = [], skeletons: [String] = []
        var foundIDs: [UUID] = [], foundNames: [String] = [], foundRules: [String] = [], details: [String] = []

        mutating func append(_ other: Checked) {
            keyIDs += other.keyIDs; keyNames += other.keyNames; folded += other.folded; skeletons += other.skeletons
            foundIDs += other.foundIDs; foundNames += other.foundNames; foundRules += other.foundRules; details += other.details
        }
    }

    /// Checks `page` in `workers` slices at once (child tasks, each with its own checker), and joins their answers.
    static func check(_ page: [Profile], policy: UsernamePolicy, workers: Int) async throws -> Checked {
        if workers <= 1 || page.count < 200 { return check(page[...], checker: try UsernameChecker(policy: policy)) }
        let slice = (page.count + workers - 1) / workers
        return try await withThrowingTaskGroup(of: (Int, Checked).self) { group in
            for (n, start) in stride(from: 0, to: page.count, by: slice).enumerated() {
                let part = page[start..<min(page.count, start + slice)]
                group.addTask { (n, check(part, checker: try UsernameChecker(policy: policy))) }
            }
            var parts: [(Int, Checked)] = []
            for try await part in group { parts.append(part) }
            var all = Checked()
            for (_, part) in parts.sorted(by: { $0.0 < $1.0 }) { all.append(part) }
            return all
        }
    }

    /// Checks `profiles` one by one.
    static func check(_ profiles: ArraySlice<Profile>, checker: UsernameChecker) -> Checked {
        var out = Checked()
        out.keyIDs.reserveCapacity(profiles.count); out.keyNames.reserveCapacity(profiles.count)
        out.folded.reserveCapacity(profiles.count); out.skeletons.reserveCapacity(profiles.count)
        for profile in profiles {
            guard let username = profile.username else { continue }
            let (findings, keys) = checker.check(username)
            out.keyIDs.append(profile.id); out.keyNames.append(username); out.folded.append(keys.folded); out.skeletons.append(keys.skeleton)
            for finding in findings {
                out.foundIDs.append(profile.id); out.foundNames.append(username); out.foundRules.append(finding.rule.rawValue); out.details.append(finding.detail)
            }
        }
        return out
    }

    struct RecordResult: Sendable {
        var byRule: [String: Int64] = [:]
        var newCount: Int64 = 0
        var newLines: [[(String, String)]] = []
        var resolved: Int64 = 0
    }

    /// Finds collisions by grouping the keys, then brings `steward.username_findings` up to date (unless dry).
    ///
    /// Each rule is one pass over the keys, joined to the keys seen more than once in the scan (a superset of those
    /// that collide, small), then grouping among those: the keys that do collide, their profiles, and for each group
    /// only the first profiles its details can name (up to five others each, by profile id).
    static func collideAndRecord(_ c: Connection, rules: [String], dryRun: Bool, progress: JobProgress) throws -> RecordResult {
        try c.transaction { c in
            // Room to hash every key in memory, for these statements only.
            try c.execute("set local work_mem = '64MB'")
            if rules.contains("case_duplicate") {
                // A member's five others are among its group's first six.
                try c.query("\(unescaped: EmbeddedSQL.caseDuplicates)")
            }
            if rules.contains("confusable") {
                // A member's five others (another normal form) are among the first ten of its group once each normal
                // form keeps only its first five.
                try c.query("\(unescaped: EmbeddedSQL.confusables)")
            }
        }
        try c.execute("analyze steward_username_found")
        progress.begin("recording")
        var result = RecordResult()
        for row in try c.query("select rule, count(*) from (select distinct profile_id, rule from steward_username_found) f group by rule").rows {
            result.byRule[try row.decode(String.self, at: 0)] = try row.decode(Int64.self, at: 1)
        }
        let fresh: PostgresQuery = """
            select distinct on (f.profile_id, f.rule) f.* from steward_username_found f
            where not exists (select 1 from steward.username_findings u
                              where u.profile_id = f.profile_id and u.rule = f.rule and u.resolved_at is null)
            order by f.profile_id, f.rule
            """
        result.newCount = try c.query("select count(*) from (\(fresh)) n").scalar(Int64.self)
        result.newLines = try c.query("select profile_id, username, rule, detail from (\(fresh)) n limit 20").decode((UUID, String, String, String).self)
            .map { [("profile", $0.0.postgresText), ("username", $0.1), ("rule", $0.2), ("detail", $0.3)] }
        let gone: PostgresQuery = """
            from steward.username_findings u where u.resolved_at is null and u.rule = any(\(rules)::text[])
              and not exists (select 1 from steward_username_found f where f.profile_id = u.profile_id and f.rule = u.rule)
            """
        if dryRun {
            result.resolved = try c.query("select count(*) \(gone)").scalar(Int64.self)
            return result
        }
        try c.transaction { c in
            try c.execute("""
                insert into steward.username_findings (profile_id, username, rule, detail)
                select distinct on (profile_id, rule) profile_id, username, rule, detail from steward_username_found order by profile_id, rule
                on conflict (profile_id, rule) do update
                  set username = excluded.username, detail = excluded.detail, last_seen = now(), resolved_at = null
                """)
            result.resolved = Int64(try c.query("update steward.username_findings u set resolved_at = now() where (u.profile_id, u.rule) in (select u.profile_id, u.rule \(gone))").affectedRows)
        }
        return result
    }
}
