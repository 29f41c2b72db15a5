#!/usr/bin/env python3
"""Unix-socket clients and servers run as other users, for the control socket's tests.

  socket-clients.py hold SOCKET SECONDS USER:COUNT:MODE...   per user (forked, setuid): keep COUNT connections
      (MODE hold: each sends half a line and waits; MODE flood: each sends "verify" again and again); prints one
      JSON line per user: most connections held at once, refusals and their messages.
  socket-clients.py listen SOCKET USER SECONDS               as USER: a server that answers every line with ok.
  socket-clients.py hangup SOCKET SECONDS                    a server that accepts and closes at once.
  socket-clients.py stale SOCKET                             binds SOCKET and exits, leaving it behind.
"""
import json, os, pwd, select, socket, sys, threading, time


def become(user):
    entry = pwd.getpwnam(user)
    os.setgroups([])
    os.setgid(entry.pw_gid)
    os.setuid(entry.pw_uid)
    return entry.pw_uid


def hold(path, seconds, user, count, mode):
    uid = become(user)
    deadline = time.monotonic() + seconds
    lock = threading.Lock()
    state = {"held": 0, "max_held": 0, "refused": 0, "messages": set(), "answered": 0, "unanswered": 0}

    def worker():
        while time.monotonic() < deadline:
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
            except OSError:
                time.sleep(0.01)
                continue
            try:
                s.sendall(b"verify\n" if mode == "flood" else b"sta")
                ready, _, _ = select.select([s], [], [], 0.05)
                first = s.recv(4096) if ready else None
                if first is not None and (b"too many" in first or first == b""):
                    with lock:
                        state["refused"] += 1
                        try:
                            state["messages"].add(json.loads(first.split(b"\n")[0]).get("error", ""))
                        except ValueError:
                            state["messages"].add(first[:80].decode("utf-8", "replace"))
                    s.close()
                    time.sleep(0.01)
                    continue
                with lock:
                    state["held"] += 1
                    state["max_held"] = max(state["max_held"], state["held"])
                try:
                    # Held until the daemon answers or times the half line out, then again.
                    remaining = max(0.0, deadline - time.monotonic())
                    if first is None:
                        ready, _, _ = select.select([s], [], [], remaining)
                        first = s.recv(65536) if ready else None
                    with lock:
                        state["answered" if first else "unanswered"] += 1
                finally:
                    with lock:
                        state["held"] -= 1
            except OSError:
                pass
            finally:
                s.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 10)
    state["messages"] = sorted(state["messages"])
    print(json.dumps({"user": user, "uid": uid, "mode": mode, **state}), flush=True)


def main():
    command = sys.argv[1]
    if command == "hold":
        path, seconds = sys.argv[2], float(sys.argv[3])
        children = []
        for spec in sys.argv[4:]:
            user, count, mode = spec.split(":")
            pid = os.fork()
            if pid == 0:
                try:
                    hold(path, seconds, user, int(count), mode)
                finally:
                    os._exit(0)
            children.append(pid)
        print("ready", flush=True)
        for pid in children:
            os.waitpid(pid, 0)
    elif command == "listen":
        path, user, seconds = sys.argv[2], sys.argv[3], float(sys.argv[4])
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        become(user)
        server.bind(path)
        os.chmod(path, 0o666)
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
                client.recv(4096)
                client.sendall(b'{"ok":true,"text":"a squatter answered"}\n')
            except OSError:
                pass
            client.close()
    elif command == "hangup":
        path, seconds = sys.argv[2], float(sys.argv[3])
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(16)
        print("ready", flush=True)
        server.settimeout(0.2)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                client, _ = server.accept()
            except socket.timeout:
                continue
            client.close()
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
