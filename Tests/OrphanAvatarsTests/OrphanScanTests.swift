import Foundation
import Postgres
import Storage
import Testing
import TestSupport

/// The scan's own reading of references and its pages of candidates, tried with generated inputs.
@Suite("orphan scan: the SQL reading and the pages of candidates", .needsCluster)
struct OrphanScanTests {
    /// Values close to the common URL: each differs from it in one piece (scheme, host, route, access, segments,
    /// query), so every test the SQL reading makes is met both ways.
    static func nearURLs(_ random: inout SeededGenerator, count: Int) -> [String] {
        let schemes = ["https", "http", "HTTPS", "h2+x.y-z", "1http", "ht tp", "", "https:"]
        let hosts = ["x.supabase.co", "", "a b", "a?b", "a#b", "h\u{3000}", "127.0.0.1:54321", "xn--bcher-kva.example", "a\tb"]
        let routes = ["storage/v1/object", "storage/v1/render/image", "Storage/v1/object", "storage/v2/object", "storage/v1/objects",
                      "storage/v1/render", "storage/v1/object/x", "storage/v1", "storage//v1/object", "x/storage/v1/object"]
        let access = ["public", "authenticated", "sign", "info", "Public", "avatars", ""]
        let segments = ["avatars", "img-1.jpeg", "a", "-", "_x", ".hidden", "a.b.c", "a b", "a%20b", "\u{E9}.png", "a?b", "a#b", "", "x+y"]
        let queries = ["", "?t=1", "?width=200&height=200", "?", "?a b", "?a/b", "?t=1?u=2", "#f", "?t=1#f", "?token=eyJ.a-b_c"]
        // Each piece is the valid one more often than not, so whole valid URLs come up as well as every near miss.
        func pick(_ items: [String]) -> String { Int.random(in: 0..<3, using: &random) > 0 ? items[0] : items[Int.random(in: 0..<items.count, using: &random)] }
        return (0..<count).map { _ in
            var parts = [pick(routes), pick(access), pick(segments), pick(segments)]
            if Int.random(in: 0..<4, using: &random) == 0 { parts.removeLast() }
            if Int.random(in: 0..<4, using: &random) == 0 { parts.append(pick(segments)) }
            let tail = parts.joined(separator: "/") + pick(queries)
            switch Int.random(in: 0..<10, using: &random) {
            case 0: return "//" + pick(hosts) + "/" + tail
            case 1: return "/" + tail
            case 2: return pick(schemes) + ":/" + pick(hosts) + "/" + tail
            default: return pick(schemes) + "://" + pick(hosts) + "/" + tail
            }
        }
    }

