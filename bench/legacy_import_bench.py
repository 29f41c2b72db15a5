#!/usr/bin/env python3
"""import-legacy-users at scale: the older tutorial's "User" table with 10,000 and 200,000 users (and more with
BENCH_SIZES), a row each plus a realistic mix of rows the import must not take. Reports the time and peak RSS of
`steward job run import-legacy-users --dry-run` and of the import itself, and the summary (its counts add up to the
table's rows). The import runs in the database, so steward's peak RSS should be the same at every size.

    bench/run.sh legacy          (builds release, starts the local cluster, runs this; a minute or two)

Environment: BENCH_SIZES (default 10000,200000; 2000000 takes a few minutes to prepare), STEWARD_BINARY (default
.build/release/steward), BENCH_BEFORE_BINARY (a second build measured on the same databases, e.g. an older commit's).
"""
import datetime, os, platform, subprocess, sys, time

import measure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEWARD = os.environ.get("STEWARD_BINARY", os.path.join(ROOT, ".build/release/steward"))
BEFORE = os.environ.get("BENCH_BEFORE_BINARY")
PORT = os.environ.get("STEWARD_PG_PORT", "54329")
ADMIN = f"postgresql://supabase_admin:steward-local@127.0.0.1:{PORT}"
SIZES = [int(x) for x in os.environ.get("BENCH_SIZES", "10000,200000").split(",")]

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
            real = run_job(binary, url, False)
            filled = int(psql(url, "select count(*) from public.profiles where full_name is not null"))
            results.append((n, rows, label, dry, real, filled, load()))
            print(f"  {label} {n:,}: dry run {dry[0]:.2f} s {dry[1] / 1024:.0f} MiB, import {real[0]:.2f} s {real[1] / 1024:.0f} MiB, "
                  f"{filled:,} names filled", file=sys.stderr)
        psql(ADMIN + "/postgres", f"drop database if exists {db} with (force)")
    print(f"## import-legacy-users — {datetime.date.today()} — {platform.node()} ({os.cpu_count()} cores, {platform.machine()})\n")
    print("| users | legacy rows | build | dry run | dry run peak RSS | import | import peak RSS | names filled | load average |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, rows, label, dry, real, filled, avg in results:
        print(f"| {n:,} | {rows:,} | {label} | {dry[0]:.2f} s | {dry[1] / 1024:.0f} MiB | {real[0]:.2f} s | {real[1] / 1024:.0f} MiB | {filled:,} | {avg} |")
    print("\nPeak RSS is steward's own (wait4 on the process). Summaries of the imports:")
    for n, rows, label, dry, real, filled, avg in results:
        print(f"- {label} {n:,}: `{real[2]}`")


if __name__ == "__main__":
    sys.exit(main())
