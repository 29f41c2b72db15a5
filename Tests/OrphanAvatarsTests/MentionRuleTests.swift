import Foundation
import Postgres
import Storage
import Testing
import TestSupport

/// Generated names and values that mention them, with the SQL half of the rule read from a real database.
struct MentionWorld {
    let cases: [MentionForms.Case]
    /// Names no value mentions: must go.
    let orphans: [String]

    /// With `base64`, values may carry names base64-encoded (read by the matcher, not by the SQL texts).
    static func generate(seed: UInt64, count: Int, orphans orphanCount: Int, base64: Bool = false) -> MentionWorld {
        var forms = MentionForms(seed: seed)
        var seen = Set<[UInt8]>()
        var cases: [MentionForms.Case] = [], orphans: [String] = []
        var previous: String?
        while cases.count < count {
            let name = forms.name(after: previous)
            guard seen.insert(Array(name.utf8)).inserted else { continue }
            previous = name
            cases.append(forms.mention(of: name, base64: base64))
        }
        while orphans.count < orphanCount { orphans.append(forms.orphanName()) }
        return MentionWorld(cases: cases, orphans: orphans)
    }

    static func describe(_ cases: [MentionForms.Case]) -> String {
        cases.prefix(4).map { "[\($0.how)] name \($0.name.debugDescription) value \($0.value.debugDescription)" }.joined(separator: "; ")
    }

    /// `expression` (an SQL `text[]` over `u.x`) for each of `inputs`, as bytes, in order.
    static func arrays(_ c: Connection, _ inputs: [String], _ expression: (String) -> String) throws -> [[[UInt8]]] {
        var out = Array(repeating: [[UInt8]](), count: inputs.count)
        try c.query("select u.i, y.t from unnest($1::text[]) with ordinality u(x, i) cross join lateral unnest(\(unescaped: expression("u.x"))) y(t)",
                    [inputs]).forEachRow { row in
            let index = Int(try row.string(0) ?? "") ?? 0
            out[index - 1].append(try row.withBytes(1) { $0.map(Array.init) ?? [] })
        }
        return out
    }
}

@Suite("the deletion rule: an object stays while any reference mentions it (generated, against the real database)")
struct MentionRuleTests {
    @Test("property: 6,000 generated mentions in any encoding and surrounding text each mention their object; orphans are mentioned by none", .needsCluster)
    func definition() throws {
        let seed = SeededGenerator.seedFromEnvironment
        print("mention rule (definition): seed \(seed); replay with STEWARD_TEST_SEED=\(seed)")
        let world = MentionWorld.generate(seed: seed, count: 6000, orphans: 2000)
        try withTestDatabase { db in
            let c = try db.connect()
            try c.execute(ObjectReference.functionsSQL(schema: "pg_temp"))
            let texts = try MentionWorld.arrays(c, world.cases.map(\.value)) { "array[\(ObjectMention.textSQL(value: $0))]" }
            let patterns = try MentionWorld.arrays(c, world.cases.map(\.name)) { ObjectMention.patternsSQL(name: $0) }
            let orphanPatterns = try MentionWorld.arrays(c, world.orphans) { ObjectMention.patternsSQL(name: $0) }
            // Bytes in bytes, the plain way: each value's texts hold one of its name's patterns.
            let missed = world.cases.indices.filter { i in
                !patterns[i].contains { pattern in texts[i].contains { $0.firstRange(of: pattern) != nil } }
            }
            #expect(missed.count == 0, "STEWARD_TEST_SEED=\(seed): \(missed.count) value(s) do not mention their object: \(MentionWorld.describe(missed.map { world.cases[$0] }))")
            // The matcher the job runs agrees, over all values at once; and finds no orphan in any of them.
            var matcher = MentionMatcher(expectedPatterns: world.cases.count)
            var orphanMatcher = MentionMatcher(expectedPatterns: world.orphans.count)
            patterns.joined().forEach { matcher.add($0) }
            orphanPatterns.joined().forEach { orphanMatcher.add($0) }
            for text in texts.joined() { matcher.scan(text); orphanMatcher.scan(text) }
            let unmatched = world.cases.indices.filter { i in !patterns[i].contains { matcher.wasFound($0) } }
            #expect(unmatched.count == 0, "STEWARD_TEST_SEED=\(seed): the matcher misses \(MentionWorld.describe(unmatched.map { world.cases[$0] }))")
            #expect(orphanMatcher.foundCount == 0, "STEWARD_TEST_SEED=\(seed): an orphan's name was found in a value")
            FaultLedger.record("mention rule: the definition, generated", runs: 1, faults: 0, objectsChecked: world.cases.count + world.orphans.count,
                               losses: missed.count + unmatched.count, cases: world.cases.count)
        }
    }

