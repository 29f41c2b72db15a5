import Foundation
import Postgres
import Storage
import Testing
import TestSupport

/// What real apps and operators do that a picture of the world leaves out: each case is a row of the cleanup's
/// promises, tried through the real job against the real database and the emulator.
@Suite("orphan-avatars against the world as it is (emulator)", .needsCluster)
struct WorldAsItIsTests {
    /// `ids[name]`: the storage.objects id of each object of `avatars` now.
    static func ids(_ w: AvatarWorld) throws -> [String: String] {
        var ids: [String: String] = [:]
        for row in try w.db.connectAsAdmin().query("select name, id::text from storage.objects where bucket_id = 'avatars'").rows {
            ids[try row.decode(String.self, at: 0)] = try row.decode(String.self, at: 1)
        }
        return ids
    }

    @Test("an avatar kept only in auth.users metadata (updateUser) is kept by the default run; a list that leaves the column out is refused, naming it; ignore_columns with a reason lets it go")
    func userMetadata() throws {
        try AvatarWorld.with(users: 3) { w in
            try w.storage.upload(["signup.png", "current.png", "oauth.png", "orphan.png"])
            try w.storage.age(2 * 86400)
            let admin = try w.db.connectAsAdmin()
            // The trigger copied the sign-up avatar once; the app's later updateUser({data: {avatar_url}}) changed only
            // the metadata; an OAuth provider's picture sits in identity data of auth.users too.
            try w.reference(0, "signup.png")
            try admin.query("update auth.users set raw_user_meta_data = raw_user_meta_data || jsonb_build_object('avatar_url', $1::text) where id = $2::uuid",
                            ["\(w.storage.url)/storage/v1/object/public/avatars/current.png", w.users[0]])
            try admin.query("update auth.users set raw_app_meta_data = raw_app_meta_data || '{\"picture\": \"avatars/oauth.png\"}'::jsonb where id = $1::uuid",
                            [w.users[1]])
            try w.storage.reset()

            // Narrowed to the profiles column: the sample of auth.users mentions two candidates; refused, nothing deleted.
            let (narrowed, _) = try w.run(["--force"], config: "reference_columns = public.profiles.avatar_url")
            #expect(narrowed.exitCode != 0, "\(narrowed.output)")
            #expect(narrowed.output.contains("auth.users.raw_user_meta_data mentions 1 candidate(s)"), "\(narrowed.output)")
            #expect(narrowed.output.contains("auth.users.raw_app_meta_data mentions 1 candidate(s)"), "\(narrowed.output)")
            #expect(try w.storage.objects() == ["signup.png", "current.png", "oauth.png", "orphan.png"])
            // A dry run says a real run would refuse, and exits 0.
            let (dry, drySummary) = try w.run(["--dry-run"], config: "reference_columns = public.profiles.avatar_url")
            #expect(dry.exitCode == 0 && drySummary["sample_would_refuse"] == 1, "\(dry.output)")

            // The default: every column, auth.users included. Only the true orphan goes; the summary says what was read.
            let (result, summary) = try w.run(["--force"])
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(try w.storage.objects() == ["signup.png", "current.png", "oauth.png"])
            #expect(summary["deleted"] == 1)
            #expect((summary["columns_read"] ?? 0) > 2 && (summary["values_read"] ?? 0) > 0 && (summary["bytes_read"] ?? 0) > 0, "\(summary)")
            #expect(result.stderr.contains("reading every column that can hold a reference"), "\(result.stderr.suffix(2000))")

            // Told that the metadata never holds a reference (with a reason), the run believes it and says so.
            let ignore = "reference_columns = public.profiles.avatar_url\nignore_columns = auth.users.raw_user_meta_data: test fixture, auth.users.raw_app_meta_data: test fixture\n"
            let (ignored, ignoredSummary) = try w.run(["--force"], config: ignore)
            #expect(ignored.exitCode == 0, "\(ignored.output)")
            #expect(ignored.stderr.contains("not read (ignore_columns)") && ignored.stderr.contains("reason=\"test fixture\""), "\(ignored.stderr.suffix(2000))")
            #expect(ignoredSummary["deleted"] == 2)
            #expect(try w.storage.objects() == ["signup.png"])
            FaultLedger.record("avatar referenced only in auth.users metadata", runs: 4, faults: 0, objectsChecked: 4,
                               losses: try w.storage.objects().contains("signup.png") ? 0 : 1)
        }
    }

