#!/usr/bin/env python3
"""username-check at scale: a streaming pass over 100,000, 1,000,000 and 10,000,000 profiles with a realistic mix
of violations, against a pure-SQL query that checks only the simple rules (length, pattern, case-insensitive
duplicates) on the same data. Reports time, peak RSS, the ratio and the load average.

    bench/run.sh usernames          (builds release, starts the local cluster, runs this; about half an hour)

BENCH_SIZES=100000,1000000 picks the sizes, BENCH_RUNS=1 the runs a size (median; default 3).
"""
import os, platform, subprocess, sys, time, datetime

import measure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEWARD = os.environ.get("STEWARD_BINARY", os.path.join(ROOT, ".build/release/steward"))
PORT = os.environ.get("STEWARD_PG_PORT", "54329")
ADMIN = f"postgresql://supabase_admin:steward-local@127.0.0.1:{PORT}"
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
SIZES = [int(x) for x in os.environ.get("BENCH_SIZES", "100000,1000000,10000000").split(",")]

MIX = """
with n as (select g, gen_random_uuid() as id from generate_series(1, %(n)s) g),
u as (insert into auth.users (id, aud, role, email, created_at, updated_at)
      select id, 'authenticated', 'authenticated', 'u' || g || '@example.com', now(), now() from n returning id)
insert into public.profiles (id, username)
select n.id,
  case
    when g %% 20 = 0 then null                                   -- 5%% without a username
    when g %% 50 = 1 then 'User_' || g                           -- 2%% upper case (normalisation, pattern)
    when g %% 200 = 2 then 'user_' || (g - 1)                    -- 0.5%% case duplicates of the row before
    when g %% 500 = 3 then 'pаypal' || g                          -- 0.2%% Cyrillic а (mixed script, confusable)
    when g %% 500 = 4 then 'paypal' || (g - 1)                    --        and their Latin twins
    when g %% 1000 = 5 then (array['admin','support','root','help','api'])[1 + g %% 5] || case when g %% 3 = 0 then '' else '' end
    when g %% 1000 = 6 then 'zero' || chr(8205) || 'width' || g  -- 0.1%% invisible characters
    when g %% 1000 = 7 then ' lead' || g                         -- 0.1%% leading space
    when g %% 1000 = 8 then 'ｕｓｅｒ' || g                       -- 0.1%% fullwidth (NFKC)
    else 'user_' || g
  end
from n
on conflict do nothing
"""

SIMPLE = """
select count(*) filter (where char_length(username) not between 3 and 30),
       count(*) filter (where username !~ '^[a-z0-9_.]+$' or username ~ '(^\\.|\\.$|\\.\\.)'),
       (select count(*) from (select lower(username) from public.profiles where username is not null group by 1 having count(*) > 1) d)
from public.profiles where username is not null
"""


def psql(url, sql, quiet=True):
    return subprocess.run(["psql", url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True, capture_output=True,
                          text=True, env={**os.environ, "PGOPTIONS": "-c client_min_messages=warning"}).stdout


def prepare(n):
    db = f"bench_users_{n}"
    psql(ADMIN + "/postgres", f"drop database if exists {db} with (force)")
    psql(ADMIN + "/postgres", f"create database {db} template steward_template_2026 owner postgres")
    # The platform lets postgres manage storage policies (supautils); the shim's stand-in reads this per-database setting.
    psql(ADMIN + "/postgres", f"alter database {db} set supautils_stand_in.policy_grants = 'postgres:storage.objects'")
    url = f"postgresql://postgres:steward-local@127.0.0.1:{PORT}/{db}"
    subprocess.run([STEWARD, "migrate", "--database-url", url, "--migrations", f"{ROOT}/sql/migrations", "--log-level", "warning"],
                   check=True, stdout=subprocess.DEVNULL)
    admin = f"{ADMIN}/{db}"
    psql(admin, "alter table auth.users disable trigger on_auth_user_created")
    psql(admin, "alter table public.profiles drop constraint profiles_username_key")   # duplicates are part of the mix
    # Load into bare tables, then build the keys and indexes once (a sort each) instead of row by row.
    psql(admin, """
        alter table public.profiles drop constraint profiles_id_fkey, drop constraint profiles_pkey;
        alter table auth.users drop constraint users_pkey, drop constraint users_phone_key;
        drop index auth.users_email_partial_key""")
    started = time.perf_counter()
    psql(admin, "set synchronous_commit = off; set maintenance_work_mem = '256MB';" + MIX % {"n": n})
    psql(admin, """
        set maintenance_work_mem = '256MB';
        alter table auth.users add constraint users_pkey primary key (id), add constraint users_phone_key unique (phone);
        create unique index users_email_partial_key on auth.users (email) where (is_sso_user = false);
        alter table public.profiles add constraint profiles_pkey primary key (id),
          add constraint profiles_id_fkey foreign key (id) references auth.users""")
    psql(admin, "alter table auth.users enable trigger on_auth_user_created")
    psql(admin, "vacuum analyze public.profiles")
    print(f"  {n:,} profiles prepared in {time.perf_counter() - started:.1f} s (load average {load()})", file=sys.stderr)
    return db, url


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run_steward(url):
    seconds, status, out, err, peak = measure.run([STEWARD, "job", "run", "username-check", "--database-url", url, "--json", "--log-level", "info"])
    if status != 0:
        raise SystemExit(out + err)
    phases = [line.split(": ", 1)[1] for line in err.splitlines() if "usernames scanned" in line or "collisions found" in line]
    print(f"  {' | '.join(phases)}", file=sys.stderr)
    return seconds, peak, out, 0


def run_sql(url):
    start = time.perf_counter()
    psql(url, SIMPLE)
    return time.perf_counter() - start


def main():
    rows = []
    for n in SIZES:
        db, url = prepare(n)
        loads = []
        sql_times, steward_times, peaks = [], [], []
        for _ in range(RUNS):
            sql_times.append(run_sql(url))
            seconds, peak, out, _ = run_steward(url)
            loads.append(load())
            steward_times.append(seconds)
            peaks.append(peak)
        summary = out
        rows.append((n, sorted(steward_times)[len(steward_times) // 2], sorted(sql_times)[len(sql_times) // 2], max(peaks), summary, loads[-1]))
        psql(ADMIN + "/postgres", f"drop database if exists {db} with (force)")
    print(f"## username-check — {datetime.date.today()} — {platform.node()} ({os.cpu_count()} cores, {platform.machine()}), median of {RUNS}\n")
    print("| profiles | steward (all 9 rules) | pure SQL (length, pattern, case duplicates) | ratio | steward peak RSS | load average |")
    print("|---|---|---|---|---|---|")
    for n, s, q, peak, _, avg in rows:
        print(f"| {n:,} | {s:.2f} s | {q:.2f} s | {s / q:.1f} | {peak / 1024:.0f} MiB | {avg} |")
    print(f"\nPeak RSS is steward's own (wait4 on the process), the largest of the {RUNS} runs; the load average is the one after the last run.")
    print("Last summary:", rows[-1][4].strip())


if __name__ == "__main__":
    sys.exit(main())
