import Foundation
import Postgres
import Storage
import Testing
import TestSupport

/// Generated worlds: objects with random names, profiles pointing at them in every form apps store, orphans next
/// to them, and the real job run against the real database and the Storage emulator.
struct ReferenceWorld {
    let cases: [ReferenceForms.Case]
    /// Unreferenced objects no generated reference can name: must be deleted.
    let orphans: [String]
    /// The NFD twins of referenced NFC names (different bytes, canonically equivalent): a value that mentions the name
    /// mentions its twin in NFD, so both stay.
    let twins: [String]

    /// The seed: `STEWARD_TEST_SEED` to replay a failure, otherwise a fresh one (printed).
    static func seed() -> UInt64 { sessionSeed }

    /// One seed a test process: the scan and the re-check tests see the same generated cases.
    static let sessionSeed: UInt64 = SeededGenerator.seedFromEnvironment

    static func generate(seed: UInt64, count: Int) -> ReferenceWorld {
        var forms = ReferenceForms(seed: seed)
        var seen = Set<[UInt8]>()
        var cases: [ReferenceForms.Case] = [], orphans: [String] = [], twins: [String] = []
        while cases.count < count {
            let name = forms.name()
            guard seen.insert(Array(name.utf8)).inserted else { continue }
            cases.append(forms.reference(to: name))
            orphans.append(forms.orphanName())
            // A twin only when the last segment itself changes: no reference holds decomposed characters.
            let last = String(name.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
            let twin = name.decomposedStringWithCanonicalMapping
            if Array(last.decomposedStringWithCanonicalMapping.utf8) != Array(last.utf8), seen.insert(Array(twin.utf8)).inserted {
                twins.append(twin)
            }
        }
        return ReferenceWorld(cases: cases, orphans: orphans, twins: twins)
    }

    var allNames: [String] { cases.map(\.name) + orphans + twins }

    /// Users and profiles (one per case, no reference yet) and every object, two days old, straight into the tables.
    func install(_ w: AvatarWorld) throws -> [String] {
        let c = try w.db.connectAsAdmin()
        try c.execute("alter table auth.users disable trigger on_auth_user_created")
        let ids = (0..<cases.count).map { _ in UUID().uuidString.lowercased() }
        try c.query("insert into auth.users (id, created_at, updated_at) select i::uuid, now(), now() from unnest($1::text[]) i", [ids])
        try c.query("insert into public.profiles (id) select i::uuid from unnest($1::text[]) i", [ids])
        try c.execute("alter table auth.users enable trigger on_auth_user_created")
        try c.query("""
            insert into storage.objects (bucket_id, name, metadata, created_at, updated_at)
            select 'avatars', n, '{"size": 10}', now() - interval '2 days', now() - interval '2 days' from unnest($1::text[]) n
            """, [allNames])
        return ids
    }

    /// Points profile `ids[i]` at `cases[i].value` for the chosen cases, in one transaction on `c`.
    func reference(_ c: Connection, ids: [String], only chosen: [Int]) throws {
        try c.query("update public.profiles p set avatar_url = x.v from unnest($1::text[], $2::text[]) x(i, v) where p.id = x.i::uuid",
                    [chosen.map { ids[$0] }, chosen.map { cases[$0].value }])
    }

    static func remaining(_ w: AvatarWorld) throws -> Set<[UInt8]> {
        Set(try w.db.connect().query("select name from storage.objects where bucket_id = 'avatars'").rows.map { Array(try $0.decode(String.self, at: 0).utf8) })
    }

    /// The referenced cases whose object is gone, and the orphans still there.
    func check(_ left: Set<[UInt8]>, referenced: [Int]) -> (lost: [ReferenceForms.Case], orphansKept: [String]) {
        let lost = referenced.map { cases[$0] }.filter { !left.contains(Array($0.name.utf8)) }
        let kept = orphans.filter { left.contains(Array($0.utf8)) }
        return (lost, kept)
    }

    static func describe(_ lost: [ReferenceForms.Case]) -> String {
        lost.prefix(5).map { "[\($0.form)] name \($0.name.debugDescription) value \($0.value.debugDescription)" }.joined(separator: "; ")
    }
}

@Suite("reference forms: no referenced object is ever a candidate (generated, against the real job)")
struct ReferenceFormsTests {
    static let cases = 2500
    static let jobConfig = "max_fraction = 1\nmax_per_run = 1000000\nbatch_size = 1000\n"

