"""Runs one command and returns its wall time, exit status, output, and its own peak RSS.

The command is started by a small launcher, which times it and reads its peak with wait4. Starting it straight
from this Python process would not do: Linux carries the memory high-water mark of the process that calls exec
into the new program, so the command would report at least this process's size (which grows as a benchmark goes
on, e.g. after the community walk), not its own. The launcher's own size (about 8 MiB) is the floor of what it
reports."""
import os, subprocess, sys, tempfile, time

# argv: the fd to report on, then the command. Reports "seconds maxrss_kib" of the command alone.
LAUNCHER = """
import os, sys, time
report = int(sys.argv[1])
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
os.write(report, ("%f %d" % (time.perf_counter() - start, usage.ru_maxrss)).encode())
code = os.waitstatus_to_exitcode(status)
os._exit(code if code >= 0 else 128 - code)
"""


def run(args, env=None):
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as report:
        fd = report.fileno()
        proc = subprocess.Popen([sys.executable, "-S", "-E", "-c", LAUNCHER, str(fd)] + list(args),
                                stdout=out, stderr=err, env=env, pass_fds=(fd,))
        proc.wait()
        report.seek(0)
        seconds, peak = report.read().decode().split()
        out.seek(0)
        err.seek(0)
        return float(seconds), proc.returncode, out.read().decode(), err.read().decode(), int(peak)