    @Test("property: references spread over generated tables, jsonb paths, arrays and auth.users metadata keep their objects under the default; the true orphans go")
    func generatedLayouts() throws {
        var random = SeededGenerator.fromEnvironment()
        print("world as it is (column layouts): seed \(random.seed); replay with STEWARD_TEST_SEED=\(random.seed)")
        try AvatarWorld.with(users: 4) { w in
            let admin = try w.db.connectAsAdmin()
            let kinds = ["text", "varchar(300)", "jsonb", "json", "text[]", "jsonb[]", "char(120)"]
            var referenced: [String] = []
            var orphans: [String] = []
            for t in 0..<5 {
                let columns = (0..<Int.random(in: 1...3, using: &random)).map { _ in kinds.randomElement(using: &random)! }
                let schema = ["public", "app\(t)"].randomElement(using: &random)!
                let columnList = columns.enumerated().map { "c\($0.offset) \($0.element)" }.joined(separator: ", ")
                try admin.execute("create schema if not exists \(schema)")
                try admin.execute("create table \(schema).t\(t) (id serial primary key, \(columnList), n int)")
                try admin.execute("grant usage on schema \(schema) to public; grant select, update on all tables in schema \(schema) to public")
                for r in 0..<Int.random(in: 1...4, using: &random) {
                    let name = "t\(t)r\(r)-\(UInt32.random(in: 0...UInt32.max, using: &random)).png"
                    referenced.append(name)
                    let c = Int.random(in: 0..<columns.count, using: &random)
                    let value: String
                    switch columns[c] {
                    case "jsonb", "json": value = "{\"attachments\": [{\"path\": \"avatars/\(name)\", \"title\": \"x\"}]}"
                    case "text[]": value = "{\"\(name)\",other}"
                    case "jsonb[]": value = "{\"{\\\"src\\\": \\\"\(name)\\\"}\"}"
                    default: value = ["\(name)", "https://cdn.example.com/storage/v1/object/public/avatars/\(name)?t=1", "see \(name) here"].randomElement(using: &random)!
                    }
                    try admin.query("insert into \(unescaped: schema).t\(unescaped: String(t)) (c\(unescaped: String(c))) values ($1::\(unescaped: columns[c]))", [value])
                }
            }
            // Some in auth.users metadata.
            for (index, user) in w.users.enumerated() where Bool.random(using: &random) {
                let name = "meta\(index).png"
                referenced.append(name)
                try admin.query("update auth.users set raw_user_meta_data = jsonb_build_object('avatar_url', $1::text) where id = $2::uuid", [name, user])
            }
            orphans = (0..<6).map { "orphan\($0)-\(UInt16.random(in: 0...UInt16.max, using: &random)).png" }
            try w.storage.upload(referenced + orphans)
            try w.storage.age(2 * 86400)
            try w.storage.reset()
            let (result, summary) = try w.run(["--force"])
            #expect(result.exitCode == 0, "seed \(random.seed): \(result.output.suffix(2000))")
            let left = try w.storage.objects()
            let lost = Set(referenced).subtracting(left)
            #expect(lost.isEmpty, "seed \(random.seed): referenced objects deleted: \(lost.sorted())")
            #expect(left.isDisjoint(with: orphans), "seed \(random.seed): orphans kept: \(left.intersection(orphans).sorted())")
            #expect(summary["deleted"] == orphans.count, "seed \(random.seed): \(summary)")
            FaultLedger.record("generated reference layouts under the all-columns default", runs: 1, faults: 0, objectsChecked: referenced.count + orphans.count,
                               losses: lost.count, cases: referenced.count)
        }
    }

    @Test("a re-upload under the same name while a batch waits out Storage's 503 and Retry-After is not deleted by the retry: inside the grace, or another version")
    func reuploadDuringRetry() throws {
        try AvatarWorld.with(users: 1) { w in
            try w.storage.upload(["fresh.png", "upsert-aged.png", "orphan.png"])
            try w.storage.age(2 * 86400)
            let before = try Self.ids(w)
            try w.storage.reset()
            // The DELETE answered as the real server answers a database it cannot reach: 400 with statusCode "503",
            // and Retry-After: 3.
            try w.storage.faults(["answer_next": [["http": 400, "statusCode": "503", "error": "DatabaseError", "retry_after": 3]]])
            let job = try w.start(["--force"], config: "batch_size = 10")
            #expect(eventually(30) { ((try? w.storage.stats()["faults"] as? Int) ?? 0) >= 1 })
            let client = try w.storage.client()
            try client.upload(bucket: "avatars", path: "fresh.png", data: Array("new".utf8), contentType: "image/png", upsert: true)
            try client.upload(bucket: "avatars", path: "upsert-aged.png", data: Array("new".utf8), contentType: "image/png", upsert: true)
            // Made to look old again: only its version says it is another upload.
            try w.storage.age(2 * 86400, names: ["upsert-aged.png"])
            let result = job.wait(timeout: 60)
            #expect(result.exitCode == 0, "\(result.output.suffix(2000))")
            #expect(try w.storage.objects() == ["fresh.png", "upsert-aged.png"])
            #expect(result.stdout.contains("\"kept_changed_at_delete\":2"), "\(result.stdout)")
            // The re-uploads kept their id (an upsert updates the row); the audit names only the orphan.
            #expect(try Self.ids(w)["fresh.png"] == before["fresh.png"])
            #expect(try w.audited() == ["orphan.png"])
            FaultLedger.record("re-upload during a retry's Retry-After wait", runs: 1, faults: 1, objectsChecked: 3,
                               losses: 2 - (try w.storage.objects().count))
        }
    }

