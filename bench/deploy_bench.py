#!/usr/bin/env python3
"""Schema changes on a live app: steward migrate against psql -1 -f, under app traffic, side by side in one run.

Each runner gets a fresh database made from the shim template, the quickstart's files (sql/migrations) applied with
steward, and BENCH_ROWS users (default 100,000) signed up (inserted into auth.users as the Auth server does; the
quickstart's trigger makes their profiles). Then, while the app and an analytics job use the database, six realistic
changes to public.profiles are applied one at a time:

  add column     alter table … add column country_code text
  backfill       country_code for every row
  add index      on (country_code, username)
  add FK         country_code references a new public.countries
  add check      country_code is two capital letters
  set not null   country_code not null

The app is pgbench (PostgreSQL's own load generator), speaking to the database as PostgREST does for each API request:
it logs in as `authenticator` (whose role settings on the platform, and in the shim, are statement_timeout and
lock_timeout 8s), and each request is one transaction that sets the request's role, its JWT claims and that role's
statement_timeout (anon 3s, authenticated 8s, as PostgREST applies the impersonated role's settings), then runs:
  - a read: an anonymous profile page, select by id (half the requests);
  - an own-row update: a signed-in user edits their full name (the quickstart's RLS policy: auth.uid() = id).
BENCH_CLIENTS connections (default 4, like a small pool) each send BENCH_CLIENT_RATE requests a second (default 50)
at random times (pgbench -R: latency counts from when a request was due, so a request that waits for a stalled
connection counts its wait). Each connection is its own pgbench process, restarted when it aborts on an error (an
error is what the app's user sees: counted, with its time). Meanwhile an analytics job opens a transaction every 10 s,
runs `select count(*) from public.profiles`, and holds it open (idle in transaction) for 5 s: its ACCESS SHARE lock stays,
its snapshot does not (read committed), so a concurrent index build has no reason to wait for it.

Every migration starts 1 s into an analytics transaction, so each runner meets the same situation: 4 s of a lock
holder still to go, the moment a deploy stalls an app. The first two analytics cycles carry no migration: the
baseline. A migration's window is from its runner's start to its exit; its baseline is the window of the same length at
the same point of the analytics cycle in the baseline period. The next migration starts at the first cycle that begins
at least a second after the previous one ended.

The runners:
  steward             `steward migrate`, default settings (lock slices of 200 ms growing 1.5x a try up to 800 ms,
                      retry budget 120 s), of the files a careful team writes for a live table: the backfill in batches
                      of 5,000 rows (a -- steward:no-transaction file, each batch its own transaction), CREATE INDEX
                      CONCURRENTLY (no-transaction), NOT VALID + VALIDATE CONSTRAINT pairs for the FK and the check, and
                      SET NOT NULL after a validated CHECK (country_code is not null) (no table scan under its lock).
  psql -1 -f, naive   the files a first version would have: one UPDATE, CREATE INDEX, ADD CONSTRAINT (validated at
                      once), SET NOT NULL; one `psql -1 -f` each, as role postgres (no lock_timeout: it waits in the queue).
  psql, same files    Steward's own files through psql (-1 -f, or plain -f for the no-transaction ones), to separate
                      what the runner does from what the files do.
Each migration's result is checked in the catalog (column, rows filled, index valid, constraints validated, attnotnull).

    bench/run.sh deploy           (builds release, starts the local cluster, runs this; about 5 minutes)

Environment: STEWARD_BINARY (default .build/release/steward), STEWARD_PG_PORT, BENCH_ROWS (default 100000),
BENCH_CLIENTS (4), BENCH_CLIENT_RATE (50), BENCH_RUNNERS (steward,naive,same: which runners, in this order).
"""
import datetime, math, os, platform, re, shutil, signal, subprocess, sys, tempfile, threading, time

