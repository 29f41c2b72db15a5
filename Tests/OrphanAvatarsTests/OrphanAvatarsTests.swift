import Foundation
import Postgres
import Storage
import Testing
import TestSupport

@Suite("orphan-avatars through the Storage API (emulator)", .needsCluster)
struct OrphanAvatarsTests {
    @Test("references in every form keep their objects; orphans older than the grace go, audited, with their bytes")
    func deletesOnlyOrphans() throws {
        try AvatarWorld.with { w in
            try w.storage.upload(["a.jpeg", "b.jpeg", "c.jpeg", "d.jpeg", "e.jpeg", "f.jpeg", "g.jpeg", "young.jpeg", "defaults/keep.jpeg"])
            try w.storage.age(2 * 86400)
            try w.storage.age(600, names: ["young.jpeg"])
            try w.reference(0, "a.jpeg")
            try w.reference(1, "/b.jpeg")
            try w.reference(2, "\(w.storage.url)/storage/v1/object/public/avatars/c.jpeg?t=123")
            try w.reference(3, "https://example.supabase.co/storage/v1/object/authenticated/avatars/d.jpeg")
            try w.reference(4, "https://lh3.googleusercontent.com/a/e.jpeg")   // not understood for certain: keeps e.jpeg
            try w.reference(5, "https://example.supabase.co/storage/v1/object/public/other-bucket/f.jpeg")   // mentions f.jpeg: kept
            let config = "keep_prefixes = defaults/\nmax_fraction = 0.6\n"
            let (dry, drySummary) = try w.run(["--dry-run"], config: config)
            #expect(dry.exitCode == 0, "\(dry.output)")
            #expect(drySummary["candidates"] == 1)      // g
            #expect(drySummary["kept_by_mention"] == 2)  // e, f
            #expect(drySummary["unrecognised_references"] == 1)
            #expect(drySummary["bytes_would_free"] == 100)
            #expect(dry.stderr.contains("would delete") && dry.stderr.contains("name=g.jpeg"))
            #expect(try w.storage.objects().count == 9)

            let (run, summary) = try w.run([], config: config)
            #expect(run.exitCode == 0, "\(run.output)")
            #expect(summary["deleted"] == 1)
            #expect(summary["bytes_reclaimed"] == 100)
            #expect(try w.storage.objects() == ["a.jpeg", "b.jpeg", "c.jpeg", "d.jpeg", "e.jpeg", "f.jpeg", "young.jpeg", "defaults/keep.jpeg"])
            #expect(try w.audited() == ["g.jpeg"])
            #expect(try w.storage.stats()["deleted"] as? Int == 1)
            let files = try FileManager.default.subpathsOfDirectory(atPath: w.storage.dataDirectory).filter { !$0.hasSuffix("/") && $0.count > 40 }
            #expect(files.count == 8)
        }
    }

    @Test("references over many pages (12,000 profiles): every one is read, exactly the orphans are candidates")
    func manyPages() throws {
        try AvatarWorld.with(users: 0) { w in
            let c = try w.db.connectAsAdmin()
            try c.execute("""
                alter table auth.users disable trigger on_auth_user_created;
                insert into auth.users (id, created_at, updated_at) select gen_random_uuid(), now(), now() from generate_series(1, 12000);
                insert into public.profiles (id, avatar_url) select id, 'img-' || md5(id::text) || '.jpeg' from auth.users;
                -- A later update moves rows around the heap, as a real table's history does.
                update public.profiles set updated_at = now() where ('x' || substr(md5(id::text), 1, 6))::bit(24)::int % 3 = 0;
                alter table auth.users enable trigger on_auth_user_created;
                insert into storage.objects (bucket_id, name, metadata, created_at, updated_at)
                  select 'avatars', avatar_url, '{"size": 10}', now() - interval '2 days', now() - interval '2 days' from public.profiles;
                insert into storage.objects (bucket_id, name, metadata, created_at, updated_at)
                  select 'avatars', 'orphan-' || g || '.jpeg', '{"size": 10}', now() - interval '2 days', now() - interval '2 days' from generate_series(1, 100) g;
                """)
            let (dry, summary) = try w.run(["--dry-run"])
            #expect(dry.exitCode == 0, "\(dry.output)")
            #expect(summary["references"] == 12000)
            #expect(summary["candidates"] == 100)
        }
    }

    @Test("the safety brake: an emptied profiles table refuses the run; --force goes ahead")
    func safetyBrake() throws {
        try AvatarWorld.with { w in
            try w.storage.upload((0..<6).map { "p\($0).jpeg" })
            try w.storage.age(2 * 86400)
            for i in 0..<6 { try w.reference(i, "p\(i).jpeg") }
            try w.db.connectAsAdmin().execute("update public.profiles set avatar_url = null")   // a bad restore
            let (refused, _) = try w.run()
            #expect(refused.exitCode == 1)
            #expect(refused.stdout.contains("safety brake: 6 of 6 objects in avatars (100 %)"), "\(refused.output)")
            #expect(try w.storage.objects().count == 6)
            let (dry, drySummary) = try w.run(["--dry-run"])
            #expect(dry.exitCode == 0)
            #expect(drySummary["brake_would_refuse"] == 1)
            let (forced, summary) = try w.run(["--force"])
            #expect(forced.exitCode == 0)
            #expect(summary["deleted"] == 6)
            let (capped, _) = try w.run([], config: "max_per_run = 1\n")
            #expect(capped.exitCode == 0, "nothing left, nothing to brake")
        }
    }

    @Test("a grace under an hour is refused by the config check")
    func grace() throws {
        try AvatarWorld.with(users: 0) { w in
            let (result, _) = try w.run([], config: "grace = 30m\n")
            #expect(result.exitCode == 78)
            #expect(result.stderr.contains("grace: the grace period must be at least 1h"))
        }
    }

