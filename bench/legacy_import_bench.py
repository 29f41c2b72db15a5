#!/usr/bin/env python3
"""import-legacy-users at scale: the older tutorial's "User" table with 10,000 and 200,000 users (and more with
BENCH_SIZES), a row each plus a realistic mix of rows the import must not take. Reports the time and peak RSS of
`steward job run import-legacy-users --dry-run` and of the import itself, and the summary (its counts add up to the
table's rows). The import runs in the database, so steward's peak RSS should be the same at every size.

    bench/run.sh legacy          (builds release, starts the local cluster, runs this; a minute or two)

With BENCH_SAVES=1, users save their profiles while the import fills them: pgbench as `authenticated` (as PostgREST
runs a request: role, 8 s statement_timeout, the user's JWT claims), one connection saving random users' profiles
and one saving, each time, the first profile the import has not filled yet (in the batch being written or the
next; a thread follows the import to find it). Reports each one's max and p99 latency against the import's longest
transaction (`longest_transaction_ms`); a save that waited out its statement_timeout counts as an error.

Environment: BENCH_SIZES (default 10000,200000; 2000000 takes a few minutes to prepare), STEWARD_BINARY (default
.build/release/steward), BENCH_BEFORE_BINARY (a second build measured on the same databases, e.g. an older commit's),
BENCH_SAVES=1 (the saves above, during the import), BENCH_SAVE_RATE (saves a second of each connection, default 20).
"""
import datetime, os, platform, signal, subprocess, sys, tempfile, threading, time

import psycopg

import measure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEWARD = os.environ.get("STEWARD_BINARY", os.path.join(ROOT, ".build/release/steward"))
BEFORE = os.environ.get("BENCH_BEFORE_BINARY")
PORT = os.environ.get("STEWARD_PG_PORT", "54329")
ADMIN = f"postgresql://supabase_admin:steward-local@127.0.0.1:{PORT}"
SIZES = [int(x) for x in os.environ.get("BENCH_SIZES", "10000,200000").split(",")]
SAVES = os.environ.get("BENCH_SAVES") == "1"
SAVE_RATE = os.environ.get("BENCH_SAVE_RATE", "20")

# Users and their empty profiles loaded the fast way (the sign-up trigger off, the email index built after), then the
# legacy table: a row a user, and of every 100 users one of each: no email, another email, an id that is not a UUID,
# an id with no auth user, a second identical row, a second row with another name.
FILL = """
alter table auth.users disable trigger on_auth_user_created;
drop index if exists auth.users_email_partial_key;
insert into auth.users (id, aud, role, email, created_at, updated_at)
  select id, 'authenticated', 'authenticated', 'u' || g || '@example.com', now(), now()
  from (select gen_random_uuid() as id, g from generate_series(1, %(n)s) g order by 1) u;
create unique index users_email_partial_key on auth.users (email) where (is_sso_user = false);
alter table auth.users enable trigger on_auth_user_created;
insert into public.profiles (id) select id from auth.users order by id;
insert into public."User" ("userID", name, email)
  select case when g %% 100 = 3 then 'legacy-' || g when g %% 100 = 6 then gen_random_uuid()::text else id::text end,
         'Legacy ' || g,
         case when g %% 100 = 1 then null when g %% 100 = 2 then 'other' || g || '@example.com' else email end
  from (select id, email, split_part(substr(email, 2), '@', 1)::int as g from auth.users) u
  union all
  select id::text, 'Legacy ' || g || case when g %% 100 = 5 then ' (changed)' else '' end, email
  from (select id, email, split_part(substr(email, 2), '@', 1)::int as g from auth.users) u where g %% 100 in (4, 5);
"""


