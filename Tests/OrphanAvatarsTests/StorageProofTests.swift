import Foundation
import Postgres
import Storage
import Testing
import TestSupport

/// The Storage proof: a run deletes through a Storage API only after its canary upload showed up in this database.
@Suite("the Storage API proves it serves this database (emulator)", .needsCluster)
struct StorageProofTests {
    /// Every `.steward/` row left in `db`'s storage.objects, any bucket.
    static func canaryRows(_ db: TestDatabase) throws -> [String] {
        try db.connectAsAdmin().query("select bucket_id || '/' || name from storage.objects where name like '.steward/%' order by 1")
            .rows.map { try $0.decode(String.self, at: 0) }
    }

    /// The files the emulator keeps under `.steward/` (its bytes on disk).
    static func canaryFiles(_ storage: StorageEmulator) -> [String] {
        ((try? FileManager.default.subpathsOfDirectory(atPath: storage.dataDirectory)) ?? []).filter { $0.contains(".steward/") }
    }

    /// A copy of `db` under a new name, as a staging database restored from production is (same rows, same ids);
    /// the sessions in `db` (the emulator's) are ended first, as a copy needs.
    static func copy(_ db: TestDatabase) throws -> String {
        let name = "steward_copy_\(UInt32.random(in: 0...UInt32.max))"
        let admin = try Connection(ConnectionString(TestEnvironment.adminURL + "/postgres"))
        try admin.query("select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()", [db.name])
        try admin.execute("create database \(name) template \(db.name) owner postgres")
        return name
    }

    static func drop(_ name: String) {
        _ = try? Connection(ConnectionString(TestEnvironment.adminURL + "/postgres")).execute("drop database if exists \(name) with (force)")
    }

    @Test("a restored copy pointed at the original's Storage refuses, naming the URL, and deletes nothing there; the original's own run goes ahead")
    func restoredCopyRefuses() throws {
        try AvatarWorld.with { w in
            try w.seed(orphans: ["o1.jpeg", "o2.jpeg"], kept: 2)
            let before = try w.storage.objects()
            let copy = try Self.copy(w.db)
            defer { Self.drop(copy) }
            let copyURL = w.db.url.replacingOccurrences(of: "/\(w.db.name)", with: "/\(copy)")
            let result = try StewardProcess.run(["job", "run", "orphan-avatars", "--database-url", copyURL, "--storage-url", w.storage.url,
                                                 "--service-key-file", w.storage.serviceKeyFile, "--force"])
            #expect(result.exitCode == 1, "\(result.output)")
            #expect(result.output.contains("the Storage API at \(w.storage.url)/storage/v1 does not serve this database"), "\(result.output)")
            #expect(result.output.contains("did not appear in this database's storage.objects"), "\(result.output)")
            #expect(!result.output.contains(w.storage.serviceRoleKey))
            #expect(try w.storage.objects() == before, "every object of the original is still there")
            #expect(try w.storage.stats()["deleted"] as? Int == 0)
            #expect(try Self.canaryRows(w.db).isEmpty, "the canary went from the original too (best effort)")
            #expect(Self.canaryFiles(w.storage).isEmpty)

            let (run, summary) = try w.run()
            #expect(run.exitCode == 0, "\(run.output)")
            #expect(summary["deleted"] == 2)
        }
    }