    @Test("property: the matcher finds exactly the patterns a plain search finds (small alphabet, many overlaps)")
    func matcher() {
        var random = SeededGenerator.fromEnvironment()
        print("mention rule (matcher): seed \(random.seed); replay with STEWARD_TEST_SEED=\(random.seed)")
        for round in 0..<200 {
            let word = { (g: inout SeededGenerator, length: ClosedRange<Int>) in
                (0..<Int.random(in: length, using: &g)).map { _ in [UInt8(ascii: "a"), UInt8(ascii: "b"), 0xC3, 0xA9][Int.random(in: 0..<4, using: &g)] }
            }
            let patterns = (0..<Int.random(in: 1...60, using: &random)).map { _ in word(&random, 0...7) }
            let texts = (0..<Int.random(in: 0...20, using: &random)).map { _ in word(&random, 0...40) }
            var matcher = MentionMatcher()
            patterns.forEach { matcher.add($0) }
            texts.forEach { matcher.scan($0) }
            for pattern in patterns {
                let expected = pattern.isEmpty || texts.contains { $0.firstRange(of: pattern) != nil }
                #expect(matcher.wasFound(pattern) == expected, "seed \(random.seed), round \(round): \(pattern) in \(texts)")
            }
        }
    }

    @Test("property: a short name (1 to 9 bytes) carried base64-encoded, padded or not, either alphabet, inside prose, is found")
    func shortBase64Names() {
        var random = SeededGenerator.fromEnvironment()
        print("mention rule (short base64): seed \(random.seed); replay with STEWARD_TEST_SEED=\(random.seed)")
        let alphabet = Array("abcxyzABCXYZ019:=._-~ é".utf8)
        for round in 0..<2000 {
            let name = (0..<Int.random(in: 1...9, using: &random)).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] }
            var encoded = Data(name).base64EncodedString()
            if Bool.random(using: &random) { encoded = String(encoded.prefix { $0 != "=" }) }
            if Bool.random(using: &random) { encoded = encoded.replacing("+", with: "-").replacing("/", with: "_") }
            let text = Array("Avatar: data:text/plain;base64,\(encoded).webp and more".utf8)
            var matcher = MentionMatcher()
            matcher.add(name)
            matcher.add(Array("some-other-much-longer-name.jpeg".utf8))
            matcher.scan(text)
            let found = matcher.wasFound(name)
            #expect(found, "seed \(random.seed), round \(round): \(name) as \(encoded)")
        }
    }

    @Test("property: 1,200 generated mentions through the real job and emulator: none deleted, every true orphan is; the summary matches the bucket and the audit", .needsCluster)
    func job() throws {
        let seed = SeededGenerator.seedFromEnvironment ^ 0x0B
        print("mention rule (job): seed \(seed); replay with STEWARD_TEST_SEED=\(seed ^ 0x0B)")
        let world = MentionWorld.generate(seed: seed, count: 1200, orphans: 300, base64: true)
        try AvatarWorld.with(users: 0) { w in
            let c = try w.db.connectAsAdmin()
            try c.execute("alter table auth.users disable trigger on_auth_user_created")
            let ids = world.cases.map { _ in UUID().uuidString.lowercased() }
            try c.query("insert into auth.users (id, created_at, updated_at) select i::uuid, now(), now() from unnest($1::text[]) i", [ids])
            try c.query("insert into public.profiles (id, avatar_url) select i::uuid, v from unnest($1::text[], $2::text[]) x(i, v)",
                        [ids, world.cases.map(\.value)])
            try c.execute("alter table auth.users enable trigger on_auth_user_created")
            let names = world.cases.map(\.name) + world.orphans
            try c.query("""
                insert into storage.objects (bucket_id, name, metadata, created_at, updated_at)
                select 'avatars', n, '{"size": 10}', now() - interval '2 days', now() - interval '2 days' from unnest($1::text[]) n
                """, [names])
            // The objects the exact reading names: the rest of the referenced ones stay by mention alone.
            try c.execute(ObjectReference.functionsSQL(schema: "pg_temp"))
            let named = try c.query("""
                select count(*) from unnest($1::text[]) n
                where n collate "C" in (select r.name from public.profiles p cross join lateral pg_temp.steward_reference_names(p.avatar_url, 'avatars') r
                                        where not r.loose)
                """, [world.cases.map(\.name)]).scalar(Int.self)

            let (result, summary) = try w.run(["--force"], config: "max_fraction = 1\nmax_per_run = 1000000\nbatch_size = 1000\n")
            #expect(result.exitCode == 0, "seed \(seed): \(result.output.suffix(2000))")
            let left = Set(try c.query("select name from storage.objects where bucket_id = 'avatars'").rows.map { Array(try $0.decode(String.self, at: 0).utf8) })
            let lost = world.cases.filter { !left.contains(Array($0.name.utf8)) }
            let orphansKept = world.orphans.filter { left.contains(Array($0.utf8)) }
            #expect(lost.count == 0, "STEWARD_TEST_SEED=\(seed ^ 0x0B): \(lost.count) mentioned object(s) deleted: \(MentionWorld.describe(lost))")
            #expect(orphansKept.count == 0, "STEWARD_TEST_SEED=\(seed ^ 0x0B): \(orphansKept.count) true orphan(s) kept: \(orphansKept.prefix(3))")
            // The summary tells what happened: what it deleted is gone and audited; what it kept by mention is there.
            let audited = try w.audited()
            #expect(summary["objects"] == names.count)
            #expect(summary["candidates"] == world.orphans.count, "\(summary)")
            #expect(summary["deleted"] == world.orphans.count && audited.count == world.orphans.count, "\(summary), \(audited.count) audited")
            #expect(Set(audited) == Set(world.orphans))
            #expect(summary["kept_by_mention"] == world.cases.count - named, "\(summary); \(named) named exactly")
            #expect(left.count == names.count - (summary["deleted"] ?? 0))
            FaultLedger.record("mention rule: generated mentions through the real job", runs: 1, faults: 0, objectsChecked: names.count,
                               losses: lost.count, cases: world.cases.count)
        }
    }
}

