"""Runs one command and returns its wall time, exit status, output, and its own peak RSS (wait4: that child
alone, not the largest of every child so far)."""
import os, subprocess, tempfile, time


def run(args, env=None):
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(args, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return seconds, proc.returncode, out.read().decode(), err.read().decode(), usage.ru_maxrss