    @Test("a normal run proves, deletes the true orphans, reports the proof's time, and leaves no canary object or row; a dry run proves and deletes nothing else")
    func normalRun() throws {
        try AvatarWorld.with { w in
            try w.seed(orphans: ["o1.jpeg", "o2.jpeg", "o3.jpeg"], kept: 3)
            let (dry, drySummary) = try w.run(["--dry-run"])
            #expect(dry.exitCode == 0, "\(dry.output)")
            #expect(drySummary["storage_proof_ms"] != nil, "\(dry.stdout)")
            #expect(try w.storage.objects().count == 6)
            #expect(try w.storage.stats()["canary_requests"] as? Int == 2, "an upload and a delete")

            let (run, summary) = try w.run()
            #expect(run.exitCode == 0, "\(run.output)")
            #expect(summary["deleted"] == 3)
            #expect(summary["objects"] == 6, "the canary is not among the objects the scan counted")
            #expect(summary["stale_canaries_removed"] == 0)
            #expect(summary["storage_proof_requests"] == 2, "an upload and a delete, counted apart from the deletions' http_requests")
            let ms = try #require(summary["storage_proof_ms"])
            #expect(ms >= 0 && ms < 10_000)
            #expect(run.stderr.contains("the Storage API proved it serves this database") && run.stderr.contains("url=\(w.storage.url)/storage/v1"),
                    "\(run.stderr)")
            #expect(!run.output.contains(w.storage.serviceRoleKey))
            #expect(try w.storage.objects() == ["keep0.jpeg", "keep1.jpeg", "keep2.jpeg"])
            #expect(try w.audited() == ["o1.jpeg", "o2.jpeg", "o3.jpeg"])
            #expect(try Self.canaryRows(w.db).isEmpty)
            #expect(Self.canaryFiles(w.storage).isEmpty)
        }
    }

    @Test("a canary upload the API refuses stops the run before anything is deleted, naming the URL")
    func uploadRefused() throws {
        try AvatarWorld.with { w in
            try w.seed(orphans: ["o1.jpeg"], kept: 1)
            try w.storage.faults(["canary_faults": true,
                                  "answer_next": [["http": 400, "statusCode": "403", "error": "Unauthorized", "message": "injected denial"]]])
            let (run, _) = try w.run(["--force"])
            #expect(run.exitCode == 1, "\(run.output)")
            #expect(run.output.contains("the Storage API at \(w.storage.url)/storage/v1 could not prove it serves this database"), "\(run.output)")
            #expect(run.output.contains("injected denial"))
            #expect(try w.storage.objects() == ["o1.jpeg", "keep0.jpeg"])
            #expect(try Self.canaryRows(w.db).isEmpty)
        }
    }

    @Test("a canary a killed run left (old enough to be a candidate) is deleted through the API by the next proof, never counted or deleted as an orphan")
    func staleCanary() throws {
        try AvatarWorld.with { w in
            let stale = ".steward/canary-\(UUID().uuidString.lowercased()).png"
            try w.storage.client().upload(bucket: "avatars", path: stale, data: StorageProof.png, contentType: "image/png")
            try w.seed(orphans: ["o1.jpeg"], kept: 2)   // ages the canary too: two days old
            #expect(try Self.canaryRows(w.db) == ["avatars/\(stale)"])
            let (run, summary) = try w.run()
            #expect(run.exitCode == 0, "\(run.output)")
            #expect(summary["stale_canaries_removed"] == 1)
            #expect(summary["deleted"] == 1 && summary["objects"] == 3, "\(summary)")
            #expect(run.stderr.contains("deleted canaries a killed run left"))
            #expect(try Self.canaryRows(w.db).isEmpty)
            #expect(Self.canaryFiles(w.storage).isEmpty)
            #expect(try w.audited() == ["o1.jpeg"], "the canary is not in the audit of deleted orphans")
        }
    }

    @Test("the canary's content type is one the bucket takes: image/png unless allowed_mime_types excludes it")
    func contentType() {
        #expect(StorageProof(bucket: "b", allowedMimeTypes: nil).contentType == "image/png")
        #expect(StorageProof(bucket: "b", allowedMimeTypes: ["image/*"]).contentType == "image/png")
        #expect(StorageProof(bucket: "b", allowedMimeTypes: ["IMAGE/PNG"]).name.hasSuffix(".png"))
        #expect(StorageProof(bucket: "b", allowedMimeTypes: ["image/jpeg", "image/webp"]).contentType == "image/jpeg")
        #expect(StorageProof(bucket: "b", allowedMimeTypes: ["application/*"]).contentType == "application/octet-stream")
        let a = StorageProof(bucket: "b", allowedMimeTypes: nil), b = StorageProof(bucket: "b", allowedMimeTypes: nil)
        #expect(a.name != b.name && StorageProof.isCanary(a.name) && a.name.hasPrefix(".steward/canary-"))
    }
}