    @Test("property: references in every form, read by the scan, keep their objects and their NFD twins; true orphans go", .needsCluster)
    func scan() throws {
        let seed = ReferenceWorld.seed()
        print("reference forms (scan): seed \(seed); replay with STEWARD_TEST_SEED=\(seed)")
        let world = ReferenceWorld.generate(seed: seed, count: Self.cases)
        try AvatarWorld.with(users: 0) { w in
            let ids = try world.install(w)
            try world.reference(try w.db.connectAsAdmin(), ids: ids, only: Array(world.cases.indices))
            let (result, summary) = try w.run(["--force"], config: Self.jobConfig)
            #expect(result.exitCode == 0, "seed \(seed): \(result.output.suffix(2000))")
            let (lost, orphansKept) = world.check(try ReferenceWorld.remaining(w), referenced: Array(world.cases.indices))
            #expect(lost.isEmpty, "seed \(seed): \(lost.count) referenced object(s) deleted: \(ReferenceWorld.describe(lost))")
            #expect(orphansKept.isEmpty, "seed \(seed): \(orphansKept.count) true orphan(s) kept: \(orphansKept.prefix(5))")
            let left = try ReferenceWorld.remaining(w)
            let twinsGone = world.twins.filter { !left.contains(Array($0.utf8)) }
            #expect(twinsGone.isEmpty, "seed \(seed): NFD twins of mentioned names deleted: \(twinsGone.prefix(3))")
            let notStorage = world.cases.filter { !$0.understood }.count
            #expect((summary["unrecognised_references"] ?? 0) >= notStorage, "seed \(seed)")
            #expect(summary["deleted"] == world.orphans.count, "seed \(seed): \(summary)")
            #expect((summary["kept_by_mention"] ?? 0) >= world.twins.count, "seed \(seed): \(summary)")
            #expect(result.stderr.contains("references not understood for certain") == (notStorage > 0))
            FaultLedger.record("reference forms: property test", runs: 1, faults: 0, objectsChecked: world.allNames.count,
                               losses: lost.count, cases: world.cases.count)

            // The opt-in trigger holds the same definition: the installed copy reads every value alike, and every
            // value whose object the job kept may be saved again.
            let applied = try StewardProcess.run(["migrate", "--database-url", w.db.url, "--include", TestEnvironment.root + "/sql/optional/avatar-integrity"])
            #expect(applied.exitCode == 0, "\(applied.output)")
            let c = try w.db.connectAsAdmin()
            try c.execute(ObjectReference.functionsSQL(schema: "pg_temp"))
            let differing = try c.query("""
                select v from unnest($1::text[]) v
                where array(select row(name, loose)::text from steward.reference_names(v, 'avatars') order by row(name, loose)::text collate "C")
                      is distinct from array(select row(name, loose)::text from pg_temp.steward_reference_names(v, 'avatars') order by row(name, loose)::text collate "C")
                """, [world.cases.map(\.value)]).rows.map { try $0.decode(String.self, at: 0) }
            #expect(differing.isEmpty, "seed \(seed): the trigger's copy reads differently: \(differing.prefix(3))")
            var refused: [String] = []
            for (index, id) in ids.enumerated() {
                try c.query("update public.profiles set avatar_url = null where id = $1::uuid", [id])
                do {
                    try c.query("update public.profiles set avatar_url = $1 where id = $2::uuid", [world.cases[index].value, id])
                } catch let error as PostgresError where error.sqlState == "23503" {
                    refused.append(world.cases[index].value)
                }
            }
            #expect(refused.isEmpty, "seed \(seed): the trigger refused references to objects that exist: \(refused.prefix(3).map(\.debugDescription))")
            // References to objects that do not exist: refused exactly when the value is understood and names one.
            var forms = ReferenceForms(seed: seed ^ 0x5EED)
            let readings = try ReferenceReadings(c)
            var disagreements: [String] = []
            for id in ids.prefix(300) {
                let missing = forms.reference(to: forms.orphanName())
                let rows = try readings.rows(missing.value, bucket: "avatars")
                let expected = !rows.contains { $0.loose } && !rows.isEmpty
                var wasRefused = false
                do {
                    try c.query("update public.profiles set avatar_url = $1 where id = $2::uuid", [missing.value, id])
                } catch let error as PostgresError where error.sqlState == "23503" {
                    wasRefused = true
                }
                if wasRefused != expected { disagreements.append(missing.value) }
            }
            #expect(disagreements.isEmpty, "seed \(seed): trigger and definition disagree on \(disagreements.prefix(3).map(\.debugDescription))")
            FaultLedger.record("reference forms: trigger agrees with the scan", runs: 1, faults: 0, objectsChecked: ids.count,
                               losses: refused.count + disagreements.count, cases: world.cases.count * 2 + 300)
        }
    }