def psql(url, sql):
    return subprocess.run(["psql", url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True, capture_output=True,
                          text=True, env={**os.environ, "PGOPTIONS": "-c client_min_messages=warning"}).stdout


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def prepare(n):
    db = f"bench_legacy_{n}"
    psql(ADMIN + "/postgres", f"drop database if exists {db} with (force)")
    psql(ADMIN + "/postgres", f"create database {db} template steward_template_2026 owner postgres")
    psql(ADMIN + "/postgres", f"alter database {db} set supautils_stand_in.policy_grants = 'postgres:storage.objects'")
    url = f"postgresql://postgres:steward-local@127.0.0.1:{PORT}/{db}"
    subprocess.run([STEWARD, "migrate", "--database-url", url, "--migrations", f"{ROOT}/sql/migrations", "--log-level", "warning"],
                   check=True, stdout=subprocess.DEVNULL)
    started = time.perf_counter()
    psql(url, open(os.path.join(ROOT, "sql/demo/legacy_user_table.sql")).read())
    psql(f"{ADMIN}/{db}", "set synchronous_commit = off; set maintenance_work_mem = '256MB';" + FILL % {"n": n})
    psql(f"{ADMIN}/{db}", "vacuum analyze auth.users, public.profiles, public.\"User\"")
    rows = int(psql(url, 'select count(*) from public."User"'))
    print(f"  {n:,} users, {rows:,} legacy rows prepared in {time.perf_counter() - started:.1f} s (load average {load()})", file=sys.stderr)
    return db, url, rows


def run_job(binary, url, dry_run):
    args = [binary, "job", "run", "import-legacy-users", "--database-url", url, "--log-level", "error"] + (["--dry-run"] if dry_run else [])
    seconds, status, out, err, peak = measure.run(args)
    if status != 0:
        raise SystemExit(f"{binary}: {out}{err}")
    summary = " ".join(line.strip().replace(": ", "=") for line in out.splitlines()[1:] if ": " in line)
    return seconds, peak, summary


# A profile save as PostgREST makes it for a signed-in user (`bench_save_target` names whose: a random user, or the
# import's frontier). RLS lets the user update their own row only.
SAVE_SCRIPT = """\\set n random(1, %(users)s)
BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT set_config('role', 'authenticated', true), set_config('statement_timeout', '8s', true),
       set_config('request.jwt.claims', '{"role":"authenticated","sub":"' || (select public.bench_save_target(%(which)s, :n)) || '"}', true);
UPDATE public.profiles SET full_name = 'Saved by the user ' || :n WHERE id = (select public.bench_save_target(%(which)s, :n));
COMMIT;
"""

SAVE_SETUP = """
create schema if not exists bench;
create table bench.ids as select row_number() over (order by id) as n, id from auth.users;
alter table bench.ids add primary key (n);
create table bench.frontier (id uuid);
insert into bench.frontier values (null);
-- The bench's own lookup, outside what the app's roles may read: the function reads it as its owner.
create function public.bench_save_target(frontier boolean, n bigint) returns uuid language sql stable security definer set search_path = ''
  as $$ select case when frontier then (select id from bench.frontier) else (select id from bench.ids i where i.n = bench_save_target.n) end $$;
grant execute on function public.bench_save_target(boolean, bigint) to authenticated;
analyze bench.ids;
"""


class Saves:
    """Two pgbench connections saving profiles while the import runs, and the thread that follows its frontier."""

    def __init__(self, db, users):
        self.folder = tempfile.mkdtemp(prefix="legacy-saves-")
        self.db, self.stopped, self.procs = db, threading.Event(), []
        psql(f"{ADMIN}/{db}", "drop schema if exists bench cascade; drop function if exists public.bench_save_target;" + SAVE_SETUP)
        self.scripts = {}
        for name, which in (("random", "false"), ("frontier", "true")):
            path = os.path.join(self.folder, "script-" + name + ".sql")
            with open(path, "w") as f:
                f.write(SAVE_SCRIPT % {"users": users, "which": which})
            self.scripts[name] = path
        self.started = threading.Event()
        self.thread = threading.Thread(target=self.follow, daemon=True)
        self.thread.start()

    def follow(self):
        """Every 20 ms: the first profile not filled yet, from the last one on (the import fills in id order)."""
        with psycopg.connect(f"{ADMIN}/{self.db}", autocommit=True) as c:
            last = None
            while not self.stopped.is_set():
                if last is None:
                    # A filled profile among the first by id says the import is filling (it fills in id order); the
                    # saves start then. Read through the key: a scan of the table each time would load the machine.
                    if c.execute("select count(full_name) from (select full_name from public.profiles order by id limit 200) p").fetchone()[0]:
                        last = c.execute("select id from public.profiles order by id limit 1").fetchone()[0]
                        continue
                    else:
                        self.stopped.wait(0.1)
                else:
                    row = c.execute("select id from public.profiles where id >= %s and full_name is null order by id limit 1", (last,)).fetchone()
                    if row:
                        last = row[0]
                        c.execute("update bench.frontier set id = %s", (last,))
                        if not self.started.is_set():
                            self.start_pgbench()
                            self.started.set()
                self.stopped.wait(0.02)

    def start_pgbench(self):
        for name in self.scripts:
            self.procs.append(threading.Thread(target=self.saving, args=(name,), daemon=True))
            self.procs[-1].start()

    def saving(self, name):
        """pgbench runs of 5 s, one after the other until stopped: a run cut short by a signal would lose its
        buffered log, so each one ends on its own."""
        env = {**os.environ, "PGPASSWORD": "steward-local", "PGSSLMODE": "disable"}
        k = 0
        while not self.stopped.is_set():
            prefix = os.path.join(self.folder, f"log-{name}-{k}")
            k += 1
            with open(os.path.join(self.folder, f"stderr-{name}"), "a") as err:
                subprocess.run(["pgbench", "-n", "-h", "127.0.0.1", "-p", PORT, "-U", "authenticator", "-c", "1", "-j", "1", "-R", SAVE_RATE,
                                "-T", "5", "-M", "extended", "-l", "--log-prefix", prefix, "-f", self.scripts[name], self.db],
                               stdout=subprocess.DEVNULL, stderr=err, env=env)

    def stop(self):
        self.ended = time.time()
        self.stopped.set()
        self.thread.join(10)
        for thread in self.procs:
            thread.join(30)
        return {name: self.latencies(name) for name in self.scripts}

    def latencies(self, name):
        """(latencies in ms of the saves that completed, saves that failed): from pgbench's log, lag included (-R)."""
        done, failed = [], 0
        for entry in os.listdir(self.folder):
            if not entry.startswith("log-" + name + "-"):
                continue
            with open(os.path.join(self.folder, entry)) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) < 6:
                        continue
                    # Only the saves due before the import ended (the last pgbench run goes on a little after it).
                    at = int(parts[4]) + int(parts[5]) / 1e6
                    if parts[2] in ("failed", "skipped", "serialization", "deadlock"):
                        failed += at <= self.ended
                    elif at - int(parts[2]) / 1e6 <= self.ended:
                        done.append(int(parts[2]) / 1000)
        return sorted(done), failed