/// `steward fleet job run orphan-avatars`: each target through its own Storage, none without it.
@Suite("fleet job run orphan-avatars: each target's own Storage", .needsCluster)
struct FleetStorageTests {
    /// A fleet config of `targets` (name, world, whether to give it its Storage keys); the caller removes it.
    static func config(_ targets: [(String, AvatarWorld, Bool)]) throws -> String {
        let path = NSTemporaryDirectory() + "steward-fleet-\(UUID().uuidString).ini"
        var text = "[job.orphan-avatars]\nenabled = true\nmax_fraction = 0.9\n"
        for (name, w, storage) in targets {
            text += "\n[target.\(name)]\nurl = \(w.db.url)\n"
            if storage { text += "storage_url = \(w.storage.url)\nservice_key_file = \(w.storage.serviceKeyFile)\n" }
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("two targets, each with its own emulator: each target's orphans are deleted from its own Storage only, though they share names")
    func eachTargetItsOwn() throws {
        try AvatarWorld.with { a in
            try AvatarWorld.with { b in
                // As in a staging copy: the same names on both sides, and one more orphan in b.
                try a.seed(orphans: ["o1.jpeg", "o2.jpeg"], kept: 2)
                try b.seed(orphans: ["o1.jpeg", "o2.jpeg", "o3.jpeg"], kept: 2)
                let path = try Self.config([("prod", a, true), ("staging", b, true)])
                defer { try? FileManager.default.removeItem(atPath: path) }
                let result = try StewardProcess.run(["fleet", "job", "run", "orphan-avatars", "--config", path, "--json"])
                #expect(result.exitCode == 0, "\(result.output)")
                #expect(try a.storage.objects() == ["keep0.jpeg", "keep1.jpeg"])
                #expect(try b.storage.objects() == ["keep0.jpeg", "keep1.jpeg"])
                #expect(try a.storage.stats()["deleted"] as? Int == 2, "prod's Storage deleted prod's orphans only")
                #expect(try b.storage.stats()["deleted"] as? Int == 3, "staging's Storage deleted staging's orphans only")
                #expect(try a.audited() == ["o1.jpeg", "o2.jpeg"] && b.audited() == ["o1.jpeg", "o2.jpeg", "o3.jpeg"])
                #expect(!result.output.contains(a.storage.serviceRoleKey) && !result.output.contains(b.storage.serviceRoleKey))
            }
        }
    }

    @Test("a target without storage_url is refused by name before any target is touched (exit 78); config check says the same of a bad key file")
    func targetWithoutStorage() throws {
        try AvatarWorld.with { a in
            try AvatarWorld.with { b in
                try a.seed(orphans: ["o1.jpeg"], kept: 1)
                try b.seed(orphans: ["o1.jpeg"], kept: 1)
                let path = try Self.config([("prod", a, true), ("staging", b, false)])
                defer { try? FileManager.default.removeItem(atPath: path) }
                // [storage] set to prod's: it must never stand in for staging's own.
                try (try String(contentsOfFile: path, encoding: .utf8) + "\n" + a.storage.configSection).write(toFile: path, atomically: true, encoding: .utf8)
                let result = try StewardProcess.run(["fleet", "job", "run", "orphan-avatars", "--config", path])
                #expect(result.exitCode == 78, "\(result.output)")
                #expect(result.output.contains("[target.staging]") && result.output.contains("storage_url"), "\(result.output)")
                #expect(try a.storage.objects() == ["o1.jpeg", "keep0.jpeg"] && b.storage.objects() == ["o1.jpeg", "keep0.jpeg"])
                #expect(try a.storage.stats()["requests"] as? Int == 0 && a.storage.stats()["canary_requests"] as? Int == 0, "prod untouched too")

                let bad = try Self.config([("prod", a, true)])
                defer { try? FileManager.default.removeItem(atPath: bad) }
                let missingKey = NSTemporaryDirectory() + "steward-missing-\(UUID().uuidString)"
                try (try String(contentsOfFile: bad, encoding: .utf8).replacingOccurrences(of: a.storage.serviceKeyFile, with: missingKey))
                    .write(toFile: bad, atomically: true, encoding: .utf8)
                let check = try StewardProcess.run(["config", "check", "--config", bad])
                #expect(check.exitCode == 78, "\(check.output)")
                #expect(check.output.contains("[target.prod] service_key_file"), "\(check.output)")
                let wrongURL = try Self.config([("prod", a, true)])
                defer { try? FileManager.default.removeItem(atPath: wrongURL) }
                try (try String(contentsOfFile: wrongURL, encoding: .utf8).replacingOccurrences(of: "storage_url = \(a.storage.url)", with: "storage_url = http://example.com"))
                    .write(toFile: wrongURL, atomically: true, encoding: .utf8)
                let urlCheck = try StewardProcess.run(["config", "check", "--config", wrongURL])
                #expect(urlCheck.exitCode == 78 && urlCheck.output.contains("storage_url"), "\(urlCheck.output)")
            }
        }
    }
}
