#!/usr/bin/env python3
"""steward advise at scale: the whole run on the migrated demo schema (with the legacy User table), and on a
schema of 5,000 tables (each with an index, a foreign key, RLS on half, a policy on a quarter, a view and a
function every 100). Reports the wall time of `steward advise --json` (three runs each, best and worst) and the
advisor's own figure.

    STEWARD_PG_PORT=54329 python3 bench/advisor_bench.py     (the local cluster running: scripts/local-db.sh start)
"""
import json, os, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEWARD = os.environ.get("STEWARD_BINARY", os.path.join(ROOT, ".build/debug/steward"))
PORT = os.environ.get("STEWARD_PG_PORT", "54329")
ADMIN = f"postgresql://supabase_admin:steward-local@127.0.0.1:{PORT}"
TABLES = int(os.environ.get("BENCH_TABLES", "5000"))


def psql(db, sql):
    subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", f"{ADMIN}/{db}", "-c", sql], check=True, stdout=subprocess.DEVNULL)


def fresh(name):
    psql("postgres", f"drop database if exists {name} with (force)")
    psql("postgres", f"create database {name} template steward_template_legacy owner postgres")
    # The platform lets postgres manage storage policies (supautils); the shim's stand-in reads this per-database setting.
    psql("postgres", f"alter database {name} set supautils_stand_in.policy_grants = 'postgres:storage.objects'")


def advise(db):
    url = f"postgresql://postgres:steward-local@127.0.0.1:{PORT}/{db}"
    times, inner, found = [], 0.0, 0
    for _ in range(3):
        started = time.monotonic()
        out = subprocess.run([STEWARD, "advise", "--json", "--database-url", url], capture_output=True, text=True)
        times.append(time.monotonic() - started)
        if out.returncode not in (0, 2):
            sys.exit(f"advise failed ({out.returncode}): {out.stderr}")
        report = json.loads(out.stdout)
        inner, found = report["seconds"], len(report["findings"])
    return min(times), max(times), inner, found


def main():
    fresh("steward_bench_advisor_demo")
    subprocess.run([STEWARD, "migrate", "--database-url", f"postgresql://postgres:steward-local@127.0.0.1:{PORT}/steward_bench_advisor_demo",
                    "--migrations", os.path.join(ROOT, "sql/migrations")], check=True, capture_output=True)
    psql("steward_bench_advisor_demo", open(os.path.join(ROOT, "sql/demo/legacy_user_table.sql")).read())
    print("demo schema:            best %.3fs worst %.3fs (advisor %.3fs, %d findings)" % advise("steward_bench_advisor_demo"))

    fresh("steward_bench_advisor_big")
    psql("steward_bench_advisor_big", "create table public.parent (id int primary key)")
    for start in range(1, TABLES + 1, 250):
        psql("steward_bench_advisor_big", f"""
        do $$ begin
          for i in {start}..{min(start + 249, TABLES)} loop
            execute format('create table public.t%s (id int primary key, parent int references public.parent, email text, body text)', i);
            execute format('create index on public.t%s (body)', i);
            if i % 10 = 0 then execute format('insert into public.t%s values (1, null, %L, %L)', i, 'u' || i || '@example.com', 'x'); end if;
            if i % 2 = 0 then execute format('alter table public.t%s enable row level security', i); end if;
            if i % 4 = 0 then execute format('create policy own on public.t%s for select to authenticated using (parent = (select auth.uid())::text::int)', i); end if;
            if i % 100 = 0 then
              execute format('create view public.v%s as select id from public.t%s', i, i);
              execute format('create function public.f%s() returns int language sql as ''select 1''', i);
            end if;
          end loop;
        end $$""")
    print(("%d tables:" % TABLES).ljust(24) + "best %.3fs worst %.3fs (advisor %.3fs, %d findings)" % advise("steward_bench_advisor_big"))
    for name in ("steward_bench_advisor_demo", "steward_bench_advisor_big"):
        psql("postgres", f"drop database if exists {name} with (force)")


if __name__ == "__main__":
    main()