def summarize(latencies):
    done, failed = latencies
    if not done:
        return f"no saves, {failed} failed"
    p99 = done[min(len(done) - 1, int(len(done) * 0.99))]
    return f"{len(done)} saves, {failed} failed, p99 {p99:.1f} ms, max {done[-1]:.1f} ms"


def main():
    builds = [("after", STEWARD)] + ([("before", BEFORE)] if BEFORE else [])
    results = []
    for n in SIZES:
        db, url, rows = prepare(n)
        for label, binary in builds:
            # Every build starts from the same empty names (an earlier build's import is undone first).
            psql(f"{ADMIN}/{db}", "update public.profiles set full_name = null where full_name is not null")
            psql(f"{ADMIN}/{db}", "vacuum analyze public.profiles")
            dry = run_job(binary, url, True)
            saves = Saves(db, n) if SAVES else None
            real = run_job(binary, url, False)
            saved = saves.stop() if saves else None
            filled = int(psql(url, "select count(*) from public.profiles where full_name is not null"))
            results.append((n, rows, label, dry, real, filled, load(), saved))
            print(f"  {label} {n:,}: dry run {dry[0]:.2f} s {dry[1] / 1024:.0f} MiB, import {real[0]:.2f} s {real[1] / 1024:.0f} MiB, "
                  f"{filled:,} names filled", file=sys.stderr)
            if saved:
                print(f"    saves of random profiles: {summarize(saved['random'])}; at the frontier: {summarize(saved['frontier'])}", file=sys.stderr)
        psql(ADMIN + "/postgres", f"drop database if exists {db} with (force)")
    print(f"## import-legacy-users — {datetime.date.today()} — {platform.node()} ({os.cpu_count()} cores, {platform.machine()})\n")
    print("| users | legacy rows | build | dry run | dry run peak RSS | import | import peak RSS | names filled | load average |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, rows, label, dry, real, filled, avg, saved in results:
        print(f"| {n:,} | {rows:,} | {label} | {dry[0]:.2f} s | {dry[1] / 1024:.0f} MiB | {real[0]:.2f} s | {real[1] / 1024:.0f} MiB | {filled:,} | {avg} |")
    print("\nPeak RSS is steward's own (wait4 on the process). Summaries of the imports:")
    for n, rows, label, dry, real, filled, avg, saved in results:
        print(f"- {label} {n:,}: `{real[2]}`")
    if any(saved for *_, saved in results):
        print(f"\nProfile saves during the import (pgbench as authenticated, {SAVE_RATE} a second on each connection, latency from when"
              " each was due, from the first filled profile to the import's end), against the import's longest transaction:\n")
        print("| users | build | longest transaction | random profiles: saves, failed, p99, max | frontier: saves, failed, p99, max |")
        print("|---|---|---|---|---|")
        for n, rows, label, dry, real, filled, avg, saved in results:
            if saved:
                longest = dict(kv.split("=") for kv in real[2].split()).get("longest_transaction_ms", "?")
                print(f"| {n:,} | {label} | {longest} ms | {summarize(saved['random'])} | {summarize(saved['frontier'])} |")


if __name__ == "__main__":
    sys.exit(main())
