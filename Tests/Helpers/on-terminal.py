#!/usr/bin/env python3
"""Runs the command given as arguments with its standard error on a pseudo-terminal (stdout stays as given),
copies what it writes there to this script's standard error, and exits with the command's code."""
import os
import pty
import sys

master, slave = pty.openpty()
pid = os.fork()
if pid == 0:
    os.close(master)
    os.dup2(slave, 2)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(slave)
    os.execvp(sys.argv[1], sys.argv[1:])
os.close(slave)
while True:
    try:
        data = os.read(master, 65536)
    except OSError:
        break
    if not data:
        break
    sys.stderr.buffer.write(data)
    sys.stderr.buffer.flush()
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)
