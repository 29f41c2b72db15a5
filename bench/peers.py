"""Project layouts and commands for the migration tools Steward is compared with (bench/migrate_bench.py):
sqitch and sql-migrate (Debian packages) and yoyo-migrations (PyPI), each given the same SQL files."""
import os, shutil, subprocess


def available():
    """The peers installed here, by name."""
    tools = {"sqitch": "sqitch", "sql-migrate": "sql-migrate", "yoyo": "yoyo"}
    return [name for name, binary in tools.items() if shutil.which(binary)]


def files(folder):
    return [(name[:-4], open(os.path.join(folder, name)).read()) for name in sorted(os.listdir(folder)) if name.endswith(".sql")]


def prepare(tool, source, workdir, port, database):
    """Writes the tool's project for the migrations in `source` under `workdir`; returns the command that applies them."""
    os.makedirs(workdir, exist_ok=True)
    migrations = files(source)
    if tool == "sqitch":
        os.makedirs(os.path.join(workdir, "deploy"), exist_ok=True)
        with open(os.path.join(workdir, "sqitch.conf"), "w") as f:
            f.write("[core]\n\tengine = pg\n\tplan_file = sqitch.plan\n\ttop_dir = .\n")
        with open(os.path.join(workdir, "sqitch.plan"), "w") as f:
            f.write("%syntax-version=1.0.0\n%project=bench\n\n")
            for name, _ in migrations:
                f.write(f"{name} 2026-11-30T00:00:00Z Bench <bench@example.com> # {name}\n")
        for name, sql in migrations:
            # sqitch runs each script as it is; the convention is to wrap it in a transaction.
            with open(os.path.join(workdir, "deploy", name + ".sql"), "w") as f:
                f.write("BEGIN;\n" + sql + "\nCOMMIT;\n")
        return ["sqitch", "--chdir", workdir, "deploy", "--target", f"db:pg://postgres:steward-local@127.0.0.1:{port}/{database}?sslmode=disable"], {"SQITCH_USER_CONFIG": "/dev/null"}
    if tool == "sql-migrate":
        os.makedirs(os.path.join(workdir, "migrations"), exist_ok=True)
        with open(os.path.join(workdir, "dbconfig.yml"), "w") as f:
            f.write(f"bench:\n  dialect: postgres\n  datasource: host=127.0.0.1 port={port} dbname={database} user=postgres "
                    f"password=steward-local sslmode=disable\n  dir: {workdir}/migrations\n")
        for name, sql in migrations:
            # Dollar-quoted bodies must not be split at their semicolons: one statement block per file.
            with open(os.path.join(workdir, "migrations", name + ".sql"), "w") as f:
                f.write("-- +migrate Up\n-- +migrate StatementBegin\n" + sql + "\n-- +migrate StatementEnd\n")
        return ["sql-migrate", "up", f"-config={workdir}/dbconfig.yml", "-env=bench"], {}
    if tool == "yoyo":
        os.makedirs(os.path.join(workdir, "migrations"), exist_ok=True)
        for name, sql in migrations:
            with open(os.path.join(workdir, "migrations", name + ".sql"), "w") as f:
                f.write(sql)
        return ["yoyo", "apply", "--batch", "--no-config-file", "--database",
                f"postgresql+psycopg://postgres:steward-local@127.0.0.1:{port}/{database}?sslmode=disable", os.path.join(workdir, "migrations")], {}
    raise ValueError(tool)


def check(command, env):
    result = subprocess.run(command, env={**os.environ, **env}, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{command[0]} failed: {result.stdout[-500:]} {result.stderr[-500:]}")