    @Test("property: the same forms written after the scan are caught by the re-check before the batch or inside the fence", .needsCluster)
    func recheck() throws {
        let seed = ReferenceWorld.seed()
        print("reference forms (re-check): seed \(seed); replay with STEWARD_TEST_SEED=\(seed)")
        let world = ReferenceWorld.generate(seed: seed, count: Self.cases)
        try AvatarWorld.with(users: 0) { w in
            let ids = try world.install(w)
            let admin = try w.db.connectAsAdmin()
            // Room for a slow first request inside the fence (the fence stays within the API roles' timeouts).
            for role in ["anon", "authenticated"] {
                try admin.execute("alter role \(role) in database \(try admin.quoteIdentifier(w.db.name)) set statement_timeout = '60s'")
            }
            let batch = 200
            // The first batch is deleted before the app writes anything: its objects are not referenced here.
            let firstBatch = Set(try admin.query("select name from storage.objects where bucket_id = 'avatars' order by name limit $1", [batch])
                .rows.map { Array(try $0.decode(String.self, at: 0).utf8) })
            let chosen = world.cases.indices.filter { !firstBatch.contains(Array(world.cases[$0].name.utf8)) }
            try w.storage.reset()
            try w.storage.faults(["delay_ms": 1500])
            let job = try w.start(["--force"], config: "max_fraction = 1\nmax_per_run = 1000000\nbatch_size = \(batch)\n")
            // While the first DELETE is out (the fence held), the app saves every profile; the saves wait for the fence.
            #expect(eventually(30) {
                (try? admin.query("select count(*) from pg_locks where relation = 'public.profiles'::regclass and mode = 'ShareLock' and granted")
                    .rows[0].decode(Int.self, at: 0)) ?? 0 > 0
            })
            let app = try w.db.connectAsAdmin()
            try app.transaction { c in try world.reference(c, ids: ids, only: chosen) }
            try w.storage.faults(["delay_ms": 0])
            let result = job.wait(timeout: 120)
            #expect(result.exitCode == 0, "seed \(seed): \(result.output.suffix(2000))")
            let (lost, orphansKept) = world.check(try ReferenceWorld.remaining(w), referenced: chosen)
            #expect(lost.isEmpty, "seed \(seed): \(lost.count) referenced object(s) deleted: \(ReferenceWorld.describe(lost))")
            #expect(orphansKept.isEmpty, "seed \(seed): \(orphansKept.count) true orphan(s) kept: \(orphansKept.prefix(5))")
            // Every object the scan found unreferenced (no profile pointed anywhere then) and that is still there was
            // kept by a re-check: the chosen names, and the NFD twins their values mention.
            let left = try ReferenceWorld.remaining(w)
            #expect(result.stdout.contains("\"kept_referenced_at_recheck\":\(left.count)"), "seed \(seed): \(left.count) left: \(result.stdout.suffix(800))")
            FaultLedger.record("reference forms: property test (re-check and fence)", runs: 1, faults: 1, objectsChecked: world.allNames.count,
                               losses: lost.count, cases: chosen.count)
        }
    }

    @Test("property: the definition itself, 20,000 generated references: each may name its object; an orphan beside it, never", .needsCluster)
    func definition() throws {
        // The generator runs on a seed derived from the session's; every message names the session's (the one to replay).
        let replay = ReferenceWorld.seed()
        let seed = replay ^ 0xDEF1
        print("reference forms (definition): seed \(replay); replay with STEWARD_TEST_SEED=\(replay)")
        let world = ReferenceWorld.generate(seed: seed, count: 20_000)
        try withTestDatabase { db in
            let c = try db.connect()
            try c.execute(ObjectReference.functionsSQL(schema: "pg_temp"))
            let rows = try c.query("""
                with cases as (select * from unnest($1::text[], $2::text[], $3::text[], $4::bool[]) as x(value, name, orphan, understood)),
                read as (select c.*, exists (select 1 from pg_temp.steward_reference_names(c.value, 'avatars') r
                                             where pg_temp.steward_reference_matches(r.name, r.loose, c.name)) as keeps,
                                     exists (select 1 from pg_temp.steward_reference_names(c.value, 'avatars') r
                                             where pg_temp.steward_reference_matches(r.name, r.loose, c.orphan)) as keeps_orphan
                         from cases c)
                select value, name, keeps, keeps_orphan, understood from read where not keeps or keeps_orphan
                """, [world.cases.map(\.value), world.cases.map(\.name), world.orphans, world.cases.map { $0.understood ? "t" : "f" }]).rows
            let lost = try rows.filter { try !$0.decode(Bool.self, at: 2) }.map { "\(try $0.decode(String.self, at: 0).debugDescription) → \(try $0.decode(String.self, at: 1).debugDescription)" }
            let orphanKept = try rows.filter { try $0.decode(Bool.self, at: 3) }.map { try $0.decode(String.self, at: 0).debugDescription }
            #expect(lost.isEmpty, "STEWARD_TEST_SEED=\(replay): \(lost.count) reference(s) do not keep their object: \(lost.prefix(5))")
            #expect(orphanKept.isEmpty, "STEWARD_TEST_SEED=\(replay): \(orphanKept.count) reference(s) keep an orphan: \(orphanKept.prefix(5))")
            FaultLedger.record("reference forms: the definition, generated", runs: 1, faults: 0, objectsChecked: world.cases.count * 2,
                               losses: lost.count, cases: world.cases.count)
        }
    }

    @Test("the installed trigger's copy of the definition is Steward's, byte for byte")
    func oneDefinition() throws {
        // The copy the trigger runs is the one the last file defining it leaves (released files are never edited).
        let folder = TestEnvironment.root + "/sql/optional/avatar-integrity"
        let texts = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".sql") }.sorted()
            .map { try String(contentsOfFile: folder + "/" + $0, encoding: .utf8) }
        let text = try #require(texts.last { $0.contains("function steward.reference_names(") })
        let bodies = text.components(separatedBy: "$body$")
        #expect(bodies.count == 5, "two functions quoted with $body$")
        #expect(bodies.count == 5 && bodies[1] == ObjectReference.namesFunctionBody, "steward.reference_names differs from ObjectReference.namesFunctionBody")
        #expect(bodies.count == 5 && bodies[3] == ObjectReference.matchesFunctionBody, "steward.reference_matches differs from ObjectReference.matchesFunctionBody")
    }
}