    @Test("every fault the emulator injects, alone: retried (a dropped connection: the run stops, the next settles and finishes), honest summary, no referenced object deleted", arguments: [
        ["fail_next": 2], ["rate_limit_next": 2, "retry_after": 1], ["drop_next": 1], ["partial_delete_next": 2], ["delay_ms": 300],
    ] as [[String: Double]])
    func faults(fault: [String: Double]) throws {
        try AvatarWorld.with { w in
            let orphans = (0..<40).map { "o\($0).jpeg" }
            try w.seed(orphans: orphans, kept: 2)
            try w.storage.faults(fault)
            var (result, summary) = try w.run([], config: "batch_size = 10\nmax_fraction = 1\n")
            if fault["drop_next"] != nil {
                // No answer after the request went out: Storage may still carry it out, so the run stops with the
                // intent rows pending, and the next run settles them (the emulator had done nothing) and finishes.
                #expect(result.exitCode != 0, "\(result.output)")
                #expect(result.stdout.contains("no final answer"), "\(result.output)")
                #expect(try w.db.connect().query("select count(*) from steward.deleted_objects where deleted_at is null").rows[0].decode(Int.self, at: 0) == 10)
                (result, summary) = try w.run([], config: "batch_size = 10\nmax_fraction = 1\n")
                #expect(result.stderr.contains("waiting out a request"), "\(result.stderr)")
            }
            #expect(result.exitCode == 0, "\(fault): \(result.output)")
            #expect(try w.storage.objects() == ["keep0.jpeg", "keep1.jpeg"])
            #expect(try w.audited() == Set(orphans))
            #expect((summary["deleted"] ?? 0) + (summary["deleted_answer_lost"] ?? 0) == 40)
            #expect(summary["deleted"] == (try w.storage.stats()["deleted"] as? Int))
            #expect((try w.storage.stats()["faults"] as? Int ?? 0) > 0 || fault["delay_ms"] != nil, "the fault was injected")
            if fault["partial_delete_next"] != nil { #expect((summary["partial_batches"] ?? 0) > 0) }
            FaultLedger.record("Storage fault alone: \(fault.keys.sorted().joined(separator: ", "))", runs: fault["drop_next"] != nil ? 2 : 1,
                               faults: (try w.storage.stats()["faults"] as? Int) ?? 0, objectsChecked: 42,
                               losses: try w.losses(kept: ["keep0.jpeg", "keep1.jpeg"], orphans: orphans))
            if fault["fail_next"] != nil || fault["rate_limit_next"] != nil {
                #expect((summary["http_requests"] ?? 0) > 4, "retries show in the request count")
                #expect(result.stderr.contains("retrying"))
            }
        }
    }

    @Test("mixed faults over many runs: nothing referenced is ever deleted, and the audit matches Storage")
    func mixedFaults() throws {
        try AvatarWorld.with { w in
            var orphans: Set<String> = []
            let rounds = 6
            for round in 0..<rounds {
                let names = (0..<15).map { "r\(round)-\($0).jpeg" }
                try w.storage.upload(names + ["ref\(round).jpeg"])
                try w.storage.age(2 * 86400)
                try w.reference(round, "ref\(round).jpeg")
                orphans.formUnion(names)
                try w.storage.faults(["fail_every": 3, "partial_delete": round % 2 == 0 ? 0.3 : 0.0, "drop_next": 1])
                let (result, _) = try w.run([], config: "batch_size = 4\nmax_fraction = 1\n")
                #expect(result.exitCode == 0 || result.stdout.contains("batch(es) failed") || result.stdout.contains("no final answer"), "\(result.output)")
            }
            try w.storage.faults(["fail_every": 0, "partial_delete": 0.0, "drop_next": 0])
            _ = try w.run([], config: "batch_size = 4\nmax_fraction = 1\n")
            let kept = Set((0..<rounds).map { "ref\($0).jpeg" })
            #expect(try w.storage.objects() == kept)
            #expect(try w.audited() == orphans)
            FaultLedger.record("Storage faults mixed (500 every 3rd, partial deletes, dropped connections)", runs: rounds + 1,
                               faults: (try w.storage.stats()["faults"] as? Int) ?? 0, objectsChecked: orphans.count + kept.count,
                               losses: try w.losses(kept: kept, orphans: Array(orphans)))
            #expect(try w.db.connect().query("select count(*) from steward.deleted_objects where deleted_at is null").rows[0].decode(Int.self, at: 0) == 0)
        }
    }

    @Test("an avatar referenced after the scan is re-checked before its batch and kept")
    func recheck() throws {
        try AvatarWorld.with { w in
            let names = (0..<8).map { "z\($0).jpeg" }
            try w.storage.upload(names)
            try w.storage.age(2 * 86400)
            try w.storage.reset()
            try w.storage.faults(["delay_ms": 700])
            let job = try w.start(["--force"], config: "batch_size = 1")
            // While the first batches crawl, the app saves a profile pointing at the last candidate.
            #expect(eventually(10) { ((try? w.storage.stats()["requests"] as? Int) ?? 0) >= 2 })
            try w.reference(0, "z7.jpeg")
            let result = job.wait(timeout: 60)
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(try w.storage.objects() == ["z7.jpeg"])
            #expect(result.stdout.contains("\"kept_referenced_at_recheck\":1"))
        }
    }

    @Test("a run killed mid-batch loses nothing: the next run settles what was in flight and finishes")
    func crashMidRun() throws {
        try AvatarWorld.with { w in
            let names = (0..<12).map { "k\($0).jpeg" }
            try w.storage.upload(names)
            try w.storage.age(2 * 86400)
            try w.storage.reset()
            try w.storage.faults(["delay_ms": 400])
            let job = try w.start(["--force"], config: "batch_size = 2")
            #expect(eventually(15) { ((try? w.storage.stats()["deleted"] as? Int) ?? 0) >= 2 })
            job.kill(SIGKILL)
            _ = job.wait(timeout: 5)
            #expect(try w.workingTables() == ["orphan_candidates", "orphan_loose", "orphan_refs"], "a killed run leaves its working tables")
            try w.storage.faults(["delay_ms": 0])
            let (result, _) = try w.run(["--force"], config: "batch_size = 2\n")
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(try w.workingTables().isEmpty, "the next run drops them when it ends")
            #expect(try w.storage.objects().isEmpty)
            #expect(try w.audited() == Set(names))
            #expect(try w.db.connect().query("select count(*) from steward.deleted_objects where deleted_at is null").rows[0].decode(Int.self, at: 0) == 0)
            #expect(try w.db.connect().query("select count(*) from steward.job_runs where status = 'running'").rows[0].decode(Int.self, at: 0) == 0)
            FaultLedger.record("job run killed (SIGKILL) mid-batch", runs: 2, faults: 1, objectsChecked: names.count,
                               losses: try w.losses(kept: [], orphans: names))
        }
    }

    @Test("a run whose connection breaks loses the job's lock with it: it stops before touching the working tables again, leaves them to the next run, and loses nothing")
    func connectionLostMidRun() throws {
        try AvatarWorld.with { w in
            let names = (0..<12).map { "c\($0).jpeg" }
            try w.storage.upload(names + ["keep0.jpeg"])
            try w.storage.age(2 * 86400)
            try w.reference(0, "keep0.jpeg")
            try w.storage.reset()
            try w.storage.faults(["delay_ms": 400])
            let job = try w.start(["--force"], config: "batch_size = 2")
            #expect(eventually(15) { ((try? w.storage.stats()["deleted"] as? Int) ?? 0) >= 2 })
            // The connection holding the job's lock, ended from outside (a failover, a network cut).
            let ended = try w.db.connectAsAdmin().query("""
                select count(pg_terminate_backend(l.pid)) from pg_locks l
                where l.locktype = 'advisory' and l.granted and l.objsubid = 2 and l.classid = 21332   -- AdvisoryLock.jobNamespace
                  and l.database = (select oid from pg_database where datname = current_database())
                """).rows[0].decode(Int.self, at: 0)
            #expect(ended == 1)
            let result = job.wait(timeout: 30)
            #expect(result.exitCode != 0, "\(result.output.suffix(800))")
            // Whether the break surfaced in the statement it cut or in the next one (the lock's loss), the run did not
            // drop the tables from a new connection that holds no lock: they are left to the next run.
            #expect(result.output.contains("the job's lock with it") || result.output.contains("connection"), "\(result.output.suffix(800))")
            #expect(try w.workingTables() == ["orphan_candidates", "orphan_loose", "orphan_refs"])
            try w.storage.faults(["delay_ms": 0])
            let (next, _) = try w.run(["--force"], config: "batch_size = 2\n")
            #expect(next.exitCode == 0, "\(next.output)")
            #expect(try w.storage.objects() == ["keep0.jpeg"])
            #expect(try w.audited() == Set(names))
            #expect(try w.workingTables().isEmpty)
            FaultLedger.record("job connection ended mid-run (lock lost)", runs: 2, faults: 1, objectsChecked: names.count + 1,
                               losses: try w.losses(kept: ["keep0.jpeg"], orphans: names))
        }
    }

    @Test("working tables a killed run left are dropped, not trusted; none outlive a run that ends, refused or not; the API roles cannot reach them")
    func workingTablesLeftBehind() throws {
        try AvatarWorld.with { w in
            try w.seed(orphans: ["orphan.jpeg"], kept: 2)
            // As a killed run might have left them, but stale: a reference keeping the orphan, a candidate that is kept.
            try w.db.connect().execute("""
                create unlogged table steward.orphan_refs as select 0::int2 as col, '(0,1)'::tid as ref, 'avatars'::text as bucket,
                  null::text as v, 'orphan.jpeg' collate "C" as name, true as common;
                create unlogged table steward.orphan_candidates as select 'avatars'::text as bucket, 'keep0.jpeg' collate "C" as name,
                  0::bigint as size, null::text as owner, 0::float8 as created_at;
                """)
            for role in ["anon", "authenticated", "service_role", "authenticator"] {
                #expect(try w.db.connectAsAdmin().query("select has_schema_privilege($1, 'steward', 'usage')", [role]).rows[0].decode(Bool.self, at: 0) == false,
                        "\(role) may not use the steward schema")
            }
            let (dry, drySummary) = try w.run(["--dry-run"])
            #expect(dry.exitCode == 0, "\(dry.output)")
            #expect(drySummary["candidates"] == 1)
            #expect(dry.stderr.contains("orphan.jpeg") && !dry.stderr.contains("name=keep0.jpeg"), "\(dry.stderr.suffix(600))")
            #expect(try w.workingTables().isEmpty)
            let (refused, _) = try w.run([], config: "max_fraction = 0.1\n")
            #expect(refused.exitCode == 1, "\(refused.output)")
            #expect(try w.workingTables().isEmpty, "a refused run drops them too")
            let (result, summary) = try w.run()
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(summary["deleted"] == 1)
            #expect(try w.storage.objects() == ["keep0.jpeg", "keep1.jpeg"])
            #expect(try w.workingTables().isEmpty)
        }
    }

