#!/usr/bin/env python3
"""Unix-socket clients and servers run as other users, for the control socket's tests.

  socket-clients.py hold SOCKET SECONDS STOPFILE USER:COUNT:MODE...   per user (forked, setuid), until SECONDS pass
      or STOPFILE exists: keep COUNT connections
      (MODE hold: each sends half a line and waits; MODE flood: each sends "verify" again and again); prints one
      JSON line per user: most connections held at once, refusals and their messages.
  socket-clients.py ask SOCKET USER SECONDS LINE...          as USER: one connection per LINE, all sent at once; prints
      one JSON line per reply as it comes (line, reply's first 200 characters, seconds since the start, wall-clock
      time at), then one with reply null for
      each left unanswered when SECONDS pass.
  socket-clients.py listen SOCKET USER SECONDS               as USER: a server that answers every line with ok.
  socket-clients.py hangup SOCKET SECONDS                    a server that accepts and closes at once.
  socket-clients.py stale SOCKET                             binds SOCKET and exits, leaving it behind.
"""
import json, os, pwd, select, signal, socket, sys, threading, time


def serve(server, seconds, answer):
    """Listens on `server` for `seconds`, says "ready", and hands each client to `answer` before closing it."""
    server.listen(16)
    print("ready", flush=True)
    server.settimeout(0.2)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            client, _ = server.accept()
        except socket.timeout:
            continue
        try:
            answer(client)
        except OSError:
            pass
        client.close()


def squatter_answer(client):
    client.recv(4096)
    client.sendall(b'{"ok":true,"text":"a squatter answered"}\n')


def become(user):
    entry = pwd.getpwnam(user)
    os.setgroups([])
    os.setgid(entry.pw_gid)
    os.setuid(entry.pw_uid)
    return entry.pw_uid


def hold(path, seconds, stop, user, count, mode):
    uid = become(user)
    deadline = time.monotonic() + seconds

    def over():
        return time.monotonic() >= deadline or os.path.exists(stop)

    lock = threading.Lock()
    state = {"refused": 0, "answered": 0, "unanswered": 0}
    messages = set()
    # When each admitted connection was open: (connected, closed). Whether one was admitted is told by its
    # reply (a refusal says "too many"), never by timing, so a slow machine cannot blur it.
    admitted = []

    def worker():
        while not over():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            # Nothing may block past the end: a stuck call would keep this user from reporting.
            s.settimeout(2.0)
            started = time.monotonic()
            reply = b""
            try:
                s.connect(path)
                s.sendall(b"verify\n" if mode == "flood" else b"sta")
                while b"\n" not in reply and not over():
                    ready, _, _ = select.select([s], [], [], 0.2)
                    if ready:
                        chunk = s.recv(65536)
                        if not chunk:
                            break
                        reply += chunk
            except OSError:
                pass
            finally:
                s.close()
            ended = time.monotonic()
            text = reply.split(b"\n")[0]
            with lock:
                if b"too many" in text:
                    state["refused"] += 1
                    try:
                        messages.add(json.loads(text).get("error", ""))
                    except ValueError:
                        messages.add(text[:80].decode("utf-8", "replace"))
                else:
                    state["answered" if text else "unanswered"] += 1
                    admitted.append((started, ended))
            if b"too many" in text:
                time.sleep(0.01)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, deadline + 5 - time.monotonic()) if not os.path.exists(stop) else 5)
    with lock:
        # Most held at once, counting a connection until a second before its client saw it close (the daemon
        # frees the slot as it sends the last byte, a little before that).
        held = [sum(1 for a, b in admitted if a <= t <= b - 1.0) for t, _ in admitted]
        line = json.dumps({"user": user, "uid": uid, "mode": mode, "max_held": max(held, default=0),
                           "stuck": sum(1 for t in threads if t.is_alive()), "messages": sorted(messages), **state})
    # The parent prints every child's result: children writing to one pipe at once could mix their lines.
    with open(f"{stop}.{user}.json", "w") as f:
        f.write(line)


def main():
    command = sys.argv[1]
    if command == "hold":
        path, seconds, stop = sys.argv[2], float(sys.argv[3]), sys.argv[4]
        children = []
        for spec in sys.argv[5:]:
            user, count, mode = spec.split(":")
            pid = os.fork()
            if pid == 0:
                try:
                    hold(path, seconds, stop, user, int(count), mode)
                finally:
                    os._exit(0)
            children.append((pid, spec))
        def end(signum, frame):
            for pid, _ in children:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            os._exit(1)

        signal.signal(signal.SIGTERM, end)
        print("ready", flush=True)
        for pid, spec in children:
            _, status = os.waitpid(pid, 0)
            user = spec.split(":")[0]
            try:
                with open(f"{stop}.{user}.json") as f:
                    print(f.read(), flush=True)
                os.unlink(f"{stop}.{user}.json")
            except OSError:
                print(json.dumps({"user": user, "missing": True, "status": status}), flush=True)
    elif command == "ask":
        path, user, seconds, lines = sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5:]
        become(user)
        started = time.monotonic()
        waiting = {}
        for line in lines:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.sendall(line.encode() + b"\n")
            waiting[s] = (line, b"")
        print("ready", flush=True)
        while waiting and time.monotonic() - started < seconds:
            ready, _, _ = select.select(list(waiting), [], [], 0.2)
            for s in ready:
                line, reply = waiting[s]
                chunk = s.recv(65536)
                reply += chunk
                if chunk and b"\n" not in reply:
                    waiting[s] = (line, reply)
                    continue
                del waiting[s]
                s.close()
                print(json.dumps({"line": line, "reply": reply.split(b"\n")[0][:200].decode("utf-8", "replace"),
                                  "seconds": round(time.monotonic() - started, 3), "at": time.time()}), flush=True)
        for line, _ in waiting.values():
            print(json.dumps({"line": line, "reply": None}), flush=True)
    elif command == "listen":
        path, user, seconds = sys.argv[2], sys.argv[3], float(sys.argv[4])
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        become(user)
        server.bind(path)
        os.chmod(path, 0o666)
        serve(server, seconds, squatter_answer)
    elif command == "hangup":
        path, seconds = sys.argv[2], float(sys.argv[3])
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        serve(server, seconds, lambda client: None)
        os.unlink(path)
    elif command == "stale":
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(sys.argv[2])
        server.listen(1)
        print("ready", flush=True)
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main()