@Suite("reference forms: the reproductions", .needsCluster)
struct ReferenceReproductionTests {
    @Test("41 objects referenced in the forms real apps store: none deleted, the orphans beside them are")
    func fortyOne() throws {
        try AvatarWorld.with(users: 41) { w in
            let host = "https://abcdefghij.supabase.co"
            let forms: [(String) -> String] = [
                { "avatars/\($0)" }, { "\(host)/storage/v1/render/image/public/avatars/\($0)?width=200" },
                { "HTTPS://ABCDEFGHIJ.SUPABASE.CO/storage/v1/object/public/avatars/\($0)" }, { "/storage/v1/object/public/avatars/\($0)" },
                { "//abcdefghij.supabase.co/storage/v1/object/public/avatars/\($0)" }, { "storage/v1/object/public/avatars/\($0)" },
                { "\($0)?t=1700000000" }, { $0.replacingOccurrences(of: " ", with: "%20") }, { "\(host)/storage/v1/object/public/avatars/./\($0)" },
                { "\(host)/storage/v1/object/sign/avatars/\($0)?token=eyJhbGciOiJIUzI1NiJ9.e30.sig" },
                { "\(host)/storage/v1/object/authenticated/avatars/\($0)" }, { "https://images.example.com/storage/v1/object/public/avatars/\($0)#crop" },
                { " \($0)\n" }, { "\t\(host)/storage/v1/object/public/avatars/\($0)\r\n" },
            ]
            let names = (0..<41).map { $0 % 3 == 0 ? "k \($0).jpeg" : "k\($0).jpeg" }
            let orphans = (0..<10).map { "gone\($0).jpeg" }
            try w.storage.upload(names + orphans)
            try w.storage.age(2 * 86400)
            for (index, name) in names.enumerated() { try w.reference(index, forms[index % forms.count](name)) }
            try w.storage.reset()
            let (result, summary) = try w.run()
            #expect(result.exitCode == 0, "\(result.output)")
            let left = try w.storage.objects()
            let lost = names.filter { !left.contains($0) }
            #expect(lost.isEmpty, "referenced objects deleted: \(lost)")
            #expect(summary["deleted"] == orphans.count)
            #expect(summary["unrecognised_references"] == 0)
            FaultLedger.record("reference forms: the 41-object reproduction", runs: 1, faults: 0, objectsChecked: names.count + orphans.count,
                               losses: lost.count, cases: names.count)
        }
    }