@Suite("the deletion rule: the reproductions", .needsCluster)
struct MentionReproductionTests {
    /// Each value a profile held, and the objects the run before this rule deleted although the value names them.
    static let forms: [(value: String, objects: [String])] = [
        ("cdn.example.com/storage/v1/object/public/avatars/a1.jpeg", ["a1.jpeg"]),
        ("abcdefghijklmnop.supabase.co/storage/v1/object/public/avatars/a2.jpeg", ["a2.jpeg"]),
        ("'a3.jpeg'", ["a3.jpeg"]),
        ("['a4.jpeg']", ["a4.jpeg"]),
        ("{'path': 'a5.jpeg'}", ["a5.jpeg"]),
        ("'https://h.supabase.co/storage/v1/object/public/avatars/a6.jpeg'", ["a6.jpeg"]),
        ("a7.jpeg\u{200E}", ["a7.jpeg"]),
        ("https://h.supabase.co/storage/v1/object/public/avatars/a8a.jpeg\nhttps://h.supabase.co/storage/v1/object/public/avatars/a8b.jpeg", ["a8a.jpeg", "a8b.jpeg"]),
        ("![x](https://h.supabase.co/storage/v1/object/public/avatars/a9.jpeg)", ["a9.jpeg"]),
        ("/_next/image?url=https%3A%2F%2Fh.supabase.co%2Fstorage%2Fv1%2Fobject%2Fpublic%2Favatars%2Fa10.jpeg&w=256&q=75", ["a10.jpeg"]),
        ("{\" a11.jpeg \"}", ["a11.jpeg"]),
        ("https://h.supabase.co/storage/v1/object/public/avatars/a12.jpeg\"", ["a12.jpeg"]),
        ("{\"path\":\"u\\/caf\\u00e9 13.jpeg\"}", ["u/café 13.jpeg"]),
        ("&lt;img src=&quot;https://h.supabase.co/storage/v1/object/public/avatars/a%2014.jpeg&quot;&gt;", ["a 14.jpeg"]),
        ("https://h.supabase.co/storage/v1/object/public/avatars/cafe\u{301}15.jpeg", ["caf\u{E9}15.jpeg"]),
        // PHP's htmlentities(…, ENT_HTML5) writes `.` and `_` as named references.
        ("https://h.supabase.co/storage/v1/object/public/avatars/a16&period;jpeg", ["a16.jpeg"]),
        ("my&lowbar;photo17&period;png", ["my_photo17.png"]),
        // Carried base64-encoded: an image proxy's URL, a serverless image handler's request path, a data URI.
        ("https://img.example.com/insecure/rs:fill:256:256/" + base64URL("https://h.supabase.co/storage/v1/object/public/avatars/b18.jpeg") + ".webp", ["b18.jpeg"]),
        ("https://d123.cloudfront.net/" + Data(#"{"bucket":"avatars","key":"b19.jpeg","edits":{"resize":{"width":200}}}"#.utf8).base64EncodedString(), ["b19.jpeg"]),
        ("data:application/json;base64," + Data(#"{"path":"folder/b20.png"}"#.utf8).base64EncodedString(), ["folder/b20.png"]),
    ]

    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test("the forms that lost objects before: every object a value mentions stays; the orphans beside them go; the log calls kept only what is there")
    func reproductions() throws {
        let objects = Self.forms.flatMap(\.objects)
        try AvatarWorld.with(users: Self.forms.count) { w in
            let orphans = (0..<5).map { "really-gone-\($0).jpeg" }
            try w.storage.upload(objects + orphans)
            try w.storage.age(2 * 86400)
            for (index, form) in Self.forms.enumerated() { try w.reference(index, form.value) }
            try w.storage.reset()
            let (dry, drySummary) = try w.run(["--dry-run"], config: "max_fraction = 1\n")
            #expect(dry.exitCode == 0, "\(dry.output)")
            #expect(drySummary["candidates"] == orphans.count, "\(drySummary)")
            let (result, summary) = try w.run(config: "max_fraction = 1\n")
            #expect(result.exitCode == 0, "\(result.output)")
            let left = Set(try w.db.connect().query("select name from storage.objects where bucket_id = 'avatars'").rows.map { Array(try $0.decode(String.self, at: 0).utf8) })
            let lost = objects.filter { !left.contains(Array($0.utf8)) }
            #expect(lost.count == 0, "mentioned objects deleted: \(lost)")
            #expect(orphans.allSatisfy { !left.contains(Array($0.utf8)) })
            let audited = try w.audited()
            #expect(summary["deleted"] == orphans.count && audited == Set(orphans), "\(summary)")
            #expect((summary["kept_by_mention"] ?? 0) > 0, "\(summary)")
            // The objects the log names as kept by mention are there.
            let line = result.stderr.split(separator: "\n").first { $0.contains("some reference mentions") }.map(String.init) ?? ""
            #expect(!line.isEmpty, "\(result.stderr)")
            for object in objects where line.contains(object) { #expect(left.contains(Array(object.utf8)), "\(object) logged as kept, but gone") }
            FaultLedger.record("mention rule: the reproductions", runs: 2, faults: 0, objectsChecked: objects.count + orphans.count,
                               losses: lost.count, cases: Self.forms.count)
        }
    }
}

@Suite("the deletion rule: hostile and awkward references", .needsCluster)
struct MentionHostileTests {
    @Test("references read through a view in a parallel plan (force_parallel_mode): the decoding does not fail the run")
    func parallelPlan() throws {
        try AvatarWorld.with(users: 3) { w in
            try w.storage.upload(["p1.jpeg", "p2 x.jpeg", "gone.jpeg"])
            try w.storage.age(2 * 86400)
            try w.reference(0, "https://h.supabase.co/storage/v1/object/public/avatars/p1.jpeg?a=1&b=2")
            try w.reference(1, "p2%20x.jpeg")
            let admin = try w.db.connectAsAdmin()
            try w.db.connect().execute("create view public.avatar_refs as select avatar_url from public.profiles")
            try admin.execute("alter database \(try admin.quoteIdentifier(w.db.name)) set force_parallel_mode = on")
            try w.storage.reset()
            let (result, summary) = try w.run(["--force"], config: "references = public.avatar_refs.avatar_url\n")
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(try w.storage.objects() == ["p1.jpeg", "p2 x.jpeg"])
            #expect(summary["deleted"] == 1, "\(summary)")
        }
    }

    @Test("a folder the dashboard made (its .emptyFolderPlaceholder) stays; an unmentioned file beside it goes")
    func folderPlaceholders() throws {
        try AvatarWorld.with(users: 1) { w in
            try w.storage.upload(["team/.emptyFolderPlaceholder", "team/old.png", "kept.png"])
            try w.storage.age(2 * 86400)
            try w.reference(0, "kept.png")
            try w.storage.reset()
            let (result, summary) = try w.run(["--force"])
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(Set(try w.storage.objects()) == ["team/.emptyFolderPlaceholder", "kept.png"])
            #expect(summary["deleted"] == 1, "\(summary)")
        }
    }

    @Test("without a second connection the mention pass reads both halves on its own: the same objects stay and go")
    func oneConnection() throws {
        try AvatarWorld.with(users: 0) { w in
            let c = try w.db.connectAsAdmin()
            try c.execute("alter table auth.users disable trigger on_auth_user_created")
            // Enough rows for several pages, so both halves hold values.
            let ids = (0..<2000).map { _ in UUID().uuidString.lowercased() }
            let values = ids.indices.map { "{\"avatar\": \"https://cdn.example.com/u/\($0)/pic-\($0).png\"}" }
            try c.query("insert into auth.users (id, created_at, updated_at) select i::uuid, now(), now() from unnest($1::text[]) i", [ids])
            try c.query("insert into public.profiles (id, avatar_url) select i::uuid, v from unnest($1::text[], $2::text[]) x(i, v)", [ids, values])
            try c.execute("alter table auth.users enable trigger on_auth_user_created")
            let kept = ids.indices.map { "pic-\($0).png" }, gone = (0..<50).map { "orphan-\($0)-x.png" }
            try c.query("""
                insert into storage.objects (bucket_id, name, metadata, created_at, updated_at)
                select 'avatars', n, '{"size": 10}', now() - interval '2 days', now() - interval '2 days' from unnest($1::text[]) n
                """, [kept + gone])
            #expect(try c.query("select pg_relation_size('public.profiles') / 8192").scalar(Int.self) > 2)
            let (result, summary) = try w.run(["--force"], config: "max_fraction = 1\n", environment: ["STEWARD_TEST_ONE_CONNECTION": "1"])
            #expect(result.exitCode == 0, "\(result.output.suffix(1500))")
            #expect(summary["kept_by_mention"] == kept.count && summary["deleted"] == gone.count, "\(summary)")
            let left = Set(try c.query("select name from storage.objects where bucket_id = 'avatars'").rows.map { try $0.decode(String.self, at: 0) })
            #expect(left == Set(kept))
        }
    }

    @Test("a reference of 600 kB of escapes around a URL: the run ends within a minute, keeps what the value mentions and deletes the orphan")
    func largeValue() throws {
        try AvatarWorld.with(users: 2) { w in
            try w.storage.upload(["big.jpeg", "small.jpeg", "gone.jpeg"])
            try w.storage.age(2 * 86400)
            let value = String(repeating: "%25", count: 100_000) + " https%3A%2F%2Fh.supabase.co%2Fstorage%2Fv1%2Fobject%2Fpublic%2Favatars%2Fbig.jpeg "
                + String(repeating: "&amp;\\u0041", count: 30_000)
            try w.reference(0, value)
            try w.reference(1, "small.jpeg")
            try w.storage.reset()
            let started = Date()
            let (result, summary) = try w.run(["--force"])
            #expect(result.exitCode == 0, "\(result.output.suffix(1500))")
            #expect(Date().timeIntervalSince(started) < 60)
            #expect(try w.storage.objects() == ["big.jpeg", "small.jpeg"])
            #expect(summary["deleted"] == 1, "\(summary)")
        }
    }
}