    @Test("property: the scan reads every generated reference exactly as the function does (plain names and the common URL in SQL)")
    func readingAgrees() throws {
        let replay = SeededGenerator.seedFromEnvironment
        print("orphan scan (reading): seed \(replay); replay with STEWARD_TEST_SEED=\(replay)")
        var random = SeededGenerator(seed: replay ^ 0x5CA7)
        var values = ReferenceWorld.generate(seed: replay ^ 0x5CA8, count: 6_000).cases.map(\.value)
        values += Self.nearURLs(&random, count: 6_000)
        values += ["img-1.jpeg", "https://x.supabase.co/storage/v1/object/public/avatars/img-1.jpeg?t=1",
                   "https://x.supabase.co/storage/v1/render/image/authenticated/avatars/a/b.png",
                   "https://x.supabase.co/storage/v1/object/sign/other/img.jpeg?token=a.b", "", " ", "a/b"]
        // A bucket whose own name is not plain: a URL's segment equal to it is not read in SQL (the shortcut for plain
        // buckets must not take it); and the usual scheme beside others.
        values += ["https://x.supabase.co/storage/v1/object/public/a!b/img.jpeg", "https://x.supabase.co/storage/v1/object/sign/a!b/i.png?token=1",
                   "https://x.supabase.co/storage/v1/object/public/a!b/f/i.png", "HTTPS://x/storage/v1/object/public/avatars/i.png",
                   "https:/storage/v1/object/public/avatars/i.png", "http+x://h/storage/v1/object/public/avatars/i.png"]
            // Generated values are mostly unusual ones; these make sure the common forms are a fair share too.
            values += (0..<800).map { "img-\($0).jpeg" } + (0..<800).map { "https://x.supabase.co/storage/v1/object/public/avatars/u\($0).png?t=\($0)" }
        try withTestDatabase { db in
            let c = try db.connect()
            try c.execute(ObjectReference.functionsSQL(schema: "pg_temp"))
            // Each value against the bucket it names (if any), `avatars` and one it does not name, read as the job
            // reads references (every name kept: the job's length limit is not what is compared here).
            try c.query("create temporary table vals as select x.v from unnest($1::text[]) as x(v)", [values])
            let reading = ObjectReference.readingSQL(source: "select 0::int2 as col, t.ctid as ref, t.v from vals t",
                                                     buckets: "array['avatars', 'other', 'public', 'a!b']", longestName: Int.max)
            try c.execute("create temporary table reading as " + reading)
            let markers = ObjectReference.markerNamesSQL(table: "reading", function: "pg_temp.steward_reference_names")
            let rows = try c.query("""
                with b as (select distinct bucket from (values ('avatars'), ('other'), ('public'), ('a!b')) as t(bucket)),
                k as (select t.ctid as ref, t.v, b.bucket from vals t cross join b),
                f as (select ref, bucket, name, false as loose from reading where name is not null
                      union all select ref, bucket, name || '?' || query, false from reading where query is not null
                      union all select ref, bucket, name, loose from (\(unescaped: markers)) m),
                got as (select f.ref, f.bucket, array_agg(row(f.name, f.loose)::text order by row(f.name, f.loose)::text collate "C") as rows
                        from f group by f.ref, f.bucket),
                direct as (select k.v, k.bucket, coalesce(g.rows, '{}') as rows,
                                  not exists (select 1 from reading r where r.ref = k.ref and r.bucket = k.bucket and r.name is null) as read_in_sql,
                                  array(select t from (select row(x.name, x.loose)::text as t
                                                       from pg_temp.steward_reference_names(k.v, k.bucket) x) r order by t collate "C") as expected
                           from k left join got g on g.ref = k.ref and g.bucket = k.bucket)
                select v, bucket, rows::text, expected::text, read_in_sql from direct where rows is distinct from expected
                union all
                select '', 'read in SQL', count(*) filter (where read_in_sql)::text, count(*)::text, true from direct
                """).rows
            // The candidates' and the dangling report's reading of the table: each value read in SQL has, in each bucket
            // it names, one row, its primary name holds no `?` and its query (if any) is neither empty nor holds one.
            let broken = try c.query("""
                select count(*) from (select ref, bucket, count(*) as rows, bool_or(strpos(name, '?') > 0 or query = '' or strpos(query, '?') > 0) as odd
                                      from reading where common group by ref, bucket) x
                where rows <> 1 or odd
                """).scalar(Int.self)
            #expect(broken == 0, "STEWARD_TEST_SEED=\(replay): \(broken) value(s) without exactly one row of a primary name and query")
            let differing = try rows.dropLast().map { "\(try $0.decode(String.self, at: 0).debugDescription) in \(try $0.decode(String.self, at: 1)): "
                + "scan \(try $0.decode(String.self, at: 2)), function \(try $0.decode(String.self, at: 3))" }
            #expect(differing.isEmpty, "STEWARD_TEST_SEED=\(replay): \(differing.count) value(s) read differently: \(differing.prefix(5))")
            // Both ways are taken often: the shortcut is not dead, nor is everything left to it.
            let readInSQL = Int(try rows.last?.decode(String.self, at: 2) ?? "0") ?? 0
            let total = Int(try rows.last?.decode(String.self, at: 3) ?? "0") ?? 0
            #expect(readInSQL > total / 20 && readInSQL < total - total / 20, "read in SQL: \(readInSQL) of \(total)")
            FaultLedger.record("orphan scan: SQL reading against the function", runs: 1, faults: 0, objectsChecked: total,
                               losses: differing.count, cases: values.count)
        }
    }

    /// Whether `value` (as written or percent-decoded, in NFC or NFD) holds `name`'s last segment (in NFC or NFD).
    static func mentions(_ value: String, _ name: String) -> Bool {
        let segment = String(name.split(separator: "/").last ?? "")
        let texts = [value, value.removingPercentEncoding ?? value].flatMap { [$0, $0.precomposedStringWithCanonicalMapping, $0.decomposedStringWithCanonicalMapping] }
        let patterns = [segment, segment.precomposedStringWithCanonicalMapping, segment.decomposedStringWithCanonicalMapping]
        return patterns.contains { pattern in texts.contains { Array($0.utf8).firstRange(of: Array(pattern.utf8)) != nil } }
    }