    @Test("references of thousands of random characters do not stop the run; long names are never deleted")
    func longValues() throws {
        try AvatarWorld.with(users: 3) { w in
            var random = SeededGenerator(seed: 42)
            let noise = (0..<250).map { _ in String(format: "%016llx", random.next()) }.joined()
            let longName = String(noise.prefix(600)) + ".jpeg"
            try w.storage.upload(["loose.jpeg", "short-orphan.jpeg", "kept.jpeg"])
            let admin = try w.db.connectAsAdmin()
            try admin.query("""
                insert into storage.objects (bucket_id, name, metadata) values ('avatars', $1, '{"size": 10}')
                """, [longName])
            try w.storage.age(2 * 86400)
            try w.reference(0, noise + "/k.jpeg")
            try w.reference(1, "{\"p\":\"" + noise + "/loose.jpeg\"}")
            try w.reference(2, "kept.jpeg")
            let (result, summary) = try w.run(["--force"])
            #expect(result.exitCode == 0, "\(result.output.suffix(1500))")
            #expect(try w.storage.objects() == ["loose.jpeg", "kept.jpeg", longName])
            #expect(summary["deleted"] == 1)
            #expect(summary["unrecognised_references"] == 1)
        }
    }

    @Test("a reference written during the fence window (fence-b.jpeg and a newline) is seen by the fence: kept")
    func fenceWindow() throws {
        try AvatarWorld.with(users: 2) { w in
            let admin = try w.db.connectAsAdmin()
            for role in ["anon", "authenticated"] {
                try admin.execute("alter role \(role) in database \(try admin.quoteIdentifier(w.db.name)) set statement_timeout = '60s'")
            }
            try w.seed(orphans: ["fence-a.jpeg", "fence-b.jpeg"], kept: 1)
            // The app's transaction is open before the job starts: its row is not in the scan nor in the re-check.
            let app = try w.db.connectAsAdmin()
            try app.execute("begin")
            try app.query("update public.profiles set avatar_url = $1 where id = $2", ["fence-b.jpeg\n", w.users[1]])
            let job = try w.start(["--force"], config: "fence_wait = 5s")
            #expect(eventually(20) {
                (try? admin.query("select count(*) from pg_locks where relation = 'public.profiles'::regclass and mode = 'ShareLock' and not granted")
                    .rows[0].decode(Int.self, at: 0)) ?? 0 > 0
            }, "the fence waits for the app's transaction")
            try app.execute("commit")
            let result = job.wait(timeout: 60)
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(try w.storage.objects() == ["fence-b.jpeg", "keep0.jpeg"])
            #expect(result.stdout.contains("\"kept_referenced_at_recheck\":1"), "\(result.stdout)")
            FaultLedger.record("reference forms: written during the fence window", runs: 1, faults: 0, objectsChecked: 3,
                               losses: (try w.storage.objects()).contains("fence-b.jpeg") ? 0 : 1, cases: 1)
        }
    }

    @Test("an NFC/NFD pair: a value that mentions one keeps both; unmentioned, both go; the summary counts what Storage deleted", arguments: [false, true])
    func canonicalTwins(referenceOne: Bool) throws {
        try AvatarWorld.with(users: 1) { w in
            let nfc = "caf\u{E9}.jpeg", nfd = "cafe\u{301}.jpeg"
            #expect(nfc == nfd && Array(nfc.utf8) != Array(nfd.utf8), "Swift calls them equal; their bytes differ")
            try w.storage.upload([nfc, nfd, "other.jpeg"])
            try w.storage.age(2 * 86400)
            if referenceOne { try w.reference(0, nfc) } else { try w.reference(0, "other.jpeg") }
            try w.storage.reset()
            // Storage deletes only the first name of the request; the other is tried again.
            try w.storage.faults(["partial_delete_next": 1])
            let (result, summary) = try w.run(["--force"])
            #expect(result.exitCode == 0, "\(result.output)")
            let left = Set(try w.db.connect().query("select name from storage.objects where bucket_id = 'avatars'").rows.map { Array(try $0.decode(String.self, at: 0).utf8) })
            let storageDeleted = (try w.storage.stats()["deleted"] as? Int) ?? -1
            #expect(summary["deleted"] == storageDeleted, "the summary says \(summary["deleted"] ?? -1), Storage deleted \(storageDeleted)")
            if referenceOne {
                #expect(left == [Array(nfc.utf8), Array(nfd.utf8)])
                #expect(summary["kept_by_mention"] == 1, "\(summary)")
            } else {
                #expect(left == [Array("other.jpeg".utf8)])
            }
            #expect(storageDeleted == (referenceOne ? 1 : 2))
            let audited = Set(try w.db.connect().query("select name from steward.deleted_objects where deleted_at is not null").rows.map { Array(try $0.decode(String.self, at: 0).utf8) })
            #expect(audited == (referenceOne ? [Array("other.jpeg".utf8)] : [Array(nfc.utf8), Array(nfd.utf8)]))
        }
    }
}