import psycopg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEWARD = os.environ.get("STEWARD_BINARY", os.path.join(ROOT, ".build/release/steward"))
PORT = os.environ.get("STEWARD_PG_PORT", "54329")
ROWS = int(os.environ.get("BENCH_ROWS", "100000"))
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "4"))
CLIENT_RATE = float(os.environ.get("BENCH_CLIENT_RATE", "50"))
RUNNERS = os.environ.get("BENCH_RUNNERS", "steward,naive,same").split(",")
CYCLE, HOLD, PHASE = 10.0, 5.0, 1.0       # the analytics transaction: every CYCLE s, held HOLD s; migrations start PHASE s in
BASELINE_CYCLES = 2
BATCH = 5000                               # rows per backfill batch in Steward's file
FIRST_SLICE_MS = 200                       # Steward's default [migrations] lock_timeout
DRAIN = 1.0                                # a migration's window runs on this long after it exits: requests queued behind it drain

COUNTRIES = [("US", "United States"), ("GB", "United Kingdom"), ("DE", "Germany"), ("FR", "France"), ("JP", "Japan"),
             ("BR", "Brazil"), ("IN", "India"), ("CA", "Canada")]


def uid(n):
    """The id of user n, as SQL: deterministic, so the app's requests and the backfill batches can name users."""
    return f"('00000000-0000-4000-8000-' || lpad(({n})::text, 12, '0'))::uuid"


def uid_literal(n):
    return f"'00000000-0000-4000-8000-{n:012d}'"


COUNTRY_OF = ("(array[" + ", ".join(f"'{c}'" for c, _ in COUNTRIES) + f"])[1 + abs(hashtext(id::text)) % {len(COUNTRIES)}]")
COUNTRIES_TABLE = """create table public.countries (
  code text primary key,
  name text not null
);
alter table public.countries enable row level security;
grant select on public.countries to anon, authenticated;
create policy "Countries are readable by everyone." on public.countries for select using (true);
insert into public.countries (code, name) values
  """ + ",\n  ".join(f"('{c}', '{n}')" for c, n in COUNTRIES) + ";\n"


def backfill_batches():
    out = []
    for lo in range(1, ROWS + 1, BATCH):
        hi = min(ROWS, lo + BATCH - 1)
        out.append(f"update public.profiles set country_code = {COUNTRY_OF}\n"
                   f"  where id between {uid_literal(lo)} and {uid_literal(hi)} and country_code is null;")
    return "\n".join(out) + "\n"