    @Test("three buckets of 4 candidates under max_per_run = 5: the run is refused, nothing deleted; --force deletes all 12")
    func brakeCountsTheRun() throws {
        try AvatarWorld.with(users: 1) { w in
            let admin = try w.db.connectAsAdmin()
            try admin.execute("insert into storage.buckets (id, name) values ('covers', 'covers'), ('banners', 'banners')")
            let client = try w.storage.client()
            for bucket in ["avatars", "covers", "banners"] {
                for i in 0..<4 { try client.upload(bucket: bucket, path: "o\(i).png", data: [1, 2, 3], contentType: "image/png") }
                for i in 0..<8 { try client.upload(bucket: bucket, path: "kept\(i).png", data: [1, 2, 3], contentType: "image/png") }
            }
            try w.storage.age(2 * 86400)
            try admin.execute("create table public.gallery (v text); insert into public.gallery select 'kept' || i || '.png' from generate_series(0, 7) i")
            let config = "buckets = avatars, covers, banners\nmax_per_run = 5\nmax_fraction = 0.5\n"
            let (refused, _) = try w.run([], config: config)
            #expect(refused.exitCode != 0)
            #expect(refused.output.contains("this run would delete 12 objects (4 in avatars, 4 in covers, 4 in banners); the limit is 5 a run (max_per_run)"), "\(refused.output)")
            #expect(try admin.query("select count(*) from storage.objects").scalar(Int.self) == 36)
            let (forced, summary) = try w.run(["--force"], config: config)
            #expect(forced.exitCode == 0, "\(forced.output)")
            #expect(summary["deleted"] == 12)
            #expect(try admin.query("select count(*) from storage.objects").scalar(Int.self) == 24)
        }
    }

    @Test("property: killed (-9) at generated points of a batch, then a re-upload under the same names: every deletion that happened has exactly one audit row, none that did not")
    func killAndReupload() throws {
        var random = SeededGenerator.fromEnvironment()
        print("world as it is (kill and re-upload): seed \(random.seed); replay with STEWARD_TEST_SEED=\(random.seed)")
        try AvatarWorld.with(users: 1) { w in
            let admin = try w.db.connectAsAdmin()
            var checked = 0, wrong: [String] = []
            for round in 0..<4 {
                let names = (0..<8).map { "r\(round)-\($0).png" }
                try w.storage.upload(names)
                try w.storage.age(2 * 86400, names: names)
                let original = try Self.ids(w).filter { names.contains($0.key) }
                try w.storage.reset()
                let delay = Int.random(in: 100...500, using: &random)
                try w.storage.faults(["delay_ms": delay])
                let job = try w.start(["--force"], config: "batch_size = 2\nmax_fraction = 1\n")
                // A generated moment: before any request, mid-request, between batches.
                let killAfter = Double.random(in: 0.2...3.0, using: &random)
                Thread.sleep(forTimeInterval: killAfter)
                job.kill(SIGKILL)
                _ = job.wait(timeout: 10)
                // Storage may still carry out the request that was in flight; let it finish before looking.
                Thread.sleep(forTimeInterval: Double(delay) / 1000 + 0.3)
                try w.storage.faults(["delay_ms": 0])
                // The user uploads again under some of the names (new objects, inside the grace).
                let again = names.filter { _ in Bool.random(using: &random) }
                let client = try w.storage.client()
                for name in again { try client.upload(bucket: "avatars", path: name, data: [9], contentType: "image/png", upsert: true) }
                let (rerun, _) = try w.run(["--force"], config: "batch_size = 2\nmax_fraction = 1\n")
                #expect(rerun.exitCode == 0, "seed \(random.seed) round \(round): \(rerun.output.suffix(1500))")
                let now = Set(try admin.query("select id::text from storage.objects").rows.map { try $0.decode(String.self, at: 0) })
                for name in names {
                    guard let id = original[name] else { continue }
                    let audits = try admin.query("select count(*) from steward.deleted_objects where object_id = $1::uuid and deleted_at is not null", [id]).scalar(Int.self)
                    let deleted = !now.contains(id)
                    checked += 1
                    if audits != (deleted ? 1 : 0) { wrong.append("\(name): deleted=\(deleted) audit rows=\(audits) (killed after \(killAfter) s)") }
                }
                // What the user uploaded again is there (inside the grace).
                let present = try w.storage.objects()
                for name in again where !present.contains(name) { wrong.append("\(name): the re-upload is gone") }
                #expect(try admin.query("select count(*) from steward.deleted_objects where deleted_at is null").scalar(Int.self) == 0)
            }
            #expect(wrong.isEmpty, "seed \(random.seed): \(wrong)")
            FaultLedger.record("killed (-9) at generated points, re-uploaded, rerun: the audit by identity", runs: 8, faults: 4, objectsChecked: checked,
                               losses: wrong.count)
        }
    }
}
