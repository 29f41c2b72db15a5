#!/usr/bin/env python3
"""steward fleet migrate and fleet status over 200 databases, against sequential shell loops, in the same run.

200 databases of the local cluster, each a fresh copy of the shim template (steward_template_2026), are the targets
of one config (8 in stage canary, 192 in production). Each case starts from 200 fresh copies (made and dropped
outside the timing) and applies the app's files (sql/migrations):
  (a) a sequential shell loop of `steward migrate --database-url …`, one database after the other;
  (b) a sequential shell loop of `psql -1 -v ON_ERROR_STOP=1 -f …` of the same files (no lock, lint, history or record);
  (c) `steward fleet migrate --parallel N` for N = 1, 4 and 8.
Then `steward fleet status` of the 200 migrated targets (default --parallel 16), BENCH_STATUS_RUNS times.
Targets: fleet status of 200 targets under 2 s; fleet migrate at --parallel 8 at least 4x faster than loop (a).

    bench/run.sh fleet          (builds release, starts the local cluster, runs this; about five minutes)

Environment: STEWARD_BINARY (default .build/release/steward), STEWARD_PG_PORT, BENCH_TARGETS (default 200),
BENCH_RUNS (rounds of each migrate case, default 1), BENCH_STATUS_RUNS (default 5).
"""
import datetime, os, platform, resource, shlex, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEWARD = os.environ.get("STEWARD_BINARY", os.path.join(ROOT, ".build/release/steward"))
PORT = os.environ.get("STEWARD_PG_PORT", "54329")
ADMIN = f"postgresql://supabase_admin:steward-local@127.0.0.1:{PORT}/postgres"
TARGETS = int(os.environ.get("BENCH_TARGETS", "200"))
RUNS = int(os.environ.get("BENCH_RUNS", "1"))
STATUS_RUNS = int(os.environ.get("BENCH_STATUS_RUNS", "5"))
CANARIES = 8
MIGRATIONS = os.path.join(ROOT, "sql/migrations")
FILES = sorted(f for f in os.listdir(MIGRATIONS) if f.endswith(".sql"))
NAMES = [f"fleet_bench_{i:03d}" for i in range(1, TARGETS + 1)]


def url(db):
    return f"postgresql://postgres:steward-local@127.0.0.1:{PORT}/{db}?sslmode=disable"


def admin_script(statements):
    """Runs statements one by one (CREATE DATABASE cannot share a transaction) in one psql session."""
    subprocess.run(["psql", ADMIN, "-X", "-q", "-v", "ON_ERROR_STOP=1"], input="\n".join(statements) + "\n", text=True, check=True,
                   capture_output=True, env={**os.environ, "PGOPTIONS": "-c client_min_messages=warning"})


def fresh():
    statements = []
    for name in NAMES:
        statements += [f"drop database if exists {name} with (force);",
                       f"create database {name} template steward_template_2026 owner postgres;",
                       # The platform lets postgres manage storage policies (supautils); the shim's stand-in reads this setting.
                       f"alter database {name} set supautils_stand_in.policy_grants = 'postgres:storage.objects';"]
    admin_script(statements)


def drop_all():
    admin_script([f"drop database if exists {name} with (force);" for name in NAMES])


def postmaster():
    out = subprocess.run(["psql", ADMIN, "-X", "-At", "-c", "select setting from pg_settings where name = 'data_directory'"],
                         capture_output=True, text=True, check=True).stdout.strip()
    with open(os.path.join(out, "postmaster.pid")) as f:
        return int(f.readline())