/// The upload path `MVf://ệW2gwv3/` (its first folder ends with `:`, so it reads as a URL that is not Storage's) for
/// the object Storage holds as `MVf:/ệW2gwv3` (runs of `/` and the trailing `/` dropped), in NFC and in NFD bytes.
@Suite("reference forms: an upload path that reads as a URL", .needsCluster)
struct SchemeLikeUploadPathTests {
    static let nfc = "MVf:/\u{1EC7}W2gwv3"
    static let nfd = nfc.decomposedStringWithCanonicalMapping
    static func value(_ name: String) -> String { name.replacingOccurrences(of: ":/", with: "://") + "/" }

    @Test("the definition: the value may name its object, byte for byte (not its NFC/NFD twin), in both copies")
    func definition() throws {
        #expect(Array(Self.nfc.utf8) != Array(Self.nfd.utf8), "the two forms differ in bytes")
        #expect(Self.value(Self.nfc) == "MVf://\u{1EC7}W2gwv3/")
        try withTestDatabase { db in
            _ = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory])
            // A database that enabled the released files (1201, 1202) takes the newer definition on the next migrate.
            let folder = TestEnvironment.root + "/sql/optional/avatar-integrity"
            let released = NSTemporaryDirectory() + "steward-avatar-integrity-\(UUID().uuidString)/avatar-integrity"
            try FileManager.default.createDirectory(atPath: released, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: (released as NSString).deletingLastPathComponent) }
            for file in ["1201_avatar_object_exists.sql", "1202_avatar_reference_definition.sql"] {
                try FileManager.default.copyItem(atPath: folder + "/" + file, toPath: released + "/" + file)
            }
            let first = try StewardProcess.run(["migrate", "--database-url", db.url, "--include", released])
            #expect(first.exitCode == 0, "\(first.output)")
            let applied = try StewardProcess.run(["migrate", "--database-url", db.url, "--include", folder])
            #expect(applied.exitCode == 0, "\(applied.output)")
            let c = try db.connectAsAdmin()
            for readings in [try ReferenceReadings(c), try ReferenceReadings(c, schema: "steward")] {
                for (name, twin) in [(Self.nfc, Self.nfd), (Self.nfd, Self.nfc)] {
                    let value = Self.value(name)
                    #expect(try readings.mayName(value, bucket: "avatars", object: name), "\(readings.schema): \(value.debugDescription) keeps \(name.debugDescription)")
                    #expect(try !readings.mayName(value, bucket: "avatars", object: twin), "\(readings.schema): \(value.debugDescription) does not keep its twin")
                    #expect(try !readings.mayName(value, bucket: "avatars", object: "MVf:/other"), "\(readings.schema)")
                }
            }
        }
    }

    @Test("the job keeps the referenced object and its NFC/NFD twin (the value mentions both); the trigger lets the value be saved", arguments: [false, true])
    func job(decomposed: Bool) throws {
        try AvatarWorld.with(users: 1) { w in
            let applied = try StewardProcess.run(["migrate", "--database-url", w.db.url, "--include", TestEnvironment.root + "/sql/optional/avatar-integrity"])
            #expect(applied.exitCode == 0, "\(applied.output)")
            let (name, twin) = decomposed ? (Self.nfd, Self.nfc) : (Self.nfc, Self.nfd)
            try w.storage.upload([Self.nfc, Self.nfd, "gone.jpeg"])
            try w.storage.age(2 * 86400)
            try w.reference(0, Self.value(name))
            try w.storage.reset()
            let (result, summary) = try w.run(["--force"])
            #expect(result.exitCode == 0, "\(result.output)")
            let left = Set(try w.db.connect().query("select name from storage.objects where bucket_id = 'avatars'").rows.map { Array(try $0.decode(String.self, at: 0).utf8) })
            #expect(left == [Array(name.utf8), Array(twin.utf8)], "left: \(left.map { String(decoding: $0, as: UTF8.self).debugDescription })")
            // The value is not read as an exact name (it reads as a URL that is not Storage's): both stay by mention.
            #expect(summary["deleted"] == 1 && summary["kept_by_mention"] == 2, "\(summary)")
        }
    }
}