    @Test("a killed run's intent rows are settled once their settle_after has passed: waited for while ahead, not at all once past, this run's timeout when a row has none",
          arguments: ["ahead", "past", "undated"])
    func settleAfter(_ when: String) throws {
        try AvatarWorld.with { w in
            try w.storage.upload(["p.jpeg"])
            try w.storage.age(2 * 86400)
            // What a run killed inside the fence leaves: the intent row of an object Storage did not delete.
            let settleAfter = ["ahead": "now() + interval '8 seconds'", "past": "now() - interval '1 minute'", "undated": "null"][when]!
            try w.db.connect().query("""
                insert into steward.deleted_objects (run_id, bucket_id, name, settle_after) values (-1, 'avatars', 'p.jpeg', \(unescaped: settleAfter))
                """)
            let started = Date()
            let (result, summary) = try w.run(["--force"])
            let took = Date().timeIntervalSince(started)
            #expect(result.exitCode == 0, "\(result.output)")
            let line = result.stderr.split(separator: "\n").first { $0.contains("waiting out a request") }
            let waited = line.flatMap { $0.firstMatch(of: /wait_s=([0-9.]+)/).flatMap { Double($0.1) } }
            switch when {
            case "ahead":
                // Its own settle_after, not this run's timeout (about 2 s here), minus the time this run took to start.
                #expect(waited.map { (4.0...8.0).contains($0) } == true, "\(result.stderr)")
                #expect(took >= (waited ?? 8), "took \(took) s")
            case "past":
                #expect(line == nil, "\(result.stderr)")
            default:
                let ownTimeout = Double(summary["fence_request_timeout_ms"] ?? 0) / 1000
                #expect(waited.map { abs($0 - (ownTimeout + 1)) < 0.06 } == true, "\(result.stderr)")
            }
            // Settled (still in storage.objects: not deleted, the row dropped), then deleted by this run, audited once.
            #expect(try w.storage.objects().isEmpty)
            let c = try w.db.connect()
            #expect(try c.query("select count(*) from steward.deleted_objects where run_id = -1").rows[0].decode(Int.self, at: 0) == 0)
            #expect(try c.query("select count(*) from steward.deleted_objects where deleted_at is null").rows[0].decode(Int.self, at: 0) == 0)
            #expect(try w.audited() == ["p.jpeg"])
            // This run's own intent rows said when its requests could no longer land.
            #expect(try c.query("""
                select count(*) from steward.deleted_objects where run_id > 0 and settle_after > now() - interval '1 hour' and settle_after < now() + interval '3 minutes'
                """).rows[0].decode(Int.self, at: 0) == 1)
        }
    }

    @Test("a re-check inside the fence that runs past the intent rows' settle_after sends nothing: the batch is tried again, then reported failed")
    func slowRecheckSendsNothing() throws {
        try AvatarWorld.with { w in
            try w.storage.upload(["slow.jpeg"])
            try w.storage.age(2 * 86400)
            try w.storage.reset()
            try w.reference(0, "elsewhere.jpeg")
            // A reference view that reads slowly only inside the fence (the only read made while an intent row is
            // pending); 4.5 s is past the intent's allowance of 1 s fence wait and 2 s re-check.
            try w.db.connect().execute("""
                create view public.fence_slow_refs as
                with pause as materialized (select pg_sleep(case when exists (select 1 from steward.deleted_objects where deleted_at is null) then 4.5 else 0 end))
                select p.avatar_url from public.profiles p, pause
                """)
            let (result, _) = try w.run(["--force"], config: "references = public.fence_slow_refs.avatar_url\nfence_wait = 1s\nfence_request_timeout = 1s")
            #expect(result.exitCode != 0, "\(result.output)")
            #expect(result.output.contains("nothing was sent"), "\(result.output)")
            #expect(try w.storage.objects() == ["slow.jpeg"])
            let stats = try w.storage.stats()
            #expect((stats["requests"] as? Int) == 0, "\(stats)")
            #expect(try w.db.connect().query("select count(*) from steward.deleted_objects").rows[0].decode(Int.self, at: 0) == 0)
        }
    }

    @Test("the re-check inside the fence counts against fence_request_timeout: writes are held no longer than the lock wait and that timeout")
    func recheckInsideTheBudget() throws {
        try AvatarWorld.with { w in
            try w.seed(orphans: ["slow.jpeg"], kept: 1)
            // Inside the fence (the only read made while an intent row is pending) the view takes 0.4 s.
            try w.db.connect().execute("""
                create view public.fence_slow_refs as
                with pause as materialized (select pg_sleep(case when exists (select 1 from steward.deleted_objects where deleted_at is null) then 0.4 else 0 end))
                select p.avatar_url from public.profiles p, pause
                """)
            try w.storage.faults(["delay_ms": 3000])
            let (result, _) = try w.run(["--force"], config: "references = public.fence_slow_refs.avatar_url\nfence_wait = 1s\nfence_request_timeout = 1s")
            #expect(result.exitCode != 0, "\(result.output)")
            #expect(result.stdout.contains("ran into fence_request_timeout"), "\(result.output)")
            let held = result.stdout.firstMatch(of: /fence_held_ms_max=([0-9]+)/).flatMap { Int($0.1) }
            #expect(held.map { (900...1150).contains($0) } == true, "the fence held writes \(String(describing: held)) ms: \(result.stdout)")
        }
    }

    @Test("the scheduled job under steward run cleans the bucket, and its numbers reach the metrics")
    func scheduled() throws {
        try AvatarWorld.with { w in
            try w.storage.upload(["s1.jpeg", "s2.jpeg", "s3.jpeg"])
            try w.storage.age(2 * 86400)
            try w.reference(0, "s1.jpeg")
            let daemon = try DaemonProcess(databaseURL: w.db.url, config: """
                \(w.storage.configSection)
                [job.orphan-avatars]
                schedule = @every 1s
                max_fraction = 1
                """)
            #expect(eventually(30) { (try? w.storage.objects()) == ["s1.jpeg"] }, "\(daemon.process.stderrSoFar.suffix(1500))")
            #expect(eventually(10) { ((try? daemon.ctl(["metrics"]).stdout) ?? "").contains(#"steward_job_last_result{job="orphan-avatars",key="deleted"}"#) })
            #expect(daemon.stop().exitCode == 0)
        }
    }

    @Test("an inheritance parent's rows are told apart although its children's ctids repeat: a dangling reference is reported beside a kept one")
    func inheritanceChildren() throws {
        try AvatarWorld.with { w in
            try w.storage.upload(["kept.jpeg"])
            try w.storage.age(2 * 86400)
            // One row in each child: both at ctid (0,1), read through the parent.
            try w.db.connect().execute("""
                create table public.legacy_avatars (av text);
                create table public.legacy_avatars_a () inherits (public.legacy_avatars);
                create table public.legacy_avatars_b () inherits (public.legacy_avatars);
                insert into public.legacy_avatars_a values ('gone.jpeg');
                insert into public.legacy_avatars_b values ('kept.jpeg');
                """)
            let (result, summary) = try w.run(["--dry-run"], config: "references = public.profiles.avatar_url, public.legacy_avatars.av")
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(summary["references"] == 2, "\(result.output)")
            #expect(summary["candidates"] == 0, "\(result.output)")
            #expect(summary["dangling_references"] == 1, "\(result.output)")
            #expect(try w.storage.objects() == ["kept.jpeg"])
        }
    }

    @Test("array (through a view) and json reference columns keep every object they list; a uuid column is refused before anything is deleted")
    func referenceColumnTypes() throws {
        try AvatarWorld.with { w in
            let listed = ["g1.jpeg", "g2.jpeg", "g 3.jpeg", "g,4.jpeg", "m1.jpeg", "m2.jpeg", "m3.jpeg"]
            try w.seed(orphans: ["orphan.jpeg"] + listed, kept: 0)
            let admin = try w.db.connectAsAdmin()
            try admin.execute("alter table public.profiles add column gallery text[], add column meta jsonb, add column avatar_id uuid")
            try admin.query("update public.profiles set gallery = $1::text[], meta = $2::jsonb, avatar_id = (select id from storage.objects where name = 'orphan.jpeg') where id = $3",
                            ["{g1.jpeg,g2.jpeg,\"g 3.jpeg\",\"g,4.jpeg\"}", "{\"avatar\": \"m1.jpeg\", \"thumbs\": [\"m2.jpeg\", \"m3.jpeg\"]}", w.users[0]])

            // The object's id in a uuid column names no object: refused, nothing deleted.
            let (refused, _) = try w.run(["--force"], config: "references = public.profiles.avatar_id")
            #expect(refused.exitCode != 0)
            #expect(refused.output.contains("reference_columns: public.profiles.avatar_id is a uuid column"), "\(refused.output)")
            #expect(try w.storage.objects().count == listed.count + 1)

            // The array read through a view (read whole by the re-checks), the json from the table.
            try w.db.connect().execute("create view public.gallery_refs as select gallery as g from public.profiles")
            let (result, summary) = try w.run(["--force"], config: "references = public.gallery_refs.g, public.profiles.meta")
            #expect(result.exitCode == 0, "\(result.output)")
            let present = Set(try w.storage.objects())
            let lost = Set(listed).subtracting(present)
            #expect(lost.isEmpty, "listed objects deleted: \(lost.sorted())")
            #expect(!present.contains("orphan.jpeg"))
            #expect(summary["deleted"] == 1)
            FaultLedger.record("reference forms: array and json columns", runs: 2, faults: 0, objectsChecked: listed.count + 1,
                               losses: lost.count, cases: listed.count + 1)
        }
    }

    @Test("references hidden by row level security from the role Steward runs as stop the run instead of losing their objects")
    func rowLevelSecurity() throws {
        try AvatarWorld.with { w in
            try w.seed(orphans: ["orphan.jpeg", "hidden.jpeg"], kept: 4)
            try w.reference(4, "hidden.jpeg")
            let role = "steward_rls_\(UInt32.random(in: 0...UInt32.max))"
            let admin = try w.db.connectAsAdmin()
            // A role that owns nothing itself (a member of the owner, without BYPASSRLS) and a policy that hides a row from it.
            try admin.execute("""
                create role \(role) login password 'steward-local' nobypassrls in role postgres;
                alter table public.profiles force row level security;
                create policy "hidden from tools" on public.profiles as restrictive for select using (avatar_url is distinct from 'hidden.jpeg');
                """)
            defer { _ = try? admin.execute("drop owned by \(role); drop role \(role)") }
            let path = NSTemporaryDirectory() + "steward-\(UUID().uuidString).ini"
            try "[job.orphan-avatars]\n".write(toFile: path, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let result = try StewardProcess.run(["job", "run", "orphan-avatars", "--config", path, "--database-url", w.db.url(role: role),
                                                 "--storage-url", w.storage.url, "--service-key-file", w.storage.serviceKeyFile, "--json"])
            let present = Set(try w.storage.objects())
            #expect(present.contains("hidden.jpeg"), "a referenced object hidden by a policy was deleted: \(result.output.suffix(800))")
            #expect(result.exitCode != 0)
            #expect(result.output.contains("row-level security"), "\(result.output.suffix(800))")
            FaultLedger.record("reference forms: rows hidden by row level security", runs: 1, faults: 0, objectsChecked: 6,
                               losses: present.contains("hidden.jpeg") ? 0 : 1, cases: 1)
        }
    }

    @Test("dangling references and objects with no owner (service-role or anonymous uploads) are reported, not fixed")
    func reports() throws {
        try AvatarWorld.with { w in
            try w.storage.upload(["anon.jpeg"])
            try w.reference(0, "anon.jpeg")
            try w.reference(1, "gone.jpeg")
            let (result, summary) = try w.run()
            #expect(result.exitCode == 0)
            #expect(summary["dangling_references"] == 1)
            #expect(summary["unowned_objects"] == 1)
            #expect(summary["anonymous_uploads"] == nil)
            #expect(result.stderr.contains("objects with no owner (uploaded with the service role or anonymously)"))
            #expect(result.stderr.contains("profiles point to objects that do not exist"))
            #expect(try w.storage.objects() == ["anon.jpeg"])
        }
    }

    @Test("the report looks for dangling references only when the counts cannot rule them out: every name found its object, or not (a name twice, one missing, one read by the function)",
          arguments: [0, 1, 2, 3])
    func danglingShortcut(variant: Int) throws {
        try AvatarWorld.with { w in
            let url = "https://x.supabase.co/storage/v1/object/public/avatars/"
            try w.storage.upload(["a.jpeg", "b.jpeg", "unreferenced.jpeg"])
            try w.storage.age(2 * 86400)
            try w.reference(0, "a.jpeg")
            try w.reference(1, url + "b.jpeg?t=1")
            // 0: every name found its object. 1: a name twice beside a missing one (the rows outnumber the objects by
            // the duplicate, and would hide the missing one if counted as names). 2: a missing name. 3: a form the
            // function reads, missing.
            switch variant {
            case 1: try w.reference(2, "a.jpeg"); try w.reference(3, "gone.jpeg")
            case 2: try w.reference(2, url + "gone.jpeg?t=2")
            case 3: try w.reference(2, "avatars/gone.jpeg")
            default: break
            }
            let (result, summary) = try w.run(["--dry-run", "--log-level", "debug"])
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(summary["dangling_references"] == (variant == 0 ? 0 : 1), "\(result.output)")
            #expect(summary["candidates"] == 1, "\(result.output)")
            #expect(result.stderr.contains("every name the scan read found its object") == (variant == 0), "\(result.stderr)")
            if variant != 0 { #expect(result.stderr.contains("gone.jpeg"), "\(result.stderr)") }
        }
    }

    @Test("without a unique index on (bucket_id, name) the counts prove nothing: the report looks, and finds the dangling reference two objects of one name would hide")
    func danglingWithoutUniqueNames() throws {
        try AvatarWorld.with { w in
            let admin = try w.db.connectAsAdmin()
            try admin.execute("drop index storage.bucketid_objname")
            // Two versions of one name: with the reference to a missing object, the rows (2) equal the objects named (2).
            try admin.execute("""
                insert into storage.objects (bucket_id, name, version, created_at, updated_at)
                values ('avatars', 'a.jpeg', 'v1', now() - interval '2 days', now() - interval '2 days'),
                       ('avatars', 'a.jpeg', 'v2', now() - interval '2 days', now() - interval '2 days')
                """)
            try w.reference(0, "a.jpeg")
            try w.reference(1, "gone.jpeg")
            let (result, summary) = try w.run(["--dry-run", "--log-level", "debug"])
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(summary["dangling_references"] == 1, "\(result.output)")
            #expect(!result.stderr.contains("every name the scan read found its object"), "\(result.stderr)")
        }
    }

    @Test("a reference is dangling when none of the names it may name exists: URLs with a query, forms read by the function, one bucket or two",
          arguments: [false, true])
    func danglingForms(twoBuckets: Bool) throws {
        try AvatarWorld.with { w in
            let url = "https://x.supabase.co/storage/v1/object/public/avatars/"
            let admin = try w.db.connectAsAdmin()
            try admin.execute("insert into storage.buckets (id, name) values ('other', 'other')")
            // Objects written as Storage writes its rows; a name may hold a `?` (the query-string reading of a URL).
            try admin.query("""
                insert into storage.objects (bucket_id, name, created_at, updated_at)
                select b, n, now() - interval '2 days', now() - interval '2 days'
                from unnest($1::text[], $2::text[]) as x(b, n)
                """, [["avatars", "avatars", "avatars", "other"], ["q.jpeg?t=1", "here.jpeg", "there.jpeg", "gone.jpeg"]])
            try w.reference(0, "gone.jpeg")                      // missing in avatars; in other
            try w.reference(1, url + "q.jpeg?t=1")               // only its query-string name exists
            try w.reference(2, url + "none.jpeg?t=2")            // neither name exists
            try w.reference(3, url + "here.jpeg?t=3")            // its plain name exists
            try w.reference(4, "there.jpeg")
            try w.reference(5, "avatars/k1.jpeg")                // read by the function; no name exists
            let (result, summary) = try w.run(["--dry-run"], config: twoBuckets ? "buckets = avatars,other\n" : "")
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(summary["dangling_references"] == (twoBuckets ? 2 : 3), "\(result.output)")
            #expect(result.stderr.contains("none.jpeg"), "\(result.stderr)")
            // Every object is referenced, `q.jpeg?t=1` by the URL's name with its query only: none is a candidate.
            #expect(summary["candidates"] == 0, "\(result.output)")
        }
    }

    @Test("keys: an sb_secret_ key goes in apikey alone; a wrong key is refused and never printed")
    func keys() throws {
        try AvatarWorld.with { w in
            let secret = try w.storage.client(key: w.storage.secretKey)
            #expect(try secret.bucket("avatars").isPublic == false)
            let wrong = try w.storage.client(key: "sb_secret_wrong")
            let denied = #expect(throws: StorageError.self) { try wrong.bucket("avatars") }
            #expect(denied?.kind == .denied)
            let missing = #expect(throws: StorageError.self) { try secret.download(bucket: "avatars", path: "nope.jpeg") }
            #expect(missing?.kind == .notFound)
            #expect(missing?.httpStatus == 400)
            #expect(missing?.statusCode == "404")
            let keyFile = NSTemporaryDirectory() + "steward-\(UUID().uuidString)"
            try "eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.c2lnbmF0dXJlLXRoYXQtZmFpbHM".write(toFile: keyFile, atomically: true, encoding: .utf8)
            chmod(keyFile, 0o600)
            defer { try? FileManager.default.removeItem(atPath: keyFile) }
            try w.storage.upload(["x.jpeg"]); try w.storage.age(2 * 86400)
            let result = try StewardProcess.run(["job", "run", "orphan-avatars", "--database-url", w.db.url, "--storage-url", w.storage.url + "/storage/v1/",
                                                 "--service-key-file", keyFile, "--force"])
            #expect(result.exitCode == 1)
            #expect(result.output.contains("denied"))
            #expect(!result.output.contains("c2lnbmF0dXJlLXRoYXQtZmFpbHM"))
            #expect(!result.output.contains(w.storage.serviceRoleKey))
        }
    }

    @Test("storage hardening, opt in: users delete their own avatars, anon may no longer upload; verify says so")
    func hardening() throws {
        try AvatarWorld.with { w in
            let include = TestEnvironment.root + "/sql/optional/storage-hardening"
            let before = try StewardProcess.run(["verify", "--database-url", w.db.url])
            #expect(before.stdout.contains("avatar uploads: anonymous clients too"))
            let applied = try StewardProcess.run(["migrate", "--database-url", w.db.url, "--include", include])
            #expect(applied.exitCode == 0, "\(applied.output)")
            let after = try StewardProcess.run(["verify", "--database-url", w.db.url, "--include", include])
            #expect(after.exitCode == 0, "\(after.output)")
            #expect(after.stdout.contains("users can delete their own avatars: yes"))
            #expect(after.stdout.contains("avatar uploads: signed-in users only"))
            let anon = try w.storage.client(key: try StorageEmulator.keys(secret: w.storage.jwtSecret)["anon"]!)
            let refused = #expect(throws: StorageError.self) { try anon.upload(bucket: "avatars", path: "anon.jpeg", data: [1, 2, 3]) }
            #expect(refused?.kind == .denied)
            let userKey = try StorageEmulator.keys(secret: w.storage.jwtSecret, sub: w.users[0])["user"]!
            let user = try w.storage.client(key: userKey)
            try user.upload(bucket: "avatars", path: "mine.jpeg", data: [1, 2, 3])
            #expect(try user.deleteObjects(bucket: "avatars", names: ["mine.jpeg"]).map(\.name) == ["mine.jpeg"])
        }
    }

    @Test("the fence waits for app transactions up to fence_wait, then tries the batch again later; nothing is lost")
    func fenceWait() throws {
        try AvatarWorld.with { w in
            let orphans = (0..<6).map { "f\($0).jpeg" }
            try w.seed(orphans: orphans, kept: 1)
            // An app transaction that keeps profiles locked against the fence for about 3 s.
            let app = try w.db.connect()
            try app.execute("begin")
            try app.query("update public.profiles set full_name = 'busy' where id = $1", [w.users[1]])
            let started = Date()
            let job = try w.start(["--force"], config: "fence_wait = 1s")
            #expect(eventually(10) { job.stderrSoFar.contains("stayed locked by other transactions") })
            #expect(try w.storage.objects().count == 7, "nothing deleted while the fence could not be had")
            usleep(UInt32(max(0, 3 - Date().timeIntervalSince(started)) * 1_000_000))
            try app.execute("commit")
            let result = job.wait(timeout: 60)
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(try w.storage.objects() == ["keep0.jpeg"])
            #expect(try w.audited() == Set(orphans))
        }
    }

    @Test("a DELETE that outlives fence_request_timeout stops the run after that one request; what it deleted is settled, nothing is lost")
    func fenceRequestTimeout() throws {
        try AvatarWorld.with { w in
            let orphans = (0..<4).map { "t\($0).jpeg" }
            try w.seed(orphans: orphans, kept: 1)
            try w.storage.faults(["delay_ms": 1500])
            let (result, summary) = try w.run(["--force"], config: "fence_request_timeout = 1s\nbatch_size = 2\n")
            #expect(result.exitCode != 0, "\(result.output)")
            #expect(result.stdout.contains("ran into fence_request_timeout"), "\(result.output)")
            #expect(summary.isEmpty || summary["deleted"] == 0)
            usleep(1_000_000)   // the emulator carries the request out after the client gave up
            #expect((try w.storage.stats()["by_route"] as? [String: Int])?["DELETE /object"] == 1, "one request, not one a batch")
            try w.storage.faults(["delay_ms": 0])
            let (again, _) = try w.run(["--force"], config: "batch_size = 2\n")
            #expect(again.exitCode == 0, "\(again.output)")
            #expect(try w.storage.objects() == ["keep0.jpeg"])
            #expect(try w.audited() == Set(orphans))
        }
    }

    @Test("a DELETE a gateway answers with 502 while Storage carries it out later: the fence holds until the request can no longer land, the intent rows stay, the next run settles them",
          arguments: [true, false])
    func gatewayAnswerThenLateDelete(fence: Bool) throws {
        try AvatarWorld.with(users: 2) { w in
            try w.roomForLongRequests()
            try w.seed(orphans: ["late0.jpeg", "late1.jpeg"], kept: 1)
            try w.storage.faults(["gateway_next": 1, "gateway_status": 502, "gateway_late_ms": 1000])
            let job = try w.start(["--force"], config: "batch_size = 2\nfence = \(fence ? "on" : "off")\nfence_wait = 1s\nfence_request_timeout = 4s\n")
            #expect(eventually(30) { ((try? w.storage.stats()["faults"] as? Int) ?? 0) >= 1 }, "the gateway answered")
            // The app saves a profile pointing at a name of the batch just after the gateway's answer. Under the fence
            // the save waits until the request can no longer land, so the late DELETE comes first.
            try w.reference(1, "late0.jpeg")
            let presentAtSave = try w.storage.objects().contains("late0.jpeg")
            let result = job.wait(timeout: 60)
            #expect(result.exitCode != 0, "\(result.output)")
            #expect(result.stdout.contains("no final answer"), "\(result.output)")
            if fence {
                #expect(!presentAtSave, "the save went through before the late DELETE landed: the fence was let go while the request could still land")
                #expect(result.stdout.contains("the fence was held until its fence_request_timeout (4s)"), "\(result.stdout)")
            }
            #expect(eventually(10) { (try? w.storage.objects()) == ["keep0.jpeg"] }, "Storage carried the request out late")
            let c = try w.db.connect()
            #expect(try c.query("select count(*) from steward.deleted_objects where deleted_at is null").rows[0].decode(Int.self, at: 0) == 2,
                    "the intent rows of a request that may still land stay until a later run settles them")
            #expect((try w.storage.stats()["by_route"] as? [String: Int])?["DELETE /object"] == 1, "one request, then the run stopped")
            try w.reference(1, nil)
            let (again, summary) = try w.run(["--force"])
            #expect(again.exitCode == 0, "\(again.output)")
            #expect(again.stderr.contains("waiting out a request"), "\(again.stderr)")
            #expect(summary["deleted"] == 0)
            #expect(try w.audited() == ["late0.jpeg", "late1.jpeg"], "every object the late request deleted is audited")
            #expect(try c.query("select count(*) from steward.deleted_objects where deleted_at is null").rows[0].decode(Int.self, at: 0) == 0)
        }
    }

    @Test("the run's timeout passing while the fence is held for a request with no final answer does not cut the hold short: a save still lands after the late DELETE")
    func timeoutDuringTheHold() throws {
        try AvatarWorld.with(users: 2) { w in
            try w.roomForLongRequests()
            try w.seed(orphans: ["late0.jpeg"], kept: 1)
            // The gateway answers about a second in; the run's timeout passes at 6 s, Storage deletes 6.5 s after
            // the gateway's answer, and the fence is held until 9 s after it.
            try w.storage.faults(["gateway_next": 1, "gateway_status": 504, "gateway_late_ms": 6500])
            let job = try w.start(["--force"], config: "timeout = 6s\nfence_wait = 1s\nfence_request_timeout = 9s\n")
            #expect(eventually(30) { ((try? w.storage.stats()["faults"] as? Int) ?? 0) >= 1 }, "the gateway answered")
            try w.reference(1, "late0.jpeg")
            let presentAtSave = try w.storage.objects().contains("late0.jpeg")
            let result = job.wait(timeout: 60)
            #expect(!presentAtSave, "the timeout let the fence go while the request could still land: \(result.output)")
            #expect(result.exitCode != 0, "\(result.output)")
            #expect(try w.db.connect().query("select count(*) from steward.deleted_objects where deleted_at is null").rows[0].decode(Int.self, at: 0) == 1)
        }
    }

    @Test("avatar integrity, opt in: a save pointing at a missing object is refused with the app's message; others pass")
    func avatarIntegrity() throws {
        try AvatarWorld.with { w in
            let applied = try StewardProcess.run(["migrate", "--database-url", w.db.url, "--include", TestEnvironment.root + "/sql/optional/avatar-integrity"])
            #expect(applied.exitCode == 0, "\(applied.output)")
            try w.storage.upload(["there.jpeg"])
            try w.reference(0, "there.jpeg")
            try w.reference(1, "https://x.supabase.co/storage/v1/object/public/avatars/there.jpeg?t=1")
            try w.reference(2, "https://lh3.googleusercontent.com/a/face.jpeg")
            try w.reference(3, nil)
            let refused = #expect(throws: PostgresError.self) { try w.reference(4, "gone.jpeg") }
            #expect(refused?.sqlState == "23503")
            #expect(refused?.message.contains("upload it again") == true)
            #expect(refused?.detail == "avatars/gone.jpeg does not exist")
            #expect(throws: PostgresError.self) { try w.reference(4, "https://x.supabase.co/storage/v1/object/public/avatars/gone.jpeg") }
        }
    }
}

@Suite("references and Storage URLs")
struct ObjectReferenceTests {
    @Test("the forms a reference takes name their object", .needsCluster, arguments: [
        ("abc.jpeg", "abc.jpeg"), ("/abc.jpeg", "abc.jpeg"), ("u1/abc.jpeg", "u1/abc.jpeg"), ("avatars/k1.jpeg", "k1.jpeg"),
        ("https://x.supabase.co/storage/v1/object/public/avatars/abc.jpeg", "abc.jpeg"),
        ("https://x.supabase.co/storage/v1/object/public/avatars/abc.jpeg?t=1#x", "abc.jpeg"),
        ("https://x.supabase.co/storage/v1/object/authenticated/avatars/u1/abc.jpeg", "u1/abc.jpeg"),
        ("https://x.supabase.co/storage/v1/object/sign/avatars/abc.jpeg?token=eyJ", "abc.jpeg"),
        ("https://x.supabase.co/storage/v1/object/avatars/my%20face.jpeg", "my face.jpeg"),
        ("https://x.supabase.co/storage/v1/render/image/public/avatars/k3.jpeg?width=200", "k3.jpeg"),
        ("HTTPS://X.SUPABASE.CO/storage/v1/object/public/avatars/k4.jpeg", "k4.jpeg"),
        ("/storage/v1/object/public/avatars/k2.jpeg", "k2.jpeg"), ("//cdn.example.com/storage/v1/object/public/avatars/k8.jpeg", "k8.jpeg"),
        ("storage/v1/object/public/avatars/k21.jpeg", "k21.jpeg"), ("k5.jpeg?t=1700000000", "k5.jpeg"), ("k%206.jpeg", "k 6.jpeg"),
        ("https://x.supabase.co/storage/v1/object/public/avatars/./k24.jpeg", "k24.jpeg"),
        ("https://x.supabase.co/storage/v1/object/public/avatars/u1/../k25.jpeg", "k25.jpeg"),
        ("fence-b.jpeg\n", "fence-b.jpeg"), (" \tk9.jpeg\r\n", "k9.jpeg"), ("https://img.example.com/storage/v1/object/public/avatars/u2/a%2Fb.jpeg", "u2/a/b.jpeg"),
        ("k+6.jpeg", "k 6.jpeg"), ("k%25206.jpeg", "k 6.jpeg"), ("caf\u{E9}.jpeg", "caf\u{E9}.jpeg"),
    ])
    func names(reference: String, name: String) throws {
        try withTestDatabase { db in
            let readings = try ReferenceReadings(try db.connect())
            let rows = try readings.rows(reference, bucket: "avatars")
            #expect(rows.contains { !$0.loose && $0.name == Array(name.utf8) }, "\(rows)")
            #expect(!rows.contains { $0.loose }, "understood for certain")
        }
    }

    @Test("other buckets and empty values name nothing; what is not understood for certain protects what ends it", .needsCluster, arguments: [
        ("https://x.supabase.co/storage/v1/object/public/other/abc.jpeg", false), ("", false),
        ("https://lh3.googleusercontent.com/a/abc.jpeg", true), ("https://cdn.example.com/img/abc.jpeg?w=1", true), ("ftp:abc.jpeg", true),
        ("https://x.supabase.co/storage/v1/object/public/avatars/", false), ("%ff%fe.jpeg", true), ("{\"path\":\"abc.jpeg\"}", true), ("a\tabc.jpeg", true),
    ])
    func none(reference: String, loose: Bool) throws {
        try withTestDatabase { db in
            let readings = try ReferenceReadings(try db.connect())
            let rows = try readings.rows(reference, bucket: "avatars")
            #expect(rows.contains { $0.loose } == loose, "\(rows)")
            if !loose { #expect(rows.isEmpty, "\(rows)") }
            if loose, reference.contains("abc.jpeg") {
                #expect(try readings.mayName(reference, bucket: "avatars", object: "abc.jpeg"))
                #expect(try readings.mayName(reference, bucket: "avatars", object: "u9/abc.jpeg"), "the last segment ends the value")
                #expect(try !readings.mayName(reference, bucket: "avatars", object: "other.jpeg"))
            }
        }
    }

    @Test("references borrowed from real clients (Tests/Fuzz/reference-forms.tsv) keep their objects", .needsCluster)
    func borrowed() throws {
        let text = try String(contentsOfFile: TestEnvironment.root + "/Tests/Fuzz/reference-forms.tsv", encoding: .utf8)
        let lines = text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
        #expect(lines.count >= 25)
        try withTestDatabase { db in
            let readings = try ReferenceReadings(try db.connect())
            var missed: [String] = []
            for line in lines {
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                guard fields.count == 2 else { Issue.record("not value<TAB>name: \(line)"); continue }
                let value = String(fields[0]).replacingOccurrences(of: "\\n", with: "\n").replacingOccurrences(of: "\\r", with: "\r")
                    .replacingOccurrences(of: "\\t", with: "\t")
                let rows = try readings.rows(value, bucket: "avatars")
                if !rows.contains(where: { !$0.loose && $0.name == Array(fields[1].utf8) }) || rows.contains(where: { $0.loose }) {
                    missed.append("\(value.debugDescription) → \(rows.map { String(decoding: $0.name, as: UTF8.self) + ($0.loose ? " (loose)" : "") })")
                }
            }
            #expect(missed.isEmpty, "\(missed)")
            FaultLedger.record("reference forms: borrowed from real clients", runs: 0, faults: 0, objectsChecked: lines.count,
                               losses: missed.count, cases: lines.count)
        }
    }

    @Test("the project URL and the Storage URL are both accepted")
    func baseURL() throws {
        #expect(try StorageClient.storageBaseURL("https://abc.supabase.co") == "https://abc.supabase.co/storage/v1")
        #expect(try StorageClient.storageBaseURL("https://abc.supabase.co/storage/v1/") == "https://abc.supabase.co/storage/v1")
        #expect(throws: StorageError.self) { try StorageClient.storageBaseURL("abc.supabase.co") }
    }
}