    /// True when some run of base64 characters in `value` (either alphabet, any length from 2, decoded from each of
    /// its first four characters) decodes to bytes holding `name`'s last segment: what the rule may also keep, a
    /// superset of the runs it decodes (it starts at the length the shortest candidate needs).
    static func mentionsEncoded(_ value: String, _ name: String) -> Bool {
        let segment = String(name.split(separator: "/").last ?? "")
        let patterns = [segment, segment.precomposedStringWithCanonicalMapping, segment.decomposedStringWithCanonicalMapping].map { Array($0.utf8) }
        let isBase64 = { (c: Character) in c.isASCII && (c.isLetter || c.isNumber || "+/-_".contains(c)) }
        var runs: [String] = []
        var current = ""
        for c in value { if isBase64(c) { current.append(c) } else { if !current.isEmpty { runs.append(current) }; current = "" } }
        if !current.isEmpty { runs.append(current) }
        for run in runs where run.count >= 2 {
            let standard = Array(run.replacing("-", with: "+").replacing("_", with: "/"))
            for offset in 0..<min(4, standard.count) {
                var chars = String(standard[offset...])
                switch chars.count % 4 {
                case 1: chars.removeLast()
                case 2: chars += "=="
                case 3: chars += "="
                default: break
                }
                guard let bytes = Data(base64Encoded: chars).map(Array.init) else { continue }
                if patterns.contains(where: { !$0.isEmpty && bytes.firstRange(of: $0) != nil }) { return true }
            }
        }
        return false
    }

    /// Object names that sort next to each other in every way that matters to a keyset: prefixes of each other,
    /// bytes just above and below, folders, letters of other scripts.
    static func names(_ random: inout SeededGenerator, count: Int) -> [String] {
        let stems = ["a", "a.jpeg", "a.jpeg.b", "a-", "a0", "a/b", "a/b/c", "A", "\u{E9}", "e\u{301}", "\u{3A9}", "z", "a b", "a(1)"]
        var out = Set<String>()
        while out.count < count {
            var name = stems[Int.random(in: 0..<stems.count, using: &random)]
            for _ in 0..<Int.random(in: 0...2, using: &random) {
                name += ["", "/", "-", ".", "x", "\u{E9}"][Int.random(in: 0..<6, using: &random)] + String(Int.random(in: 0..<40, using: &random))
            }
            out.insert(name)
        }
        return out.sorted()
    }