# Each step: the files Steward applies (a careful team's), the naive file, and a catalog check that it applied.
STEPS = [
    {"name": "add column",
     "safe": [("0101_profiles_country_code.sql", "-- The member's country, for regional pricing.\n"
               "alter table public.profiles add column country_code text;\n")],
     "naive": [("0101_profiles_country_code.sql", "alter table public.profiles add column country_code text;\n")],
     "check": "select exists (select from pg_attribute where attrelid = 'public.profiles'::regclass and attname = 'country_code' and not attisdropped)"},
    {"name": "backfill",
     "safe": [("0102_backfill_country_code.sql", "-- steward:no-transaction\n"
               f"-- In batches of {BATCH:,} rows, each its own transaction: no row stays locked for long.\n" + backfill_batches())],
     "naive": [("0102_backfill_country_code.sql", f"update public.profiles set country_code = {COUNTRY_OF} where country_code is null;\n")],
     "check": "select count(*) = 0 from public.profiles where country_code is null"},
    {"name": "add index",
     "safe": [("0103_profiles_country_index.sql", "-- steward:no-transaction\n"
               "create index concurrently if not exists profiles_country_code_idx on public.profiles (country_code, username);\n")],
     "naive": [("0103_profiles_country_index.sql", "create index profiles_country_code_idx on public.profiles (country_code, username);\n")],
     "check": "select coalesce((select indisvalid from pg_index where indexrelid = to_regclass('public.profiles_country_code_idx')), false)"},
    {"name": "add FK",
     "safe": [("0104_countries.sql", COUNTRIES_TABLE +
               "alter table public.profiles add constraint profiles_country_code_fkey\n"
               "  foreign key (country_code) references public.countries (code) not valid;\n"),
              ("0105_validate_country_fk.sql", "alter table public.profiles validate constraint profiles_country_code_fkey;\n")],
     "naive": [("0104_countries.sql", COUNTRIES_TABLE +
                "alter table public.profiles add constraint profiles_country_code_fkey\n"
                "  foreign key (country_code) references public.countries (code);\n")],
     "check": "select coalesce((select convalidated from pg_constraint where conname = 'profiles_country_code_fkey'), false)"},
    {"name": "add check",
     "safe": [("0106_country_code_format.sql", "alter table public.profiles add constraint profiles_country_code_format\n"
               "  check (country_code ~ '^[A-Z]{2}$') not valid;\n"),
              ("0107_validate_country_code_format.sql", "alter table public.profiles validate constraint profiles_country_code_format;\n")],
     "naive": [("0106_country_code_format.sql", "alter table public.profiles add constraint profiles_country_code_format\n"
                "  check (country_code ~ '^[A-Z]{2}$');\n")],
     "check": "select coalesce((select convalidated from pg_constraint where conname = 'profiles_country_code_format'), false)"},
    {"name": "set not null",
     "safe": [("0108_country_code_present.sql", "alter table public.profiles add constraint profiles_country_code_present\n"
               "  check (country_code is not null) not valid;\n"),
              ("0109_validate_country_code_present.sql", "alter table public.profiles validate constraint profiles_country_code_present;\n"),
              ("0110_country_code_not_null.sql", "-- The validated check proves it: SET NOT NULL scans nothing under its lock.\n"
               "alter table public.profiles alter column country_code set not null;\n"
               "alter table public.profiles drop constraint profiles_country_code_present;\n")],
     "naive": [("0108_country_code_not_null.sql", "alter table public.profiles alter column country_code set not null;\n")],
     "check": "select attnotnull from pg_attribute where attrelid = 'public.profiles'::regclass and attname = 'country_code'"},
]

# The app: one PostgREST request a transaction (role, claims and the role's statement_timeout set locally).
READ_SCRIPT = f"""\\set n random(1, {ROWS})
BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY;
SELECT set_config('role', 'anon', true), set_config('statement_timeout', '3s', true), set_config('request.jwt.claims', '{{"role":"anon"}}', true);
SELECT id, username, full_name, avatar_url, website, updated_at FROM public.profiles WHERE id = {uid(':n')};
COMMIT;
"""
UPDATE_SCRIPT = f"""\\set n random(1, {ROWS})
BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT set_config('role', 'authenticated', true), set_config('statement_timeout', '8s', true), set_config('request.jwt.claims', '{{"role":"authenticated","sub":"' || {uid(':n')}::text || '"}}', true);
UPDATE public.profiles SET full_name = 'User ' || :n || ' (edited)', updated_at = now() WHERE id = {uid(':n')};
COMMIT;
"""


def url(db, user="postgres"):
    return f"postgresql://{user}:steward-local@127.0.0.1:{PORT}/{db}?sslmode=disable"