@Suite("the fence and the API roles' timeouts", .needsCluster)
struct FenceBudgetTests {
    @Test("Storage slower than the fence allows: the run stops after the first fenced timeout; a profile save meanwhile succeeds")
    func slowStorage() throws {
        try AvatarWorld.with(users: 2) { w in
            // The local roles: anon 3 s, authenticated 8 s. The fence may hold writes half of 3 s, lock wait included.
            try w.seed(orphans: (0..<6).map { "slow\($0).jpeg" }, kept: 1)
            try w.storage.faults(["delay_ms": 4000])
            let job = try w.start(["--force"], config: "batch_size = 2\nfence_request_timeout = 30s\n")
            let admin = try w.db.connectAsAdmin()
            #expect(eventually(20) {
                (try? admin.query("select count(*) from pg_locks where relation = 'public.profiles'::regclass and mode = 'ShareLock' and granted")
                    .rows[0].decode(Int.self, at: 0)) ?? 0 > 0
            })
            // A save as the app makes it, under anon's 3 s (the smallest API role timeout): it waits, then succeeds.
            let started = Date()
            var saved = false
            var saveError = ""
            do {
                try w.db.request(as: w.users[1]) { c in
                    try c.execute("set local statement_timeout = '3s'")
                    try c.query("update public.profiles set full_name = 'saved' where id = (select auth.uid())")
                }
                saved = true
            } catch {
                saveError = "\(error)"
            }
            let waited = Date().timeIntervalSince(started)
            let result = job.wait(timeout: 60)
            #expect(saved, "the profile save was cancelled after \(waited) s: \(saveError)")
            #expect(result.exitCode != 0, "\(result.output)")
            #expect(result.stdout.contains("ran into fence_request_timeout"), "\(result.output)")
            #expect(result.stderr.contains("fence timing lowered"), "the configured 30s is lowered, and said so: \(result.stderr)")
            #expect(result.stdout.contains("fence_request_timeout_ms=1125"), "\(result.stdout)")
            usleep(4_500_000)   // the emulator finishes the request it was given
            let deletes = (try w.storage.stats()["by_route"] as? [String: Int])?["DELETE /object"] ?? 0
            #expect(deletes == 1, "one request, then the run stopped (not one a batch)")
            #expect(try w.storage.objects().count >= 5, "at most the one batch that was sent is gone")
            // The next run settles the request that timed out (Storage carried it out) and finishes the job.
            try w.storage.faults(["delay_ms": 0])
            let (again, _) = try w.run(["--force"])
            #expect(again.exitCode == 0, "\(again.output)")
            #expect(again.stderr.contains("settled deletions left in flight"), "\(again.stderr)")
            #expect(try w.storage.objects() == ["keep0.jpeg"])
            #expect(try w.audited() == Set((0..<6).map { "slow\($0).jpeg" }))
        }
    }

    @Test("a save under the smallest timeout (1s) of a function's own settings (as PostgREST applies them) or of a role that may write the profiles, during the fence, succeeds; the log names what set the budget; nothing is lost",
          arguments: ["function", "role"])
    func writersTimeout(_ source: String) throws {
        try AvatarWorld.with(users: 2) { w in
            let admin = try w.db.connectAsAdmin()
            // The app's RPC, declared the way a team bounds a hot path; PostgREST reads the function's own settings and
            // applies them to the request's transaction before the call.
            // Or a back-office role that writes the profiles directly, with its own timeout.
            if source == "function" {
                try admin.execute("""
                    create function public.save_profile(name text) returns void language sql security invoker
                    set statement_timeout = '1s' as $$ update public.profiles set full_name = name where id = (select auth.uid()) $$;
                    grant execute on function public.save_profile(text) to authenticated;
                    """)
            } else {
                try admin.execute("""
                    do $$ begin if not exists (select from pg_roles where rolname = 'steward_test_backoffice') then
                      create role steward_test_backoffice login password 'steward-local'; end if; end $$;
                    alter role steward_test_backoffice bypassrls;   -- a back-office tool, not under the users' policies
                    alter role steward_test_backoffice set statement_timeout = '1s';
                    grant usage on schema public to steward_test_backoffice;
                    grant select, update on public.profiles to steward_test_backoffice;
                    """)
            }
            defer {
                if source == "role" {
                    try? admin.execute("""
                        revoke all on public.profiles from steward_test_backoffice; revoke usage on schema public from steward_test_backoffice;
                        alter role steward_test_backoffice reset all
                        """)
                }
            }
            try w.seed(orphans: (0..<6).map { "rpc\($0).jpeg" }, kept: 1)
            try w.storage.faults(["delay_ms": 3000])
            let app = try w.db.connect(as: source == "function" ? "authenticator" : "steward_test_backoffice")
            let job = try w.start(["--force"], config: "batch_size = 2\nfence_request_timeout = 30s\n")
            // Watched closely: with a 1 s limit the fence holds writes for half a second at most.
            let deadline = Date().addingTimeInterval(30)
            var fenced = false
            while !fenced && Date() < deadline {
                fenced = (try admin.query("select count(*) from pg_locks where relation = 'public.profiles'::regclass and mode = 'ShareLock' and granted")
                    .rows[0].decode(Int.self, at: 0)) > 0
                if !fenced { usleep(5_000) }
            }
            #expect(fenced, "the fence was never seen")
            let started = Date()
            var saveError = ""
            do {
                if source == "function" {
                    try w.db.request(as: w.users[1], on: app) { c in
                        try c.query("select set_config('statement_timeout', '1s', true)")
                        try c.query("select public.save_profile('saved by rpc')")
                    }
                } else {
                    try app.query("update public.profiles set full_name = 'saved by rpc' where id = $1::uuid", [w.users[1]])
                }
            } catch {
                saveError = "\(error)"
            }
            let waited = Date().timeIntervalSince(started)
            let result = job.wait(timeout: 60)
            #expect(saveError.isEmpty, "the save was cancelled after \(waited) s: \(saveError)")
            #expect(waited > 0.05, "the save queued behind the fence (\(waited) s)")
            let setBy = source == "function" ? "function public.save_profile(text)'s statement_timeout" : "steward_test_backoffice's statement_timeout"
            #expect(result.stderr.contains("set_by=\"\(setBy)\""), "the log names what set the budget: \(result.output)")
            #expect(result.stdout.contains("fence_request_timeout_ms=375"), "half of 1 s, minus the lock wait: \(result.stdout)")
            #expect(result.exitCode != 0 && result.stdout.contains("ran into fence_request_timeout"), "\(result.output)")
            #expect(try admin.query("select full_name from public.profiles where id = $1::uuid", [w.users[1]]).rows[0].decode(String?.self, at: 0) == "saved by rpc")
            usleep(3_500_000)   // the emulator finishes the request it was given
            try w.storage.faults(["delay_ms": 0])
            let (again, _) = try w.run(["--force"])
            #expect(again.exitCode == 0, "\(again.output)")
            #expect(try w.storage.objects() == ["keep0.jpeg"])
            #expect(try w.audited() == Set((0..<6).map { "rpc\($0).jpeg" }), "every deletion audited once the next run settles")
        }
    }
}
