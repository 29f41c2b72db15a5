#!/usr/bin/env python3
"""Measures `steward run`: time to READY=1, idle RSS and CPU, scheduler fire delay, control-socket latency
under 100 concurrent clients. Each figure comes with a baseline measured in the same run.

    bench/run.sh daemon        (builds release, starts the local cluster, runs this; about 2 minutes)
"""
import os, platform, socket, socketserver, statistics, subprocess, sys, tempfile, threading, time, datetime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEWARD = os.environ.get("STEWARD_BINARY", os.path.join(ROOT, ".build/release/steward"))
PORT = os.environ.get("STEWARD_PG_PORT", "54329")
ADMIN = f"postgresql://supabase_admin:steward-local@127.0.0.1:{PORT}/postgres"
DB = "bench_daemon"
URL = f"postgresql://postgres:steward-local@127.0.0.1:{PORT}/{DB}"
IDLE_SECONDS = int(os.environ.get("BENCH_IDLE_SECONDS", "60"))
FIRE_SECONDS = int(os.environ.get("BENCH_FIRE_SECONDS", "30"))
CRON_MINUTES = int(os.environ.get("BENCH_CRON_MINUTES", "10"))
# BENCH_ONLY=control measures only the control socket's latencies, CONTROL_ROUNDS times interleaved with the echo baseline.
ONLY = os.environ.get("BENCH_ONLY", "")
CONTROL_ROUNDS = int(os.environ.get("BENCH_CONTROL_ROUNDS", "3"))
HISTORY_ROWS = int(os.environ.get("BENCH_HISTORY_ROWS", "1000"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pg_cron  # noqa: E402


def psql(url, sql):
    return subprocess.run(["psql", url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True,
                          capture_output=True, text=True, env={**os.environ, "PGOPTIONS": "-c client_min_messages=warning"}).stdout


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_daemon(folder, config, notify_path=None):
    path = os.path.join(folder, "steward.ini")
    sock = os.path.join(folder, "control.sock")
    with open(path, "w") as f:
        f.write(f"[database]\nurl = {URL}\n[migrations]\ndir = {ROOT}/sql/migrations\n[control]\nsocket = {sock}\n"
                f"[log]\nlevel = warning\n{config}\n")
    env = dict(os.environ)
    if notify_path:
        env["NOTIFY_SOCKET"] = notify_path
    proc = subprocess.Popen([STEWARD, "run", "--config", path], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, sock


def stop(proc):
    proc.terminate()
    proc.wait(timeout=30)


def time_to_ready(folder, rounds=7):
    times, floors = [], []
    for i in range(rounds):
        notify = os.path.join(folder, f"notify{i}.sock")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind(notify)
        s.settimeout(30)
        start = time.perf_counter()
        proc, _ = start_daemon(folder, "[job.prune-history]\nschedule = @daily\n", notify)
        while True:
            if b"READY=1" in s.recv(4096):
                break
        times.append((time.perf_counter() - start) * 1000)
        stop(proc)
        s.close()
        start = time.perf_counter()
        psql(URL, "select 1")
        floors.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), statistics.median(floors)


def idle(folder):
    proc, _ = start_daemon(folder, "[job.prune-history]\nschedule = @daily\n")
    sleeper = subprocess.Popen(["sleep", str(IDLE_SECONDS + 30)])
    time.sleep(3)
    c0, s0 = cpu_seconds(proc.pid), cpu_seconds(sleeper.pid)
    time.sleep(IDLE_SECONDS)
    c1, s1 = cpu_seconds(proc.pid), cpu_seconds(sleeper.pid)
    rss, sleep_rss = rss_kib(proc.pid), rss_kib(sleeper.pid)
    stop(proc)
    sleeper.kill()
    return rss, (c1 - c0) / IDLE_SECONDS * 100, sleep_rss, (s1 - s0) / IDLE_SECONDS * 100


def fire_delay(folder):
    psql(URL, "delete from steward.job_runs")
    proc, _ = start_daemon(folder, "[job.prune-history]\nschedule = @every 1s\nretention = 1d\n")
    time.sleep(FIRE_SECONDS)
    stop(proc)
    rows = psql(URL, "select extract(epoch from started_at - scheduled_for) * 1000 from steward.job_runs "
                     "where trigger = 'schedule' and started_at is not null")
    delays = [float(x) for x in rows.split()]
    return delays


def minute_fire_delay(folder):
    """Steward at odd minutes, pg_cron at even ones (never at once): each delay is past the minute it was due."""
    if not pg_cron.installed():
        return None
    cron = pg_cron.PgCron()
    try:
        psql(URL, "delete from steward.job_runs")
        proc, _ = start_daemon(folder, "[job.prune-history]\nschedule = 1-59/2 * * * *\nretention = 1d\n")
        time.sleep(CRON_MINUTES * 60 + 5)
        stop(proc)
        ours = [float(x) for x in psql(URL, "select extract(epoch from started_at - scheduled_for) * 1000 from steward.job_runs "
                                            "where trigger = 'schedule' and started_at is not null").split()]
        theirs = cron.delays_ms()
    finally:
        cron.stop()
    return ours, theirs


class Echo(socketserver.StreamRequestHandler):
    def handle(self):
        self.rfile.readline()
        self.wfile.write(b'{"ok":true,"text":"help"}\n')


def latency(sock_path, command, clients=100, per_client=20):
    """Per-request latency of `clients` concurrent clients; requests refused or broken are counted apart."""
    results = []
    failures = []
    lock = threading.Lock()

    def client():
        mine, failed = [], 0
        for _ in range(per_client):
            start = time.perf_counter()
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(sock_path)
                s.sendall(command.encode() + b"\n")
                data = b""
                while b"\n" not in data:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                s.close()
                if b'"ok":true' not in data:
                    failed += 1
                    continue
            except OSError:
                failed += 1
                continue
            mine.append((time.perf_counter() - start) * 1000)
        with lock:
            results.extend(mine)
            failures.append(failed)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if sum(failures):
        print(f"warning: {sum(failures)} of {clients * per_client} `{command}` requests failed or were refused", file=sys.stderr)
    return results


def pg_cron_version():
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "postgresql-15-cron"], capture_output=True, text=True).stdout
    return out.split("-")[0] or "?"


def build_native_client(folder):
    """bench/control_load.c built into `folder`: the load generator and echo floor without an interpreter lock."""
    binary = os.path.join(folder, "control_load")
    subprocess.run(["gcc", "-O2", "-pthread", "-o", binary, os.path.join(ROOT, "bench/control_load.c")], check=True)
    return binary


def native_latency(binary, sock_path, command, clients=100, per_client=20):
    """The same load as `latency`, from the C client: what the server costs, not the measuring side's lock."""
    out = subprocess.run([binary, "load", sock_path, command, str(clients), str(per_client)], capture_output=True, text=True,
                         timeout=120)
    if out.stderr.strip():
        print(f"warning: native client, `{command}`: {out.stderr.strip()}", file=sys.stderr)
    return [float(line) for line in out.stdout.split()]


def control_latency(folder):
    """`help`, `jobs` and the echo baselines, from the Python and the C clients, interleaved `rounds` times: the
    latencies of each, pooled. Keys: (client, what)."""
    lat = {(client, what): [] for client in ("python", "native") for what in ("help", "jobs", "echo")}
    proc, sock = start_daemon(folder, "[job.prune-history]\nschedule = @daily\n")
    echo_path = os.path.join(folder, "echo.sock")
    server = socketserver.ThreadingUnixStreamServer(echo_path, Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    native = build_native_client(folder)
    native_echo_path = os.path.join(folder, "native-echo.sock")
    native_echo = subprocess.Popen([native, "echo", native_echo_path])
    try:
        time.sleep(2)
        for _ in range(CONTROL_ROUNDS):
            lat["python", "help"] += latency(sock, "help")
            lat["python", "jobs"] += latency(sock, "jobs")
            lat["python", "echo"] += latency(echo_path, "help")
            lat["native", "help"] += native_latency(native, sock, "help")
            lat["native", "jobs"] += native_latency(native, sock, "jobs")
            lat["native", "echo"] += native_latency(native, native_echo_path, "help")
    finally:
        native_echo.kill()
        native_echo.wait()
        server.shutdown()
        stop(proc)
    return lat


def print_control(lat):
    baselines = {"python": "Python threaded echo server, Python threaded clients",
                 "native": "C poll-loop echo server, C threaded clients"}
    for client in ("native", "python"):
        echo_lat = lat[client, "echo"]
        for label, what in [("help (no database)", "help"), ("jobs (held last runs)", "jobs")]:
            ours = lat[client, what]
            print(f"| control `{label}` p50 / p99, 100 {'C' if client == 'native' else 'Python'} clients x 20 "
                  f"| {pct(ours, 50):.1f} / {pct(ours, 99):.1f} ms "
                  f"| {pct(echo_lat, 50):.1f} / {pct(echo_lat, 99):.1f} ms ({baselines[client]}) "
                  f"| {pct(ours, 99) / pct(echo_lat, 99):.2f} (p99) |")


def control_only():
    """BENCH_ONLY=control: the control-socket latencies alone (history seeded with BENCH_HISTORY_ROWS runs)."""
    psql(URL, f"insert into steward.job_runs (job, started_at, finished_at, status, trigger, host, pid) "
              f"select 'prune-history', now() - i * interval '1 minute', now() - i * interval '1 minute' + interval '1 second', "
              f"'succeeded', 'schedule', 'bench', 1 from generate_series(1, {HISTORY_ROWS}) i")
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, 0o755)
        lat = control_latency(folder)
    psql(ADMIN, f"drop database if exists {DB} with (force)")
    print(f"## steward run, control socket — {datetime.date.today()} — {platform.node()} ({os.cpu_count()} cores) — "
          f"{CONTROL_ROUNDS} round(s), {HISTORY_ROWS} history rows, load average {open('/proc/loadavg').read().split()[0]}\n")
    print("| measure | steward | baseline (same run) | ratio |")
    print("|---|---|---|---|")
    print_control(lat)


def main():
    psql(ADMIN, f"drop database if exists {DB} with (force)")
    psql(ADMIN, f"create database {DB} template steward_template_2026 owner postgres")
    # The platform lets postgres manage storage policies (supautils); the shim's stand-in reads this per-database setting.
    psql(ADMIN, f"alter database {DB} set supautils_stand_in.policy_grants = 'postgres:storage.objects'")
    subprocess.run([STEWARD, "migrate", "--database-url", URL, "--migrations", f"{ROOT}/sql/migrations", "--log-level", "warning"],
                   check=True, stdout=subprocess.DEVNULL)
    if ONLY == "control":
        return control_only()
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, 0o755)
        ready, floor = time_to_ready(folder)
        rss, cpu, sleep_rss, sleep_cpu = idle(folder)
        delays = fire_delay(folder)
        control = control_latency(folder)
        minutes = minute_fire_delay(folder)
    psql(ADMIN, f"drop database if exists {DB} with (force)")

    print(f"## steward run — {datetime.date.today()} — {platform.node()} ({os.cpu_count()} cores, {platform.machine()})\n")
    print("| measure | steward | baseline (same run) | ratio |")
    print("|---|---|---|---|")
    print(f"| time to READY=1 (median of 7) | {ready:.0f} ms | {floor:.0f} ms (`psql -c 'select 1'`) | {ready / floor:.2f} |")
    print(f"| idle RSS after {IDLE_SECONDS} s | {rss / 1024:.1f} MiB | {sleep_rss / 1024:.1f} MiB (`sleep`) | {rss / sleep_rss:.1f} |")
    print(f"| idle CPU over {IDLE_SECONDS} s | {cpu:.2f} % | {sleep_cpu:.2f} % (`sleep`) | - |")
    print(f"| fire delay p50 / p99 ({len(delays)} runs of @every 1s) | {pct(delays, 50):.1f} / {pct(delays, 99):.1f} ms "
          f"| 30000 ms mean (a 60 s poll from process start) | - |")
    if minutes:
        ours, theirs = minutes
        print(f"| fire delay at minute slots, median / max ({len(ours)} vs {len(theirs)} slots, alternating minutes) "
              f"| {statistics.median(ours):.1f} / {max(ours):.1f} ms | {statistics.median(theirs):.1f} / {max(theirs):.1f} ms "
              f"(pg_cron {pg_cron_version()}) | {statistics.median(ours) / statistics.median(theirs):.2f} |")
    print_control(control)


if __name__ == "__main__":
    sys.exit(main())
