#!/usr/bin/env python3
"""orphan-avatars at scale: 100,000, 1,000,000 and 3,000,000 objects and profiles (10 % orphans).

Reports the candidate scan (`--dry-run`, the default that reads every column that can hold a reference) against
two bare anti-joins on the same database: over `profiles.avatar_url` alone (the rounds before), and over the same
columns Steward reads (each value, a URL cut to its name, hashed once: the least any reading of them costs); the
Storage proof's cost a run (`storage_proof_ms`); then the same scan with a 2 GB text-heavy table beside the profiles
(BENCH_TEXT_GB, default 2; 0 skips it) at the smallest size; peak RSS at every size, deletions per second through the Storage emulator with the number of HTTP requests, and the common
community approach (walk the bucket with POST /object/list, 100 names a page, and look each name up) at 100,000.
3,000,000 rather than 10,000,000: preparing 3,000,000 took about 6 minutes on the shared 2-core machine, so
10,000,000 would take 20 minutes or more before anything is measured (BENCH_SIZES=...,10000000 runs it).
Environment: BENCH_SIZES, BENCH_TEXT_GB, BENCH_EMULATOR_PORT (default 54399), BENCH_KEEP_DB=1 (keep and reuse the databases).

    bench/run.sh orphans          (builds release, starts the cluster, runs this; several minutes)
"""
import datetime, json, os, platform, subprocess, sys, tempfile, time, urllib.request

import measure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEWARD = os.environ.get("STEWARD_BINARY", os.path.join(ROOT, ".build/release/steward"))
PORT = os.environ.get("STEWARD_PG_PORT", "54329")
ADMIN = f"postgresql://supabase_admin:steward-local@127.0.0.1:{PORT}"
SIZES = [int(x) for x in os.environ.get("BENCH_SIZES", "100000,1000000,3000000").split(",")]
EMULATOR_PORT = int(os.environ.get("BENCH_EMULATOR_PORT", "54399"))
SECRET = "bench-jwt-secret"
# BENCH_KEEP_DB=1 keeps the databases after the run and reuses them next time (preparing 10,000,000 takes a while).
KEEP = os.environ.get("BENCH_KEEP_DB") == "1"

# Loaded the fast way (one generate_series insert per table, rows in index order, the secondary indexes built after
# the load, no row rewritten afterwards): the bare anti-join and Steward read the same tables, so nothing measured
# changes. Half the references are bare names, half full public URLs with a cache-buster; 10 %% of profiles have none,
# so 10 %% of the objects are orphans.
FILL = """
alter table auth.users disable trigger on_auth_user_created;
drop index if exists auth.users_email_partial_key;
insert into auth.users (id, aud, role, email, created_at, updated_at)
  select id, 'authenticated', 'authenticated', 'u' || g || '@example.com', now(), now()
  from (select gen_random_uuid() as id, g from generate_series(1, %(n)s) g order by 1) u;
create unique index users_email_partial_key on auth.users (email) where (is_sso_user = false);
alter table auth.users enable trigger on_auth_user_created;
insert into public.profiles (id, avatar_url)
  select id, case when ('x' || substr(md5(id::text), 1, 8))::bit(32)::int %% 10 = 0 then null
                  when n %% 2 = 0 then 'img-' || md5(id::text) || '.jpeg'
                  else 'https://x.supabase.co/storage/v1/object/public/avatars/img-' || md5(id::text) || '.jpeg?t=1' end
  from (select id, row_number() over (order by id) as n from auth.users) u order by id;
alter table storage.objects disable trigger update_objects_updated_at;
drop index if exists storage.name_prefix_search;
-- One object per profile (90 %% of profiles keep theirs), plus the orphans: 10 %% of all objects.
insert into storage.objects (bucket_id, name, metadata, created_at, updated_at)
  select 'avatars', name, jsonb_build_object('size', 20000), now() - interval '2 days', now() - interval '2 days'
  from (select 'img-' || md5(id::text) || '.jpeg' as name from public.profiles) p order by name;
create index name_prefix_search on storage.objects using btree (name text_pattern_ops);
alter table storage.objects enable trigger update_objects_updated_at;
"""

