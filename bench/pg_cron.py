"""pg_cron (Debian's postgresql-15-cron) in a throwaway cluster of its own, for the fire-delay comparison:
its job inserts clock_timestamp() at every even minute; the delay is that time past the minute."""
import os, shutil, subprocess, tempfile, time

BIN = "/usr/lib/postgresql/15/bin"
PORT = int(os.environ.get("BENCH_PGCRON_PORT", "54371"))


def as_postgres(args, **kwargs):
    if os.geteuid() == 0:
        args = ["runuser", "-u", "postgres", "--"] + args
    return subprocess.run(args, check=True, cwd="/", **kwargs)


class PgCron:
    """Starts the cluster with pg_cron preloaded and one job `*/2 * * * *`; `stop()` removes everything."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="steward-pgcron-")
        os.chmod(self.dir, 0o755)
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        data = os.path.join(self.dir, "data")
        as_postgres([f"{BIN}/initdb", "-D", data, "-U", "postgres", "-A", "trust", "--no-sync"], stdout=subprocess.DEVNULL)
        with open(os.path.join(self.dir, "extra.conf"), "w") as f:
            f.write(f"port = {PORT}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{self.dir}'\n"
                    "shared_preload_libraries = 'pg_cron'\ncron.database_name = 'postgres'\ncron.host = '127.0.0.1'\n"
                    "fsync = off\n")
        as_postgres(["sh", "-c", f"cat {self.dir}/extra.conf >> {data}/postgresql.conf"])
        as_postgres([f"{BIN}/pg_ctl", "-D", data, "-l", os.path.join(self.dir, "log"), "-w", "start"], stdout=subprocess.DEVNULL)
        self.data = data
        self.psql("create extension pg_cron; create table fire (at timestamptz not null);"
                  "select cron.schedule('fire', '*/2 * * * *', 'insert into fire values (clock_timestamp())');")

    def psql(self, sql):
        return subprocess.run(["psql", f"postgresql://postgres@127.0.0.1:{PORT}/postgres", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1",
                               "-c", sql], check=True, capture_output=True, text=True).stdout

    def delays_ms(self):
        rows = self.psql("select extract(epoch from at - date_trunc('minute', at)) * 1000 from fire order by at")
        return [float(x) for x in rows.split()]

    def stop(self):
        try:
            as_postgres([f"{BIN}/pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop"], stdout=subprocess.DEVNULL)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def installed():
    return os.path.exists("/usr/share/postgresql/15/extension/pg_cron.control")