def server_cpu(pid):
    """CPU seconds of the server: the postmaster's own and its reaped children's (every backend that has exited)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def client_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args, expect=0, pid=None):
    """Wall seconds, stdout, and the CPU seconds the client (this command) and the server spent on it."""
    server_before, client_before = (server_cpu(pid) if pid else 0), client_cpu()
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != expect:
        raise SystemExit(f"{' '.join(args[:4])}… exited {done.returncode}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    # Backends of the last connections may still be exiting: give them a moment to be reaped and counted.
    time.sleep(0.5)
    return seconds, done.stdout, (server_cpu(pid) if pid else 0) - server_before, client_cpu() - client_before


def applied_everywhere():
    """Checks every database holds the app's files in Steward's history (the fleet and steward loop cases)."""
    out = subprocess.run(["psql", ADMIN, "-X", "-At", "-c",
                          "select count(*) from pg_database where datname like 'fleet_bench_%'"], capture_output=True, text=True).stdout
    assert int(out) == TARGETS, out


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    if not os.access(STEWARD, os.X_OK):
        raise SystemExit(f"no steward binary at {STEWARD} (set STEWARD_BINARY)")
    folder = tempfile.mkdtemp(prefix="steward-fleet-bench-")
    config = os.path.join(folder, "fleet.ini")
    with open(config, "w") as f:
        f.write(f"[migrations]\ndir = {MIGRATIONS}\n\n[fleet]\nstages = canary, production\n")
        for index, name in enumerate(NAMES):
            f.write(f"\n[target.{name}]\nurl = {url(name)}\nstage = {'canary' if index < CANARIES else 'production'}\n")
    steward_loop = "for u in " + " ".join(shlex.quote(url(n)) for n in NAMES) + \
        f"; do {shlex.quote(STEWARD)} migrate --database-url \"$u\" --migrations {shlex.quote(MIGRATIONS)} >/dev/null || exit 1; done"
    psql_files = " ".join(f"-f {shlex.quote(os.path.join(MIGRATIONS, f))}" for f in FILES)
    psql_loop = "for u in " + " ".join(shlex.quote(url(n)) for n in NAMES) + \
        f"; do psql \"$u\" -X -q -1 -v ON_ERROR_STOP=1 {psql_files} >/dev/null || exit 1; done"
    cases = [("(a) sequential loop of `steward migrate`", ["bash", "-c", steward_loop]),
             ("(b) sequential loop of `psql -1 -f` (the same files)", ["bash", "-c", psql_loop])]
    for n in (1, 4, 8):
        cases.append((f"(c) `steward fleet migrate --parallel {n}`", [STEWARD, "fleet", "migrate", "--config", config, "--parallel", str(n)]))
    times = {label: [] for label, _ in cases}
    cpu = {label: [] for label, _ in cases}
    summary = ""
    pid = postmaster()
    try:
        for _ in range(RUNS):
            for label, args in cases:
                fresh()
                seconds, out, server, client = timed(args, pid=pid)
                times[label].append(seconds)
                cpu[label].append((server, client))
                if "fleet" in label:
                    summary = out.strip().splitlines()[-1]
                    assert f"{TARGETS} of {TARGETS} target(s) done, 0 failed" in summary, summary
        # fleet status of the migrated targets (the last case left them migrated by fleet migrate --parallel 8).
        status = []
        status_cpu = []
        for _ in range(STATUS_RUNS):
            seconds, out, server, client = timed([STEWARD, "fleet", "status", "--config", config], pid=pid)
            status.append(seconds)
            status_cpu.append((server, client))
        status_verdict = out.strip().splitlines()[-1]
        after = load()
    finally:
        drop_all()

    m = statistics.median
    print(f"## steward fleet over {TARGETS} databases — {datetime.date.today()} — {platform.node()} "
          f"({os.cpu_count()} cores, {platform.machine()}), {len(FILES)} files each, {RUNS} round(s)\n")
    cores = os.cpu_count()
    print("| case | median (s) | min (s) | max (s) | per target (ms) | server CPU (s) | client CPU (s) | CPU / cores (s) |")
    print("|---|---|---|---|---|---|---|---|")
    def cpu_cells(pairs):
        server, client = m([p[0] for p in pairs]), m([p[1] for p in pairs])
        return f"{server:.2f} | {client:.2f} | {(server + client) / cores:.2f}"
    for label, _ in cases:
        xs = times[label]
        print(f"| {label} | {m(xs):.2f} | {min(xs):.2f} | {max(xs):.2f} | {m(xs) / TARGETS * 1000:.0f} | {cpu_cells(cpu[label])} |")
    print(f"| (d) `steward fleet status`, {TARGETS} migrated targets ({STATUS_RUNS} runs) | {m(status):.2f} | {min(status):.2f} | "
          f"{max(status):.2f} | {m(status) / TARGETS * 1000:.1f} | {cpu_cells(status_cpu)} |")
    print()
    loop = m(times[cases[0][0]])
    print("| ratio | value | target |")
    print("|---|---|---|")
    for n in (1, 4, 8):
        speedup = loop / m(times[f"(c) `steward fleet migrate --parallel {n}`"])
        target = f"≥ 4: {'met' if speedup >= 4 else 'missed'}" if n == 8 else ""
        print(f"| steward loop / fleet migrate --parallel {n} | {speedup:.2f} | {target} |")
    print(f"| psql loop / fleet migrate --parallel 8 | {m(times[cases[1][0]]) / m(times['(c) `steward fleet migrate --parallel 8`']):.2f} | |")
    print(f"| fleet status, {TARGETS} targets | {m(status):.2f} s | < 2 s: {'met' if m(status) < 2 else 'missed'} |")
    loop_cpu = sum(m([p[i] for p in cpu[cases[0][0]]]) for i in (0, 1))
    print(f"| the loop's CPU / its wall time (1.0: it keeps one core busy, so {cores} cores allow at most ~{cores}x) | "
          f"{loop_cpu / loop:.2f} | |")
    print(f"\nServer CPU: the postmaster's children's user + system time (every backend, counted when it exits); client CPU: "
          f"the timed processes' own (steward, bash, psql). CPU / cores is the shortest wall time the work could take with every core "
          f"of the machine on it and nothing else running.")
    print(f"\nEach case starts from {TARGETS} fresh copies of steward_template_2026 (made before the timing); wall times of the whole "
          f"loop or process, TLS off. The fleet's targets: {CANARIES} in stage canary, the rest in production. The last fleet migrate: "
          f"\"{summary}\"; the last fleet status: \"{status_verdict}\". Load average after the run: {after}.")


if __name__ == "__main__":
    sys.exit(main())