ANTI_JOIN = """
select count(*), sum((o.metadata->>'size')::bigint) from storage.objects o
where o.bucket_id = 'avatars'
  and not exists (select 1 from public.profiles p where p.avatar_url = o.name)
  and not exists (select 1 from public.profiles p
                  where split_part(p.avatar_url, '?', 1) = 'https://x.supabase.co/storage/v1/object/public/avatars/' || o.name)
"""


EVERY_COLUMN = open(os.path.join(ROOT, "Sources/OrphanAvatars/every-column.sql")).read()

# A text-heavy table an app might keep beside the profiles (posts with a body and a jsonb of metadata): rows of 58
# distinct md5s (1,913 characters, just under the size that TOAST compresses), so the bytes on disk are the bytes read.
TEXT_TABLE = """
create table public.posts (id bigint primary key, author uuid, title text, body text, meta jsonb);
insert into public.posts
  select g, null, 'post ' || g, (select string_agg(md5(g::text || '-' || i), ' ') from generate_series(1, 58) i),
         jsonb_build_object('lang', 'en', 'words', 300)
  from generate_series(1, %(rows)s) g
"""


def same_columns_floor(url):
    """The bare anti-join over every column Steward's default reads (every-column.sql, readable ones): each value once,
    a URL cut to its name by one regular expression, hashed against the bucket's names."""
    columns = [line.split("|") for line in psql(url, EVERY_COLUMN).splitlines() if line]
    parts = [f'select regexp_replace(split_part("{c}"::text, \'?\', 1), \'^.*/avatars/\', \'\') as v from only "{s}"."{t}" where "{c}" is not null'
             for s, t, c, readable, _ in columns if readable == "t"]
    return ("with refs as materialized (" + " union all ".join(parts) + ")\n"
            "select count(*) from storage.objects o where o.bucket_id = 'avatars' and not exists (select 1 from refs r where r.v = o.name)"), len(parts)


