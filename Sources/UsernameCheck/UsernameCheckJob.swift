import Config
import FoundationEssentials
import Jobs
import Postgres
import Usernames
import OutputText

/// Checks every username against the rules the quickstart's schema cannot express, and keeps
/// `steward.username_findings` current. It never changes a username.
///
/// One streaming pass: profiles are read a page at a time (keyset pagination), each username is checked on
/// its own, and its grouping keys go to a temporary table; collisions are then found by grouping in the
/// database, so memory stays flat and nothing is compared pairwise.
public struct UsernameCheckJob: Job {
    public static let name = "username-check"
    public static let abstract = "Flag usernames that break the rules (length, characters, reserved, normalisation, collisions, look-alikes, scripts, invisible characters)."
    public static let defaultSchedule = "41 4 * * *"
    public static let options: [JobOption] = [
        JobOption("min_length", default: "3", help: "fewest characters (as a person counts them)"),
        JobOption("max_length", default: "30", help: "most characters"),
        JobOption("pattern", default: "[a-z0-9_.]+", help: "allowed characters, as a regular expression the whole username must match"),
        JobOption("reserved_file", default: "", help: "reserved names, one a line (default: the built-in list, as in config/reserved-usernames.txt)", isPath: true),
        JobOption("max_mixed_script", default: "highly-restrictive",
                  help: "worst mix of scripts allowed: ascii, single-script, highly-restrictive, moderately-restrictive, minimally-restrictive"),
        JobOption("rules", default: UsernameRule.allCases.map(\.rawValue).joined(separator: ","), help: "the rules to apply, comma-separated"),
        JobOption("page_size", default: "5000", help: "profiles read per page"),
    ]

    /// `[job.username-check]`, read once.
    public struct Settings: Sendable {
        public let policy: UsernamePolicy
        /// Profiles read per page.
        public let pageSize: Int
    }

