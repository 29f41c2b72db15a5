#!/usr/bin/env python3
"""Times `steward migrate` against `psql -1 -f` of the same files (the floor), on the local cluster.

Each round creates fresh databases from the shim template, then runs the tools alternately, so both see
the same machine state. Reports medians and ratios against the floor measured in the same run.

    bench/run.sh migrate              (builds release, starts the local cluster, runs this)
"""
import os, platform, statistics, subprocess, sys, tempfile, time, datetime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEWARD = os.environ.get("STEWARD_BINARY", os.path.join(ROOT, ".build/release/steward"))
PORT = os.environ.get("STEWARD_PG_PORT", "54329")
ADMIN = f"postgresql://supabase_admin:steward-local@127.0.0.1:{PORT}/postgres"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))


def url(db):
    return f"postgresql://postgres:steward-local@127.0.0.1:{PORT}/{db}"


def psql(dburl, *args):
    subprocess.run(["psql", dburl, "-X", "-q", "-v", "ON_ERROR_STOP=1", *args], check=True,
                   stdout=subprocess.DEVNULL, env={**os.environ, "PGOPTIONS": "-c client_min_messages=warning"})


def fresh(name):
    psql(ADMIN, "-c", f"drop database if exists {name} with (force)", "-c",
         f"create database {name} template steward_template_2026 owner postgres")


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def many_small(folder, n=100):
    for i in range(1, n + 1):
        with open(os.path.join(folder, f"{i:04d}_small_{i}.sql"), "w") as f:
            f.write(f"create table public.small_{i} (id bigint primary key, note text);\n"
                    f"comment on table public.small_{i} is 'migration {i}';\n")


def concat(folder):
    path = os.path.join(folder, "all.sql.txt")
    with open(path, "w") as out:
        for name in sorted(os.listdir(folder)):
            if name.endswith(".sql"):
                out.write(open(os.path.join(folder, name)).read() + "\n")
    return path


def run_case(label, folder):
    all_sql = concat(folder)
    steward, floor, noop, noop_floor = [], [], [], []
    for r in range(ROUNDS):
        fresh("bench_a"); fresh("bench_b")
        pair = [("steward", lambda: timed([STEWARD, "migrate", "--database-url", url("bench_a"), "--migrations", folder,
                                          "--log-level", "warning"])),
                ("psql", lambda: timed(["psql", url("bench_b"), "-X", "-q", "-1", "-v", "ON_ERROR_STOP=1", "-f", all_sql]))]
        if r % 2:
            pair.reverse()
        for name, fn in pair:
            (steward if name == "steward" else floor).append(fn())
        # A no-op rerun: what a deploy pipeline pays every time, against connecting and asking one question.
        pair = [("steward", lambda: timed([STEWARD, "migrate", "--database-url", url("bench_a"), "--migrations", folder,
                                          "--log-level", "warning"])),
                ("psql", lambda: timed(["psql", url("bench_b"), "-X", "-q", "-c", "select 1"]))]
        if r % 2:
            pair.reverse()
        for name, fn in pair:
            (noop if name == "steward" else noop_floor).append(fn())
    files = len([n for n in os.listdir(folder) if n.endswith(".sql")])
    m = statistics.median
    return [
        (f"{label}: full apply ({files} files)", m(steward), m(floor), (m(steward) - m(floor)) / files),
        (f"{label}: no-op rerun", m(noop), m(noop_floor), None),
    ]


def main():
    rows = run_case("seed", os.path.join(ROOT, "sql/migrations"))
    with tempfile.TemporaryDirectory() as folder:
        many_small(folder)
        rows += run_case("100 small", folder)
    psql(ADMIN, "-c", "drop database if exists bench_a with (force)", "-c", "drop database if exists bench_b with (force)")
    print(f"# steward migrate vs psql -1 -f — {datetime.date.today()} — {platform.node()} "
          f"({os.cpu_count()} cores, {platform.machine()}), {ROUNDS} rounds, medians\n")
    print("| case | steward (ms) | psql floor (ms) | ratio | extra per file (ms) |")
    print("|---|---|---|---|---|")
    for label, s, f, per in rows:
        extra = f"{per:.2f}" if per is not None else "-"
        print(f"| {label} | {s:.1f} | {f:.1f} | {s / f:.2f} | {extra} |")
    print("\nThe no-op floor is `psql -c 'select 1'`: connecting and asking one question.")


if __name__ == "__main__":
    sys.exit(main())