def psql(url, sql):
    return subprocess.run(["psql", url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True, capture_output=True, text=True,
                          env={**os.environ, "PGOPTIONS": "-c client_min_messages=warning"}).stdout


def prepare(n):
    """The database of `n` objects and profiles, and the seconds its preparation took (0 when BENCH_KEEP_DB=1 found
    it ready from an earlier run)."""
    db = f"bench_orphans_{n}"
    url = f"postgresql://postgres:steward-local@127.0.0.1:{PORT}/{db}"
    if KEEP and psql(ADMIN + "/postgres", f"select 1 from pg_database where datname = '{db}'").strip() == "1":
        return db, url, 0.0
    start = time.perf_counter()
    psql(ADMIN + "/postgres", f"drop database if exists {db} with (force)")
    psql(ADMIN + "/postgres", f"create database {db} template steward_template_2026 owner postgres")
    # The platform lets postgres manage storage policies (supautils); the shim's stand-in reads this per-database setting.
    psql(ADMIN + "/postgres", f"alter database {db} set supautils_stand_in.policy_grants = 'postgres:storage.objects'")
    subprocess.run([STEWARD, "migrate", "--database-url", url, "--log-level", "warning"], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    for statement in FILL.split(";\n"):
        if statement.strip():
            psql(f"{ADMIN}/{db}", statement % {"n": n})
    psql(f"{ADMIN}/{db}", "vacuum analyze")
    return db, url, time.perf_counter() - start


def steward(url, folder, key_file, extra):
    config = os.path.join(folder, "bench.ini")
    with open(config, "w") as f:
        f.write("[job.orphan-avatars]\nbatch_size = 1000\nmax_per_run = 100000000\n")
    seconds, status, out, err, peak = measure.run([STEWARD, "job", "run", "orphan-avatars", "--database-url", url, "--config", config, "--json",
                                                   "--log-level", "error", "--storage-url", f"http://127.0.0.1:{EMULATOR_PORT}",
                                                   "--service-key-file", key_file] + extra)
    if status != 0:
        raise SystemExit(out + err)
    return seconds, json.loads(out)["summary"], peak


def emulator(db, folder):
    return subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts/storage-emulator.py"), "--port", str(EMULATOR_PORT),
                             "--database-url", f"postgresql://supabase_storage_admin:steward-local@127.0.0.1:{PORT}/{db}",
                             "--data-dir", os.path.join(folder, "data"), "--jwt-secret", SECRET],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


COMMUNITY_SAMPLE = 5000


def community(url, key, db_url):
    """List the bucket 100 names a page through the API and look each name up in the table (the first
    COMMUNITY_SAMPLE objects: the lookups have no index to use, so the whole bucket would take hours)."""
    start, offset, orphans, requests = time.perf_counter(), 0, 0, 0
    import psycopg
    with psycopg.connect(db_url) as conn:
        while True:
            body = json.dumps({"prefix": "", "limit": 100, "offset": offset, "sortBy": {"column": "name", "order": "asc"}}).encode()
            req = urllib.request.Request(f"{url}/storage/v1/object/list/avatars", data=body, method="POST",
                                         headers={"apikey": key, "Authorization": "Bearer " + key, "Content-Type": "application/json"})
            page = json.loads(urllib.request.urlopen(req).read())
            requests += 1
            if not page:
                break
            for item in page:
                row = conn.execute("select 1 from public.profiles where avatar_url = %s or avatar_url = %s limit 1",
                                   (item["name"], "https://x.supabase.co/storage/v1/object/public/avatars/" + item["name"] + "?t=1")).fetchone()
                orphans += row is None
            offset += 100
            if offset >= COMMUNITY_SAMPLE:
                break
    return time.perf_counter() - start, orphans, requests


TEXT_GB = float(os.environ.get("BENCH_TEXT_GB", "2"))


def measure_scan(url, folder, key_file):
    """Three dry runs beside the two bare anti-joins, medians; the summary of the last run."""
    floor_sql, floor_columns = same_columns_floor(url)
    scans, floors, same, peaks, proofs = [], [], [], [], []
    for _ in range(3):
        start = time.perf_counter(); psql(url, ANTI_JOIN); floors.append(time.perf_counter() - start)
        start = time.perf_counter(); psql(url, floor_sql); same.append(time.perf_counter() - start)
        seconds, summary, peak = steward(url, folder, key_file, ["--dry-run"])
        scans.append(seconds)
        peaks.append(peak)
        proofs.append(summary["storage_proof_ms"])
    return {"scan": sorted(scans)[1], "floor": sorted(floors)[1], "same": sorted(same)[1], "peak": max(peaks),
            "candidates": summary["candidates"], "columns": summary["columns_read"], "floor_columns": floor_columns,
            "bytes": summary["bytes_read"], "values": summary["values_read"], "proof": sorted(proofs)[1],
            "load": open("/proc/loadavg").read().split()[0]}


def main():
    rows = []
    keys = json.loads(subprocess.run([sys.executable, os.path.join(ROOT, "scripts/storage-emulator.py"), "--jwt-secret", SECRET, "--print-keys"],
                                     check=True, capture_output=True, text=True).stdout)
    for n in SIZES:
        db, url, prepared = prepare(n)
        with tempfile.TemporaryDirectory() as folder:
            key_file = os.path.join(folder, "key")
            with open(key_file, "w") as f:
                f.write(keys["service_role"])
            os.chmod(key_file, 0o600)
            emu = emulator(db, folder)
            time.sleep(1.5)
            try:
                row = measure_scan(url, folder, key_file)
                row.update(n=n, prepared=prepared)
                if n == min(SIZES) and TEXT_GB > 0:
                    start = time.perf_counter()
                    psql(f"{ADMIN}/{db}", "drop table if exists public.posts")
                    psql(f"{ADMIN}/{db}", TEXT_TABLE % {"rows": int(TEXT_GB * 1024 ** 3 / 1913)})
                    psql(f"{ADMIN}/{db}", "vacuum analyze public.posts")
                    text = measure_scan(url, folder, key_file)
                    text.update(n=n, prepared=time.perf_counter() - start,
                                table_bytes=int(psql(url, "select pg_table_size('public.posts')").strip()))
                    psql(f"{ADMIN}/{db}", "drop table public.posts")
                    row["text"] = text
                if n == min(SIZES):
                    c_seconds, c_orphans, c_requests = community(f"http://127.0.0.1:{EMULATOR_PORT}", keys["service_role"], url)
                    row.update(community=c_seconds, community_requests=c_requests, community_orphans=c_orphans)
                    seconds, summary, _ = steward(url, folder, key_file, [])
                    row.update(delete_seconds=seconds, deleted=summary["deleted"], requests=summary["http_requests"],
                               fence=summary.get("fence_held_ms_max", 0), window=summary.get("object_window_ms_max", 0),
                               proof_delete=summary.get("storage_proof_ms", 0))
                rows.append(row)
            finally:
                emu.kill()
        if not KEEP:
            psql(ADMIN + "/postgres", f"drop database if exists {db} with (force)")

    print(f"## orphan-avatars — {datetime.date.today()} — {platform.node()} ({os.cpu_count()} cores, {platform.machine()}), medians of 3\n")
    print("| objects | beside | candidates | columns read | values, bytes read | steward scan (--dry-run) | anti-join, avatar_url only | ratio | "
          "anti-join, same columns | ratio | Storage proof | peak RSS | preparation | load (1 min) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        for beside, m in [("profiles", r)] + ([(f"+ {m['table_bytes'] / 1024 ** 3:.1f} GiB posts", m) for m in [r["text"]]] if "text" in r else []):
            prepared = f"{m['prepared']:.0f} s" if m["prepared"] else "reused"
            print(f"| {r['n']:,} | {beside} | {m['candidates']:,} | {m['columns']} ({m['floor_columns']} in the floor) | "
                  f"{m['values']:,}, {m['bytes'] / 1024 ** 2:,.0f} MiB | {m['scan']:.2f} s | {m['floor']:.2f} s | {m['scan'] / m['floor']:.1f} | "
                  f"{m['same']:.2f} s | {m['scan'] / m['same']:.1f} | {m['proof']} ms | {m['peak'] / 1024:.0f} MiB | {prepared} | {m['load']} |")
    small = rows[0]
    print(f"\nDeleting {small['deleted']:,} orphans of {small['n']:,} through the emulator: {small['delete_seconds']:.1f} s "
          f"({small['deleted'] / small['delete_seconds']:.0f} deletions/s) in {small['requests']} HTTP requests; the fence held profile "
          f"writes for at most {small['fence']} ms a batch (1,000 names); the longest window between reading a batch's objects "
          f"again and the answer to its DELETE was {small['window']} ms; the Storage proof took {small['proof_delete']} ms of the run.")
    projected = small["community"] * small["n"] / COMMUNITY_SAMPLE
    print(f"The community approach (POST /object/list, 100 a page, one lookup per name): {small['community']:.1f} s and "
          f"{small['community_requests']:,} requests for the first {COMMUNITY_SAMPLE:,} objects ({small['community_orphans']:,} orphans); "
          f"at that rate {small['n']:,} objects take about {projected:.0f} s and {small['n'] // 100:,} list requests, "
          f"{projected / small['scan']:.0f} times Steward's scan (and the list offsets grow, so more).")
    print("Peak RSS is steward's own (wait4 on the process), the largest of the three runs.")


if __name__ == "__main__":
    sys.exit(main())