    public static func settings(_ options: JobOptions, config: StewardConfig) throws(ConfigError) -> Settings {
        var policy = UsernamePolicy()
        policy.minLength = try options.integer("min_length", in: 1...Int.max)
        policy.maxLength = try options.integer("max_length", in: 1...Int.max)
        policy.pattern = try options.read("pattern") { pattern in
            (try? Regex(pattern)) == nil ? .failure(JobOptions.Problem("not a valid regular expression")) : .success(pattern)
        }
        let path = try options.read("reserved_file") { path in
            path.isEmpty || FileManager.default.isReadableFile(atPath: path) ? .success(path) : .failure(JobOptions.Problem("cannot read \(path)"))
        }
        policy.maxRestrictionLevel = try options.read("max_mixed_script") { name in
            UnicodeChecks.RestrictionLevel(name: name).map { .success($0) } ?? .failure(JobOptions.Problem("not a restriction level"))
        }
        policy.rules = try options.read("rules") { value in
            var rules: Set<UsernameRule> = []
            for name in value.split(separator: ",").map({ $0.trimmingWhitespace() }) {
                guard let rule = UsernameRule(rawValue: name) else {
                    return .failure(JobOptions.Problem("unknown rule \(name) (known: \(UsernameRule.allCases.map(\.rawValue).joined(separator: ", ")))"))
                }
                rules.insert(rule)
            }
            return .success(rules)
        }
        let pageSize = try options.integer("page_size", in: 100...100_000)
        if path.isEmpty {
            policy.setReserved(DefaultReservedNames.names)
        } else {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ConfigError(file: path, key: "[job.username-check] reserved_file", message: "cannot read the reserved names")
            }
            policy.setReserved(UsernamePolicy.parseReserved(text))
        }
        return Settings(policy: policy, pageSize: pageSize)
    }

    let policy: UsernamePolicy
    let pageSize: Int

    public init(settings: Settings) {
        policy = settings.policy
        pageSize = settings.pageSize
    }

    public func run(_ context: JobContext) async throws -> JobSummary {
        try UnicodeChecks.load()
        let db = context.database
        // Session-local work tables (the session is the job's own); quiet about "already exists" on later runs.
        let started = Date()
        try await db.run { c in
            // Room for the work tables in memory; only possible before the session first touches a temporary table.
            _ = try? c.query("select set_config('temp_buffers', '128MB', false) where not exists (select 1 from pg_class where relpersistence = 't' and relnamespace = pg_my_temp_schema())")
            try c.transaction { c in
                _ = try c.execute("""
                    set local client_min_messages = warning;
                    create temporary table if not exists steward_username_keys
                      (profile_id uuid not null, username text not null, folded text not null, skeleton text not null);
                    create temporary table if not exists steward_username_found
                      (profile_id uuid not null, username text not null, rule text not null, detail text not null);
                    drop index if exists steward_username_keys_folded, steward_username_keys_skeleton;
                    truncate steward_username_keys, steward_username_found;
                    """)
            }
        }
        let checker = try UsernameChecker(policy: policy)
        var after: UUID?
        var scanned = 0, withoutUsername = 0
        let pageSize = pageSize
        while true {
            // Keyset pagination: each page starts after the last id seen, straight off the primary key index.
            // Order by the uuid column itself (p.id), not by the text the select list makes of it: that would sort
            // every remaining row for each page, quadratic at scale. No "$1 is null or …" either, for the same reason.
            let page: [(UUID, String?)] = try await db.run { [after] c in
                let result = try after.map { try c.query("select p.id, p.username from public.profiles p where p.id > \($0)::uuid order by p.id limit \(pageSize)") }
                    ?? c.query("select p.id, p.username from public.profiles p order by p.id limit \(pageSize)")
                return try result.decode((UUID, String?).self)
            }
            var keyIDs: [UUID] = [], keyNames: [String] = [], folded: [String] = [], skeletons: [String] = []
            var foundIDs: [UUID] = [], foundNames: [String] = [], foundRules: [String] = [], details: [String] = []
            for (id, username) in page {
                guard let username else { withoutUsername += 1; continue }
                let (findings, keys) = checker.check(username)
                keyIDs.append(id); keyNames.append(username); folded.append(keys.folded); skeletons.append(keys.skeleton)
                for finding in findings {
                    foundIDs.append(id); foundNames.append(username); foundRules.append(finding.rule.rawValue); details.append(finding.detail)
                }
            }
            try await db.run { [keyIDs, keyNames, folded, skeletons, foundIDs, foundNames, foundRules, details] c in
                try c.query("insert into steward_username_keys select * from unnest(\(keyIDs), \(keyNames), \(folded), \(skeletons))")
                try c.query("insert into steward_username_found select * from unnest(\(foundIDs), \(foundNames), \(foundRules), \(details))")
            }
            scanned += page.count
            after = page.last?.0
            if page.count < pageSize { break }
        }

        context.logger.info("usernames scanned", [("profiles", String(scanned)), ("seconds", String(fixed: Date().timeIntervalSince(started), digits: 2))])
        let rules = policy.rules.map(\.rawValue)
        let dryRun = context.dryRun
        let recordStarted = Date()
        let result = try await db.run { c in try Self.collideAndRecord(c, rules: rules, dryRun: dryRun) }
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

    struct RecordResult: Sendable {
        var byRule: [String: Int64] = [:]
        var newCount: Int64 = 0
        var newLines: [[(String, String)]] = []
        var resolved: Int64 = 0
    }

    /// Finds collisions by grouping the keys, then brings `steward.username_findings` up to date (unless dry).
    static func collideAndRecord(_ c: Connection, rules: [String], dryRun: Bool) throws -> RecordResult {
        try c.execute("""
            create index steward_username_keys_folded on steward_username_keys (folded);
            create index steward_username_keys_skeleton on steward_username_keys (skeleton);
            analyze steward_username_keys;
            """)
        // Collisions by grouping the keys (never pairwise): same normal form, or same skeleton but another normal form.
        let collisions: [(String, SQLIdentifier, String, PostgresQuery, PostgresQuery)] = [
            ("case_duplicate", try SQLIdentifier("folded"), "same after case folding and NFKC as ", "true", "having count(*) > 1"),
            ("confusable", try SQLIdentifier("skeleton"), "looks like ", "o.folded <> k.folded", "having count(distinct folded) > 1"),
        ]
        for (rule, key, wording, differs, groups) in collisions where rules.contains(rule) {
            try c.query("""
                insert into steward_username_found
                select k.profile_id, k.username, \(rule), \(wording) ||
                       (select string_agg(format('%s (%s)', o.username, o.profile_id), ', ')
                        from (select * from steward_username_keys o where o.\(key) = k.\(key) and o.profile_id <> k.profile_id
                              and \(differs) order by o.profile_id limit 5) o)
                from steward_username_keys k
                where k.\(key) in (select \(key) from steward_username_keys group by \(key) \(groups))
                """)
        }
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
