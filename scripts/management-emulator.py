#!/usr/bin/env python3
"""An emulator of the Supabase Management API's auth config (the Apple fields), for tests and the demo, on loopback.

    GET   /v1/projects/{ref}/config/auth   the Apple fields; external_apple_secret is hex(HMAC-SHA256(ref, secret))
    PATCH /v1/projects/{ref}/config/auth   sets any of the Apple fields
Requires Authorization: Bearer <the --token given> (an sbp_ token). POST /__emulator/faults {"rate_limit_next": n}
makes the next n requests answer 429 with Retry-After retry_after (any text), and the hostile answers of
storage-emulator.py apply here too (hang_next, huge_body_next, echo_next, raw_next). POST /hook/… is a
Slack-style webhook receiver (200, counted in stats), under the same faults. Differences from the real API: only the Apple fields, one project, no
other routes, state in memory.
"""
import argparse, hashlib, hmac, importlib.util, json, os, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_spec = importlib.util.spec_from_file_location("storage_emulator", os.path.join(os.path.dirname(os.path.abspath(__file__)), "storage-emulator.py"))
_storage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_storage)
hostile = _storage.hostile
take_fault = _storage.take_fault

ARGS = None
LOCK = threading.Lock()
STATE = {"external_apple_enabled": True, "external_apple_client_id": "", "external_apple_additional_client_ids": "",
         "external_apple_secret": "", "external_apple_email_optional": False}
FAULTS = {"rate_limit_next": 0, "retry_after": "1", "hang_next": 0, "hang_s": 600, "huge_body_next": 0, "huge_body_bytes": -1,
          "echo_next": 0, "echo_status": 500, "raw_next": []}
STATS = {"requests": 0, "patches": 0, "hooks": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, payload, extra=None):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n) or b"{}") if n else {}

    def handle_any(self, method):
        if self.path == "/__emulator/faults" and method == "POST":
            with LOCK:
                FAULTS.update(self.body())
            return self.reply(200, FAULTS)
        if self.path == "/__emulator/stats":
            with LOCK:
                return self.reply(200, STATS)
        with LOCK:
            STATS["requests"] += 1
            action = take_fault(FAULTS, STATS["requests"])
            settings = (FAULTS["hang_s"], FAULTS["huge_body_bytes"], FAULTS["echo_status"], FAULTS["retry_after"])
        if action == "limit":
            self.body()
            return self.reply(429, {"message": "Too many requests"}, {"Retry-After": str(settings[3])})
        if action and hostile(self, action, *settings):
            return
        if self.path.startswith("/hook/") and method == "POST":
            self.body()
            with LOCK:
                STATS["hooks"] += 1
            return self.reply(200, {"ok": True})
        if self.path != f"/v1/projects/{ARGS.ref}/config/auth":
            return self.reply(404, {"message": "Not found"})
        if self.headers.get("Authorization") != f"Bearer {ARGS.token}":
            return self.reply(401, {"message": "Unauthorized"})
        if method == "GET":
            with LOCK:
                return self.reply(200, dict(STATE))
        if method == "PATCH":
            payload = self.body()
            with LOCK:
                for key, value in payload.items():
                    if key == "external_apple_secret":
                        value = hmac.new(ARGS.ref.encode(), value.encode(), hashlib.sha256).hexdigest() if value else ""
                    if key in STATE:
                        STATE[key] = value
                STATS["patches"] += 1
                return self.reply(200, dict(STATE))
        self.reply(405, {"message": "Method not allowed"})

    def do_GET(self):
        self.handle_any("GET")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_POST(self):
        self.handle_any("POST")


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=54360, help="0: any free port (see --port-file)")
    parser.add_argument("--port-file", default=None, help="write the port actually bound here, once serving")
    parser.add_argument("--ref", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--client-id", default="com.example.app.web")
    parser.add_argument("--secret-hash", default="", help="start with this hash set (a secret changed by hand)")
    ARGS = parser.parse_args()
    STATE["external_apple_client_id"] = ARGS.client_id
    STATE["external_apple_secret"] = ARGS.secret_hash
    server = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    if ARGS.port_file:
        with open(ARGS.port_file + ".tmp", "w") as f:
            f.write(str(server.server_address[1]))
        os.replace(ARGS.port_file + ".tmp", ARGS.port_file)
    server.daemon_threads = True
    print(f"management emulator on http://127.0.0.1:{ARGS.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
