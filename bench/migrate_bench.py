#!/usr/bin/env python3
"""Times `steward migrate` against `psql -1 -f` of the same files (the floor), on the local cluster.

Each round creates fresh databases from the shim template, then runs the tools alternately, so both see
the same machine state. Reports medians and ratios against the floor measured in the same run.

    bench/run.sh migrate              (builds release, starts the local cluster, runs this)
"""
import os, platform, statistics, subprocess, sys, tempfile, time, datetime
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEWARD = os.environ.get("STEWARD_BINARY", os.path.join(ROOT, ".build/static/release/steward"))
PORT = os.environ.get("STEWARD_PG_PORT", "54329")
ADMIN = f"postgresql://supabase_admin:steward-local@127.0.0.1:{PORT}/postgres"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "9"))


def url(db):
    # TLS off for every tool alike: what is compared is the tools, not the handshake.
    return f"postgresql://postgres:steward-local@127.0.0.1:{PORT}/{db}?sslmode=disable"


def psql(dburl, *args):
    subprocess.run(["psql", dburl, "-X", "-q", "-v", "ON_ERROR_STOP=1", *args], check=True,
                   stdout=subprocess.DEVNULL, env={**os.environ, "PGOPTIONS": "-c client_min_messages=warning"})


def fresh(name):
    psql(ADMIN, "-c", f"drop database if exists {name} with (force)", "-c",
         f"create database {name} template steward_template_2026 owner postgres",
         # The platform lets postgres manage storage policies (supautils); the shim's stand-in reads this per-database setting.
         "-c", f"alter database {name} set supautils_stand_in.policy_grants = 'postgres:storage.objects'")


def timed(cmd, env=None):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})})
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


def database(tool):
    """The database `tool` runs against: bench_ and its name in letters, digits and underscores."""
    return "bench_" + "".join(ch if ch.isalnum() else "_" for ch in tool.lower()).strip("_")


def build_libpq_floor(workdir):
    """bench/libpq_floor.c built into `workdir`: connect, `select 1`, disconnect, and nothing else."""
    binary = os.path.join(workdir, "libpq_floor")
    subprocess.run(["gcc", "-O2", "-I" + subprocess.run(["pg_config", "--includedir"], capture_output=True, text=True, check=True).stdout.strip(),
                    "-o", binary, os.path.join(ROOT, "bench/libpq_floor.c"), "-lpq"], check=True)
    return binary


def run_case(label, folder, workdir):
    """Every tool applies `folder` to a fresh database, then runs again with nothing to do; alternating order each round.
    The C libpq floor only reruns: what connecting and one question cost any tool built on libpq."""
    all_sql = concat(folder)
    floor_binary = build_libpq_floor(workdir)
    tools = ["steward", "psql", "libpq (C)"] + peers.available()
    apply = {t: [] for t in tools}
    rerun = {t: [] for t in tools}
    commands = {}
    for t in peers.available():
        commands[t] = peers.prepare(t, folder, os.path.join(workdir, label.replace(" ", "_"), t), PORT, database(t))
    def steward_cmd(db):
        return [STEWARD, "migrate", "--database-url", url(db), "--migrations", folder, "--log-level", "warning"]
    for r in range(ROUNDS):
        order = tools[r % len(tools):] + tools[:r % len(tools)]
        for t in order:
            db = database(t)
            fresh(db)
            if t == "steward":
                apply[t].append(timed(steward_cmd(db))); rerun[t].append(timed(steward_cmd(db)))
            elif t == "psql":
                apply[t].append(timed(["psql", url(db), "-X", "-q", "-1", "-v", "ON_ERROR_STOP=1", "-f", all_sql]))
                rerun[t].append(timed(["psql", url(db), "-X", "-q", "-c", "select 1"]))
            elif t == "libpq (C)":
                rerun[t].append(timed([floor_binary, url(db)]))
            else:
                command, env = commands[t]
                apply[t].append(timed(command, env)); rerun[t].append(timed(command, env))
        for t in tools:
            psql(ADMIN, f"drop database if exists {database(t)} with (force)")
    files = len([n for n in os.listdir(folder) if n.endswith(".sql")])
    m = statistics.median
    return [(label, files, t, m(apply[t]) if apply[t] else None, m(rerun[t])) for t in tools]


def main():
    with tempfile.TemporaryDirectory() as workdir:
        rows = run_case("seed", os.path.join(ROOT, "sql/migrations"), workdir)
        small = os.path.join(workdir, "small")
        os.makedirs(small)
        many_small(small)
        rows += run_case("100 small", small, workdir)
    print(f"## steward migrate against the floor and its peers — {datetime.date.today()} — {platform.node()} "
          f"({os.cpu_count()} cores, {platform.machine()}), {ROUNDS} rounds, medians\n")
    print("| case | tool | full apply (ms) | vs psql -1 -f | no-op rerun (ms) | vs steward |")
    print("|---|---|---|---|---|---|")
    for label in dict.fromkeys(r[0] for r in rows):
        case = [r for r in rows if r[0] == label]
        floor = next(r for r in case if r[2] == "psql")[3]
        ours = next(r for r in case if r[2] == "steward")[4]
        for _, files, tool, applied, noop in case:
            note = " (select 1)" if tool in ("psql", "libpq (C)") else ""
            apply_cells = f"{applied:.1f} | {applied / floor:.2f}" if applied is not None else "— | —"
            print(f"| {label} ({files} files) | {tool} | {apply_cells} | {noop:.1f}{note} | {noop / ours:.2f} |")
    print("\nThe psql rerun is `psql -c 'select 1'` (through Debian's pg_wrapper, a Perl script); the libpq (C) rerun is "
          "`bench/libpq_floor.c`: connect, `select 1`, disconnect, the floor of any tool built on libpq. "
          "Peers: " + (", ".join(peers.available()) or "none installed"))


if __name__ == "__main__":
    sys.exit(main())