    @Test("pages: generated names at page boundaries; exactly the orphans go, each once and audited; referenced names stay",
          arguments: [1, 3, 7])
    func pages(batchSize: Int) throws {
        let replay = SeededGenerator.seedFromEnvironment
        print("orphan scan (pages, batch \(batchSize)): seed \(replay); replay with STEWARD_TEST_SEED=\(replay)")
        var random = SeededGenerator(seed: replay ^ UInt64(batchSize))
        let all = Self.names(&random, count: 24 + Int.random(in: 0..<12, using: &random))
        let referenced = all.filter { _ in Int.random(in: 0..<3, using: &random) > 0 }
        let unreferenced = all.filter { !referenced.contains($0) }
        var values: [String] = []
        try AvatarWorld.with(users: referenced.count) { w in
            try w.storage.upload(all)
            try w.storage.age(2 * 86400)
            let host = "https://abcdefghij.supabase.co"
            for (index, name) in referenced.enumerated() {
                let encoded = name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name
                let forms = [name, "\(host)/storage/v1/object/public/avatars/\(encoded)", "\(host)/storage/v1/object/public/avatars/\(encoded)?t=1",
                             "avatars/\(name)", "\(host)/storage/v1/render/image/public/avatars/\(encoded)?width=40"]
                let value = forms[Int.random(in: 0..<forms.count, using: &random)]
                values.append(value)
                try w.reference(index, value)
            }
            // Names no value mentions go (`a` is mentioned by `a.jpeg`'s value, `é` by `e\u{301}0`'s in NFC): a plain
            // model of the rule for these values (raw or percent-encoded, names in either normal form).
            let orphans = unreferenced.filter { name in !values.contains { Self.mentions($0, name) } }
            try w.storage.reset()
            let config = "batch_size = \(batchSize)\nmax_fraction = 1\nmax_per_run = 1000000\n" + (try w.onlyProfiles())
            let (dry, drySummary) = try w.run(["--dry-run"], config: config)
            #expect(dry.exitCode == 0, "\(dry.output)")
            let (result, summary) = try w.run([], config: config)
            #expect(result.exitCode == 0, "STEWARD_TEST_SEED=\(replay): \(result.output.suffix(2000))")
            let left = try w.storage.objects()
            let lost = referenced.filter { !left.contains($0) }
            #expect(lost.isEmpty, "STEWARD_TEST_SEED=\(replay): referenced object(s) deleted: \(lost)")
            // An orphan may stay only when a value's base64 reading mentions it (a one-letter name is in almost
            // any decoded text); every other orphan goes.
            let kept = Set(orphans).intersection(left)
            let keptWithoutMention = kept.filter { name in !values.contains { Self.mentionsEncoded($0, name) } }
            #expect(keptWithoutMention.isEmpty, "STEWARD_TEST_SEED=\(replay): orphans kept that no value mentions: \(keptWithoutMention)")
            let gone = Set(orphans).subtracting(kept)
            #expect(drySummary["candidates"] == gone.count, "STEWARD_TEST_SEED=\(replay): \(drySummary)")
            let mentionedGone = Set(unreferenced).subtracting(orphans).subtracting(left)
            #expect(mentionedGone.isEmpty, "STEWARD_TEST_SEED=\(replay): mentioned object(s) deleted: \(mentionedGone)")
            #expect(summary["deleted"] == gone.count)
            #expect(summary["batches"] == (gone.count + batchSize - 1) / batchSize, "\(summary)")
            let audit = try w.db.connect().query("select name, count(*)::int8 from steward.deleted_objects where deleted_at is not null group by name")
                .rows.map { (try $0.decode(String.self, at: 0), try $0.decode(Int64.self, at: 1)) }
            #expect(Set(audit.map(\.0)) == gone && audit.allSatisfy { $0.1 == 1 }, "STEWARD_TEST_SEED=\(replay): audit \(audit)")
            FaultLedger.record("orphan scan: pages at boundaries", runs: 2, faults: 0, objectsChecked: all.count, losses: lost.count, cases: all.count)
        }
    }

    @Test("a candidate deleted by someone else or overwritten after the scan is left out of its page: nothing recorded that Steward did not delete")
    func changedAfterScan() throws {
        try AvatarWorld.with(users: 1) { w in
            let orphans = (0..<40).map { String(format: "o%02d.jpeg", $0) }
            try w.seed(orphans: orphans, kept: 1)
            let admin = try w.db.connectAsAdmin()
            // Room for the slow first request inside the fence (the fence stays within the API roles' timeouts).
            for role in ["anon", "authenticated"] {
                try admin.execute("alter role \(role) in database \(try admin.quoteIdentifier(w.db.name)) set statement_timeout = '60s'")
            }
            // Storage is slow on the first batch: meanwhile one later candidate is deleted by hand and one rewritten.
            try w.storage.faults(["delay_ms": 1500])
            let job = try w.start([], config: "batch_size = 10\nmax_fraction = 1\n")
            #expect(eventually(30) {
                (try? admin.query("select count(*) from steward.deleted_objects").rows[0].decode(Int.self, at: 0)) ?? 0 > 0
            })
            try admin.execute("""
                set session_replication_role = replica;
                delete from storage.objects where bucket_id = 'avatars' and name = 'o35.jpeg';
                update storage.objects set updated_at = now() where bucket_id = 'avatars' and name = 'o36.jpeg';
                """)
            try w.storage.faults(["delay_ms": 0])
            let result = job.wait(timeout: 120)
            #expect(result.exitCode == 0, "\(result.output.suffix(2000))")
            let left = try w.storage.objects()
            #expect(left.contains("keep0.jpeg") && left.contains("o36.jpeg"), "\(left.sorted())")
            let audited = try w.audited()
            #expect(!audited.contains("o35.jpeg") && !audited.contains("o36.jpeg"), "\(audited.sorted())")
            #expect(audited == Set(orphans).subtracting(["o35.jpeg", "o36.jpeg"]))
        }
    }
}