def psql(dburl, *args, check=True, timeout=None):
    return subprocess.run(["psql", dburl, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", *args], check=check, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "PGOPTIONS": "-c client_min_messages=warning"})


def admin(db="postgres"):
    return url(db, "supabase_admin")


def fresh(name):
    psql(admin(), "-c", f"drop database if exists {name} with (force)", "-c",
         f"create database {name} template steward_template_2026 owner postgres",
         # The platform lets postgres manage storage policies (supautils); the shim's stand-in reads this per-database setting.
         "-c", f"alter database {name} set supautils_stand_in.policy_grants = 'postgres:storage.objects'")


def scalar(db, sql):
    return psql(url(db), "-c", sql).stdout.strip()


def steward_migrate(db, folder):
    return subprocess.run([STEWARD, "migrate", "--database-url", url(db), "--migrations", folder, "--log-level", "info"],
                          capture_output=True, text=True, timeout=300, cwd=folder)


def prepare(db, folder):
    """A fresh database with the quickstart applied by steward and ROWS users signed up (their profiles made by the trigger)."""
    fresh(db)
    for name in sorted(os.listdir(os.path.join(ROOT, "sql/migrations"))):
        if name.endswith(".sql"):
            shutil.copy(os.path.join(ROOT, "sql/migrations", name), folder)
    done = steward_migrate(db, folder)
    if done.returncode != 0:
        raise SystemExit(f"steward migrate of the quickstart exited {done.returncode}\n{done.stdout}{done.stderr}")
    psql(admin(db), "-c", f"""
        insert into auth.users (id, aud, role, email, raw_user_meta_data, raw_app_meta_data, created_at, updated_at)
        select {uid('n')}, 'authenticated', 'authenticated', 'user' || n || '@example.com',
               jsonb_build_object('full_name', 'User ' || n), '{{"provider":"email","providers":["email"]}}', now(), now()
        from generate_series(1, {ROWS}) n""",
         "-c", "update public.profiles set username = 'user' || substr(id::text, 25)",
         "-c", "vacuum analyze auth.users", "-c", "vacuum analyze public.profiles", "-c", "checkpoint")
    got = scalar(db, "select count(*) from public.profiles")
    if got != str(ROWS):
        raise SystemExit(f"{db}: {got} profiles after signing up {ROWS} users")


class Client:
    """One app connection: a pgbench process (one client, -R rate), restarted when it aborts on an error."""

    def __init__(self, index, db, folder, until):
        self.index, self.db, self.folder, self.until = index, db, folder, until
        self.errors = []       # (time, message)
        self.logs = []
        self.proc = None
        self.stopped = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        n = 0
        while not self.stopped:
            remaining = int(self.until - time.time())
            if remaining < 1:
                return
            prefix = os.path.join(self.folder, f"app{self.index}_{n}")
            self.logs.append(prefix)
            n += 1
            env = {**os.environ, "PGPASSWORD": "steward-local", "PGSSLMODE": "disable", "PGAPPNAME": f"app{self.index}"}
            self.proc = subprocess.Popen(
                ["pgbench", "-n", "-h", "127.0.0.1", "-p", PORT, "-U", "authenticator", "-c", "1", "-j", "1", "-R", str(CLIENT_RATE),
                 "-T", str(remaining), "-M", "extended", "-l", "--log-prefix", prefix,
                 "-f", os.path.join(self.folder, "read.sql") + "@1", "-f", os.path.join(self.folder, "update.sql") + "@1", self.db],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
            for line in self.proc.stderr:
                if re.search(r"client \d+ .*aborted", line):
                    self.errors.append((time.time(), line.strip()))
            self.proc.wait()

    def stop(self):
        self.stopped = True
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        self.thread.join(10)

    def transactions(self):
        """(due time, latency ms, script, failed) for every logged request of every incarnation."""
        out = []
        for prefix in self.logs:
            folder, base = os.path.split(prefix)
            for name in os.listdir(folder):
                if not name.startswith(base + "."):
                    continue
                with open(os.path.join(folder, name)) as f:
                    for line in f:
                        parts = line.split()
                        if len(parts) < 6:
                            continue     # a line cut off when the client was stopped
                        done = int(parts[4]) + int(parts[5]) / 1e6
                        if parts[2] in ("failed", "skipped", "serialization", "deadlock"):
                            out.append((done, None, int(parts[3]), True))
                        else:
                            us = int(parts[2])
                            out.append((done - us / 1e6, us / 1000, int(parts[3]), False))
        return out


class Analytics:
    """Every CYCLE s from t0: begin; select count(*) from public.profiles; held open (idle in transaction) for HOLD s."""

    def __init__(self, db, t0):
        self.db, self.t0, self.stopped = db, t0, threading.Event()
        self.holds = []
        self.conn = psycopg.connect(url(self.db).replace("?sslmode=disable", "?sslmode=disable&application_name=analytics"))
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        k = 0
        while True:
            if self.stopped.wait(max(0, self.t0 + k * CYCLE - time.time())):
                return
            start = time.time()
            self.conn.execute("select count(*) from public.profiles").fetchone()
            self.stopped.wait(max(0, start + HOLD - time.time()))
            self.conn.commit()
            self.holds.append((start, time.time()))
            k += 1

    def stop(self):
        self.stopped.set()
        self.thread.join(10)
        self.conn.close()


def apply_steward(db, folder, step):
    for name, sql in step["safe"]:
        with open(os.path.join(folder, name), "w") as f:
            f.write(sql)
    done = steward_migrate(db, folder)
    return done.returncode, done.stdout + done.stderr


def apply_psql(db, folder, files):
    out = ""
    for name, sql in files:
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            f.write(sql)
        single = [] if sql.startswith("-- steward:no-transaction") else ["-1"]
        try:
            done = psql(url(db), *single, "-f", path, check=False, timeout=300)
        except subprocess.TimeoutExpired:
            return 124, out + f"{name}: still waiting after 300 s\n"
        out += done.stdout + done.stderr
        if done.returncode != 0:
            return done.returncode, out
    return 0, out


RUNNER_LABELS = {"steward": "steward migrate", "naive": "psql -1 -f, naive files", "same": "psql, Steward's files"}


def slice_ms(attempt):
    """Steward's lock_timeout for try `attempt` (0 first) at the default settings (LockRetryPolicy.slice)."""
    return round(min(FIRST_SLICE_MS * 1.5 ** attempt, FIRST_SLICE_MS * 4))


def tries(output):
    """From Steward's log of a step: how many tries gave way (a lock not granted within the slice), and the slices of
    every try of each file (or no-transaction statement) that had to wait, the one that applied included: slice_ms(0),
    slice_ms(1), … (each file starts again at the first slice)."""
    waited = {}
    for line in re.findall(r"lock wait: (?:rolled back|gave way)[^\n]*", output):
        file = re.search(r" file=(\S+)", line)
        statement = re.search(r" statement=(\S+)", line)
        key = (file.group(1) if file else "", statement.group(1) if statement else "")
        waited[key] = waited.get(key, 0) + 1
    return sum(waited.values()), [slice_ms(a) for k in waited.values() for a in range(k + 1)]


def session(key, work):
    """One runner: fresh database, traffic, the baseline cycles, then each step; returns the rows of the table."""
    db = f"bench_deploy_{key}"
    folder = os.path.join(work, key)
    os.makedirs(folder)
    app = os.path.join(work, key + "-app")      # the app's pgbench scripts and logs, beside the migrations folder
    os.makedirs(app)
    prepare(db, folder)
    with open(os.path.join(app, "read.sql"), "w") as f:
        f.write(READ_SCRIPT)
    with open(os.path.join(app, "update.sql"), "w") as f:
        f.write(UPDATE_SCRIPT)
    until = time.time() + 600
    clients = [Client(i, db, app, until) for i in range(CLIENTS)]
    t0 = time.time() + 2.0
    analytics = Analytics(db, t0)
    cycle = BASELINE_CYCLES
    steps = []
    try:
        for step in STEPS:
            at = t0 + cycle * CYCLE + PHASE
            time.sleep(max(0, at - time.time()))
            start = time.time()
            if key == "steward":
                rc, out = apply_steward(db, folder, step)
            else:
                rc, out = apply_psql(db, folder, step["naive"] if key == "naive" else step["safe"])
            end = time.time()
            applied = rc == 0 and scalar(db, step["check"]) == "t"
            steps.append({"step": step, "start": start, "end": end, "rc": rc, "out": out, "applied": applied,
                          "files": len(step["naive"] if key == "naive" else step["safe"])})
            if not applied:
                print(f"note: {RUNNER_LABELS[key]}, {step['name']}: exit {rc}, not applied\n{out.strip()[-2000:]}", file=sys.stderr)
            cycle = math.ceil((end + 1.0 - t0 - PHASE) / CYCLE)
        time.sleep(max(0, steps[-1]["end"] + 3.0 - time.time()))
    finally:
        analytics.stop()
        for c in clients:
            c.stop()
    txns = [t for c in clients for t in c.transactions()]
    errors = [e for c in clients for e in c.errors]
    base_start = t0 + PHASE
    base_limit = t0 + BASELINE_CYCLES * CYCLE
    rows = []
    for s in steps:
        length = s["end"] - s["start"]
        span = length + DRAIN
        base = window(txns, errors, base_start, min(base_start + span, base_limit))
        during = window(txns, errors, s["start"], s["start"] + span)
        gave_way, used = tries(s["out"]) if key == "steward" else (0, [])
        rows.append({"key": key, "name": s["step"]["name"], "files": s["files"], "wall": length, "applied": s["applied"],
                     "base": base, "during": during, "gave_way": gave_way,
                     "blocked_by": next(iter(re.findall(r" blocked_by=(\"(?:[^\"\\\\]|\\\\.)*\"|\S+)", s["out"])), None),
                     "slices": used or [FIRST_SLICE_MS],
                     "clipped": base_start + span > base_limit})
    psql(admin(), "-c", f"drop database if exists {db} with (force)")
    return rows, analytics.holds, errors


def window(txns, errors, a, b):
    done = sorted(t[1] for t in txns if a <= t[0] <= b and not t[3])
    failed = sum(1 for t in txns if a <= t[0] <= b and t[3]) + sum(1 for when, _ in errors if a <= when <= b + 0.5)

    def pct(p):
        return done[max(0, math.ceil(p * len(done)) - 1)] if done else float("nan")
    return {"n": len(done), "p50": pct(0.50), "p99": pct(0.99), "max": done[-1] if done else float("nan"), "errors": failed}


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def fmt(ms):
    if ms != ms:
        return "–"
    return f"{ms:,.0f}" if ms >= 100 else f"{ms:.1f}"


def main():
    if not os.access(STEWARD, os.X_OK):
        raise SystemExit(f"no steward binary at {STEWARD} (set STEWARD_BINARY)")
    if not shutil.which("pgbench"):
        raise SystemExit("no pgbench on PATH (Debian: postgresql-15)")
    unknown = [r for r in RUNNERS if r not in RUNNER_LABELS]
    if unknown:
        raise SystemExit("BENCH_RUNNERS: unknown runner " + ", ".join(unknown))
    results, all_errors = {}, {}
    began = time.time()
    with tempfile.TemporaryDirectory() as work:
        for key in RUNNERS:
            results[key], _, all_errors[key] = session(key, work)
    minutes = (time.time() - began) / 60
    after = load()

    print(f"## Schema changes under app traffic: steward migrate against psql — {datetime.date.today()} — {platform.node()} "
          f"({os.cpu_count()} cores, {platform.machine()}), {ROWS:,} profiles\n")
    print(f"App: {CLIENTS} connections × {CLIENT_RATE:g} requests/s (pgbench -R, half reads as anon, half own-row updates as "
          f"authenticated, PostgREST-style transactions); analytics: a transaction holding `select count(*)` on profiles "
          f"{HOLD:g} s in every {CYCLE:g} s; each migration starts {PHASE:g} s into one. Latency in ms, from when a request was "
          f"due; baseline: the same length and point of the cycle with no migration.\n")
    print("| migration | runner | files | wall (s) | applied | requests | p50 | p99 | max | errors | baseline p50 / p99 / max | Δp99 | Steward: tries that gave way (slices of the tries, ms) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for i, step in enumerate(STEPS):
        for key in RUNNERS:
            r = results[key][i]
            d, b = r["during"], r["base"]
            tried = (f"{r['gave_way']} ({', '.join(map(str, r['slices']))})" if r["gave_way"] else "0") if key == "steward" else ""
            print(f"| {step['name'] if key == RUNNERS[0] else ''} | {RUNNER_LABELS[key]} | {r['files']} | {r['wall']:.2f} | "
                  f"{'yes' if r['applied'] else '**no**'} | {d['n']} | {fmt(d['p50'])} | {fmt(d['p99'])} | {fmt(d['max'])} | "
                  f"{d['errors']}{' (baseline ' + str(b['errors']) + ')' if b['errors'] else ''} | "
                  f"{fmt(b['p50'])} / {fmt(b['p99'])} / {fmt(b['max'])}{' (clipped)' if r['clipped'] else ''} | "
                  f"{d['p99'] - b['p99']:+,.0f} | {tried} |")
    print()
    print(f"Runners, each on its own fresh database, one after the other: **steward migrate** at its defaults (first slice "
          f"{FIRST_SLICE_MS} ms, 1.5x a try up to {slice_ms(9)} ms, budget 120 s) of a careful team's files (backfill in "
          f"{BATCH:,}-row batches in a no-transaction file, CREATE INDEX CONCURRENTLY, NOT VALID + VALIDATE for the FK and the "
          f"check, SET NOT NULL after a validated IS NOT NULL check); **psql -1 -f, naive files**: one UPDATE, CREATE INDEX, "
          f"constraints validated as they are added, SET NOT NULL; **psql, Steward's files**: the careful files through psql "
          f"(-1 -f; plain -f for the no-transaction ones), as role postgres with no lock_timeout. A window runs from the "
          f"runner's start to {DRAIN:g} s after it exits (requests queued behind it drain); requests are those due in it that "
          f"completed. An error is a request the server cancelled (its role's statement_timeout: anon 3 s, authenticated 8 s): "
          f"pgbench ends that connection's run and it is started again at once, without the requests it had queued, so rows "
          f"with errors count fewer requests and their latencies are if anything low.\n")
    if "steward" in results:
        rows = results["steward"]
        applied = all(r["applied"] for r in rows)
        errors = sum(r["during"]["errors"] for r in rows)
        worst = max(rows, key=lambda r: r["during"]["p99"] - r["base"]["p99"])
        delta = worst["during"]["p99"] - worst["base"]["p99"]
        longest = max(worst["slices"])
        slowest = max(rows, key=lambda r: r["during"]["max"])
        print("| target (Steward) | figure | |")
        print("|---|---|---|")
        print(f"| every migration applied | {sum(r['applied'] for r in rows)} of {len(rows)} | {'met' if applied else 'missed'} |")
        print(f"| zero app errors during the migrations | {errors} | {'met' if errors == 0 else 'missed'} |")
        verdict = ("met" if delta <= FIRST_SLICE_MS else
                   f"met against the longest slice of its tries ({longest} ms); not against the first ({FIRST_SLICE_MS} ms)"
                   if delta <= longest else "missed")
        print(f"| app p99 at most one slice above the baseline | worst Δp99 {delta:+,.0f} ms ({worst['name']}, "
              f"{worst['gave_way']} tries gave way) | {verdict} |")
        print(f"| (no request longer than one slice and a margin) | slowest request {slowest['during']['max']:,.0f} ms "
              f"({slowest['name']}; its tries' slices {', '.join(map(str, slowest['slices']))} ms) | |")
        print()
    if "steward" in results:
        named = next((r["blocked_by"] for r in results["steward"] if r["blocked_by"]), None)
        if named:
            print(f"Steward's log named the blocker each time, e.g. `blocked_by={named[:300]}`\n")
    for key in RUNNERS:
        kinds = {}
        for _, message in all_errors[key]:
            m = re.search(r"script (\d+) aborted in command \d+ query \d+: (.*)", message)
            kind = (f"{'anon read' if m.group(1) == '0' else 'own-row update'}: {m.group(2)}") if m else message
            kinds[kind] = kinds.get(kind, 0) + 1
        for kind, count in kinds.items():
            print(f"- {RUNNER_LABELS[key]}: {count} app error{'s' if count > 1 else ''}, {kind[:200]}")
    version = subprocess.run([STEWARD, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"\nThe whole run took {minutes:.1f} minutes; load average after it: {after}. {version}.")


if __name__ == "__main__":
    sys.exit(main())
