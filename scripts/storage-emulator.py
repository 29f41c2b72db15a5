#!/usr/bin/env python3
"""A Supabase Storage API emulator for development and tests, on loopback only.

It follows the contract in shared/reference/supabase.md section 4: the routes under /storage/v1 (delete many,
delete one, list, upload, download, get bucket), the gateway's key mapping, one transaction per request as the
role of the caller with the settings the real server sets (so storage RLS and the delete guard behave as on the
platform), exact-name deletes, and errors as HTTP 400 with the real status in the body's statusCode string.
Objects' bytes live under --data-dir. Faults are injected through POST /__emulator/faults (tests only):
fail_next (500s), rate_limit_next with retry_after (429 + Retry-After), delay_ms (slow answers), drop_next (the
connection closed without an answer), partial_delete (a share of every delete batch left undone) or
partial_delete_next (the next n batches half done), fail_every (every n-th request a 500), and hostile answers:
retry_after takes any text ("nan", a date), hang_next (the next n requests get no answer for hang_s seconds),
huge_body_next with huge_body_bytes (a 200 whose JSON-looking body is that long; -1: endless), echo_next with
echo_status (an error whose body and X-Echo header repeat the request's headers, raw and percent-encoded, as a
careless proxy does), raw_next (a list of base64 byte strings, each written verbatim as the next answer).

    scripts/storage-emulator.py --port 54350 --database-url postgresql://supabase_storage_admin:…@127.0.0.1:54329/db \\
        --data-dir .local/storage --jwt-secret … [--hard-limits]

Differences from the real server: no S3 backend (files on disk), no image transformation, no TUS resumable uploads,
no signed URLs, no bucket creation routes, a simplified list (no search ranking), HS256 JWTs only.
"""
import argparse, base64, hashlib, hmac, json, os, random, threading, time, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, unquote, urlsplit

import psycopg

ARGS = None
LOCAL = threading.local()
FAULTS_LOCK = threading.Lock()
DEFAULT_FAULTS = {"fail_next": 0, "rate_limit_next": 0, "retry_after": 1, "delay_ms": 0, "drop_next": 0, "partial_delete": 0.0,
                  "partial_delete_next": 0, "fail_every": 0, "hang_next": 0, "hang_s": 600, "huge_body_next": 0,
                  "huge_body_bytes": -1, "echo_next": 0, "echo_status": 500, "raw_next": []}
FAULTS = json.loads(json.dumps(DEFAULT_FAULTS))
STATS = {"requests": 0, "deleted": 0, "faults": 0, "by_route": {}}


def b64url_decode(part):
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_jwt(claims, secret):
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps(claims).encode())
    sig = b64url(hmac.new(secret.encode(), f"{header}.{body}".encode(), hashlib.sha256).digest())
    return f"{header}.{body}.{sig}"


def verify_jwt(token, secret):
    try:
        header, body, sig = token.split(".")
        expected = b64url(hmac.new(secret.encode(), f"{header}.{body}".encode(), hashlib.sha256).digest())
        if not hmac.compare_digest(expected, sig):
            return None
        claims = json.loads(b64url_decode(body))
        if "exp" in claims and claims["exp"] < time.time():
            return None
        return claims
    except Exception:
        return None


class StorageError(Exception):
    def __init__(self, status_code, error, message, http=400, code=None):
        self.status_code, self.error, self.message, self.http, self.code = str(status_code), error, message, http, code or error


def connection():
    conn = getattr(LOCAL, "conn", None)
    if conn is None or conn.closed or conn.broken:
        conn = psycopg.connect(ARGS.database_url, autocommit=False)
        LOCAL.conn = conn
    return conn


def take_fault(faults, request_number):
    """The fault the next request meets, taking one from its counter (the caller holds the faults' lock): a raw
    answer, a hang, a huge body, an echo, a dropped connection, a failure, a rate limit, in that order; then every
    fail_every-th request fails. None when no fault is due. Keys a caller's faults lack count as 0."""
    if faults.get("raw_next"):
        return ("raw", base64.b64decode(faults["raw_next"].pop(0)))
    for key, action in (("hang_next", "hang"), ("huge_body_next", "huge"), ("echo_next", "echo"), ("drop_next", "drop"),
                        ("fail_next", "fail"), ("rate_limit_next", "limit")):
        if faults.get(key, 0) > 0:
            faults[key] -= 1
            return action
    if faults.get("fail_every") and request_number % faults["fail_every"] == 0:
        return "fail"
    return None


def hostile(handler, action, hang_s, huge_bytes, echo_status, retry_after):
    """The hostile answers (shared with management-emulator.py): True when `action` was one and was answered."""
    kind = action[0] if isinstance(action, tuple) else action
    if kind not in ("raw", "hang", "huge", "echo"):
        return False
    length = int(handler.headers.get("Content-Length") or 0)
    if length:
        handler.rfile.read(length)
    handler.close_connection = True
    try:
        if kind == "raw":
            handler.wfile.write(action[1])
            handler.wfile.flush()
        elif kind == "hang":
            end = time.time() + hang_s
            while time.time() < end:
                time.sleep(0.2)
        elif kind == "huge":
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Connection", "close")
            if huge_bytes >= 0:
                handler.send_header("Content-Length", str(huge_bytes))
            handler.end_headers()
            item = b'{"name":"' + b"x" * 200 + b'","bucket_id":"avatars"},'
            chunk = b"[" + item * (65536 // len(item))
            sent = 0
            while huge_bytes < 0 or sent < huge_bytes:
                part = chunk if huge_bytes < 0 else chunk[: huge_bytes - sent]
                handler.wfile.write(part)
                sent += len(part)
                chunk = item * (65536 // len(item))
        elif kind == "echo":
            lines = [f"{k}: {v}" for k, v in handler.headers.items()]
            text = "\n".join(lines)
            message = f"proxy error; your request was:\n{text}\nencoded: {quote(text, safe='')}"
            data = json.dumps({"statusCode": str(echo_status), "error": "echo " + text, "message": message}).encode()
            handler.send_response(echo_status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.send_header("Retry-After", str(retry_after))
            handler.send_header("X-Echo", quote(" ".join(lines), safe=""))
            handler.end_headers()
            handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
    return True


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        if ARGS.verbose:
            super().log_message(*args)

    # --- plumbing -------------------------------------------------------------------------------------------
    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def reply(self, status, payload, content_type="application/json", extra=None):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def error(self, e):
        self.reply(e.http, {"statusCode": e.status_code, "error": e.error, "message": e.message, "code": e.code})

    def claims(self):
        """The gateway's key mapping, then the server's JWT check: the role and subject of this request."""
        apikey = self.headers.get("apikey")
        auth = self.headers.get("Authorization", "")
        if not apikey:
            raise StorageError(403, "Unauthorized", "No API key found in request", http=401)
        if apikey.startswith("sb_secret_"):
            if apikey != ARGS.secret_key:
                raise StorageError(403, "Unauthorized", "Invalid API key", http=401)
            token = make_jwt({"role": "service_role"}, ARGS.jwt_secret) if not auth.startswith("Bearer ey") else auth[7:]
        elif apikey.startswith("sb_publishable_"):
            token = make_jwt({"role": "anon"}, ARGS.jwt_secret) if not auth.startswith("Bearer ey") else auth[7:]
        else:
            if not verify_jwt(apikey, ARGS.jwt_secret):
                raise StorageError(403, "Unauthorized", "Invalid API key", http=401)
            token = auth[7:] if auth.startswith("Bearer ") else apikey
        claims = verify_jwt(token, ARGS.jwt_secret)
        if claims is None:
            raise StorageError(403, "Unauthorized", "invalid signature")
        if claims.get("role") not in ("anon", "authenticated", "service_role"):
            raise StorageError(403, "Unauthorized", "role not allowed")
        return claims

    def transaction(self, claims, operation):
        """A transaction as the caller's role, with the settings Storage sets for RLS and the delete guard."""
        conn = connection()
        cur = conn.cursor()
        cur.execute(f"set local role {claims['role']}")
        for name, value in [("request.jwt.claim.role", claims["role"]), ("request.jwt.claim.sub", claims.get("sub", "")),
                            ("request.jwt.claims", json.dumps(claims)), ("storage.operation", operation),
                            ("storage.allow_delete_query", "true")]:
            cur.execute("select set_config(%s, %s, true)", (name, value))
        return conn, cur

    def inject(self):
        """Applies the faults the test asked for; True when the request was answered (or dropped) by a fault."""
        with FAULTS_LOCK:
            STATS["requests"] += 1
            delay = FAULTS["delay_ms"]
            action = take_fault(FAULTS, STATS["requests"])
            if action or delay:
                STATS["faults"] += 1
            retry_after = FAULTS["retry_after"]
            hang_s, huge_bytes, echo_status = FAULTS["hang_s"], FAULTS["huge_body_bytes"], FAULTS["echo_status"]
        if delay:
            time.sleep(delay / 1000)
        if action == "drop":
            self.close_connection = True
            self.connection.shutdown(2)
            return True
        if action and hostile(self, action, hang_s, huge_bytes, echo_status, retry_after):
            return True
        if action:
            # Read the request body first, as a real server does: left unread it would be taken for the next request.
            self.body()
        if action == "fail":
            self.reply(500, {"statusCode": "500", "error": "internal", "message": "injected internal error", "code": "InternalError"})
            return True
        if action == "limit":
            self.reply(429, {"statusCode": "429", "error": "too_many_requests", "message": "injected rate limit", "code": "SlowDown"},
                       extra={"Retry-After": str(retry_after)})
            return True
        return False

    def route(self, method):
        path = urlsplit(self.path).path
        if path.startswith("/__emulator/"):
            return self.control(method, path)
        if self.inject():
            return
        if not path.startswith("/storage/v1/"):
            return self.error(StorageError(404, "not_found", "Route not found", http=404))
        parts = [unquote(p) for p in path[len("/storage/v1/"):].split("/")]
        key = f"{method} /{parts[0]}"
        with FAULTS_LOCK:
            STATS["by_route"][key] = STATS["by_route"].get(key, 0) + 1
        try:
            claims = self.claims()
            if parts[0] == "bucket" and method == "GET" and len(parts) == 2:
                return self.get_bucket(claims, parts[1])
            if parts[0] == "object":
                rest = parts[1:]
                if method == "DELETE" and len(rest) == 1:
                    return self.delete_many(claims, rest[0])
                if method == "DELETE" and len(rest) >= 2:
                    return self.delete_one(claims, rest[0], "/".join(rest[1:]))
                if method == "POST" and rest[:1] == ["list"] and len(rest) == 2:
                    return self.list(claims, rest[1])
                if method == "POST" and len(rest) >= 2:
                    return self.upload(claims, rest[0], "/".join(rest[1:]))
                if method == "GET" and rest[:1] in (["authenticated"], ["public"]) and len(rest) >= 3:
                    return self.download(claims, rest[1], "/".join(rest[2:]))
                if method == "GET" and len(rest) >= 2:
                    return self.download(claims, rest[0], "/".join(rest[1:]))
            raise StorageError(404, "not_found", "Route not found", http=404)
        except StorageError as e:
            connection().rollback()
            self.error(e)
        except psycopg.Error as e:
            connection().rollback()
            if getattr(e, "sqlstate", None) == "42501":
                self.error(StorageError(403, "Unauthorized", "new row violates row-level security policy"))
            else:
                self.error(StorageError(500, "internal", f"database error: {e.sqlstate}", http=500))

    # --- routes ----------------------------------------------------------------------------------------------
    def get_bucket(self, claims, bucket):
        conn, cur = self.transaction(claims, "storage.bucket.get")
        cur.execute("select id, name, owner::text, public, created_at::text, updated_at::text, file_size_limit, allowed_mime_types "
                    "from storage.buckets where id = %s", (bucket,))
        row = cur.fetchone()
        conn.commit()
        if not row:
            raise StorageError(404, "Bucket not found", "Bucket not found", code="NoSuchBucket")
        keys = ["id", "name", "owner", "public", "created_at", "updated_at", "file_size_limit", "allowed_mime_types"]
        self.reply(200, dict(zip(keys, row)))

    def delete_many(self, claims, bucket):
        try:
            payload = json.loads(self.body() or b"{}")
        except ValueError:
            raise StorageError(400, "invalid_request", "body must be JSON", code="InvalidRequest")
        names = payload.get("prefixes")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise StorageError(400, "invalid_request", "body/prefixes must NOT have fewer than 1 items", code="InvalidRequest")
        if ARGS.hard_limits and len(names) > 1000:
            raise StorageError(400, "invalid_request", "Maximum of 1000 prefixes allowed", code="InvalidRequest")
        with FAULTS_LOCK:
            fraction = FAULTS["partial_delete"]
            if FAULTS["partial_delete_next"] > 0:
                FAULTS["partial_delete_next"] -= 1
                fraction = fraction or 0.5
            if fraction:
                STATS["faults"] += 1
        if fraction:
            names = names[: max(0, int(len(names) * (1 - fraction)))]
        deleted = []
        conn, cur = self.transaction(claims, "storage.object.delete_many")
        for start in range(0, len(names), 500):        # the server deletes at most 500 a transaction
            chunk = names[start:start + 500]
            if not chunk:
                continue
            cur.execute("delete from storage.objects where bucket_id = %s and name = any(%s) returning name, bucket_id, owner::text, "
                        "owner_id, version, id::text, updated_at::text, created_at::text, last_accessed_at::text, metadata, user_metadata",
                        (bucket, chunk))
            keys = ["name", "bucket_id", "owner", "owner_id", "version", "id", "updated_at", "created_at", "last_accessed_at",
                    "metadata", "user_metadata"]
            deleted += [dict(zip(keys, row)) for row in cur.fetchall()]
        conn.commit()
        for item in deleted:
            try:
                os.remove(self.file(bucket, item["name"]))
            except FileNotFoundError:
                pass
        with FAULTS_LOCK:
            STATS["deleted"] += len(deleted)
        self.reply(200, deleted)

    def delete_one(self, claims, bucket, name):
        conn, cur = self.transaction(claims, "storage.object.delete")
        cur.execute("delete from storage.objects where bucket_id = %s and name = %s returning name", (bucket, name))
        row = cur.fetchone()
        conn.commit()
        if not row:
            raise StorageError(404, "not_found", "Object not found", code="NoSuchKey")
        try:
            os.remove(self.file(bucket, name))
        except FileNotFoundError:
            pass
        with FAULTS_LOCK:
            STATS["deleted"] += 1
        self.reply(200, {"message": "Successfully deleted"})

    def list(self, claims, bucket):
        payload = json.loads(self.body() or b"{}")
        if "prefix" not in payload:
            raise StorageError(400, "invalid_request", "body must have required property 'prefix'", code="InvalidRequest")
        prefix = payload["prefix"].strip("/")
        limit = min(int(payload.get("limit", 100)), 1500)
        offset = int(payload.get("offset", 0))
        conn, cur = self.transaction(claims, "storage.object.list")
        pattern = (prefix + "/" if prefix else "")
        cur.execute("""
            select case when position('/' in substr(name, length(%s) + 1)) > 0
                        then split_part(substr(name, length(%s) + 1), '/', 1) else substr(name, length(%s) + 1) end as item,
                   bool_or(position('/' in substr(name, length(%s) + 1)) > 0) as folder,
                   min(id::text), min(updated_at)::text, min(created_at)::text, min(last_accessed_at)::text, (array_agg(metadata))[1]
            from storage.objects where bucket_id = %s and name like %s
            group by 1 order by 1 limit %s offset %s""",
                    (pattern, pattern, pattern, pattern, bucket, pattern.replace("%", "\\%") + "%", limit, offset))
        rows = cur.fetchall()
        conn.commit()
        out = []
        for item, folder, oid, upd, cre, acc, meta in rows:
            if folder:
                out.append({"name": item, "id": None, "updated_at": None, "created_at": None, "last_accessed_at": None, "metadata": None})
            else:
                out.append({"name": item, "id": oid, "updated_at": upd, "created_at": cre, "last_accessed_at": acc, "metadata": meta})
        self.reply(200, out)

    def upload(self, claims, bucket, name):
        data = self.body()
        upsert = self.headers.get("x-upsert", "false") == "true"
        mime = self.headers.get("Content-Type", "application/octet-stream")
        sub = claims.get("sub") or None
        conn, cur = self.transaction(claims, "storage.object.upload")
        cur.execute("select 1 from storage.buckets where id = %s", (bucket,))
        if not cur.fetchone():
            # As the server does: the caller's role may not see the bucket row; check it as the storage admin.
            conn.rollback()
            conn2 = connection()
            cur2 = conn2.cursor()
            cur2.execute("select 1 from storage.buckets where id = %s", (bucket,))
            exists = cur2.fetchone()
            conn2.commit()
            if not exists:
                raise StorageError(404, "Bucket not found", "Bucket not found", code="NoSuchBucket")
            conn, cur = self.transaction(claims, "storage.object.upload")
        meta = json.dumps({"size": len(data), "mimetype": mime, "eTag": '"' + hashlib.md5(data).hexdigest() + '"',
                           "cacheControl": "max-age=" + self.headers.get("cache-control", "3600"),
                           "lastModified": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()), "contentLength": len(data)})
        version = str(uuid.uuid4())
        try:
            if upsert:
                cur.execute("insert into storage.objects (bucket_id, name, owner, owner_id, metadata, version) values (%s, %s, %s, %s, %s, %s) "
                            "on conflict (bucket_id, name) do update set metadata = excluded.metadata, version = excluded.version, "
                            "owner = excluded.owner, owner_id = excluded.owner_id returning id::text",
                            (bucket, name, sub, sub, meta, version))
            else:
                cur.execute("insert into storage.objects (bucket_id, name, owner, owner_id, metadata, version) values (%s, %s, %s, %s, %s, %s) "
                            "returning id::text", (bucket, name, sub, sub, meta, version))
        except psycopg.errors.UniqueViolation:
            conn.rollback()
            raise StorageError(409, "Duplicate", "The resource already exists", code="KeyAlreadyExists")
        oid = cur.fetchone()[0]
        path = self.file(bucket, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        conn.commit()
        self.reply(200, {"Id": oid, "Key": f"{bucket}/{name}"})

    def download(self, claims, bucket, name):
        conn, cur = self.transaction(claims, "storage.object.get_authenticated")
        cur.execute("select metadata->>'mimetype' from storage.objects where bucket_id = %s and name = %s", (bucket, name))
        row = cur.fetchone()
        conn.commit()
        if not row:
            raise StorageError(404, "not_found", "Object not found", code="NoSuchKey")
        try:
            with open(self.file(bucket, name), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            data = b""
        self.reply(200, data, content_type=row[0] or "application/octet-stream")

    def file(self, bucket, name):
        safe = hashlib.sha256(f"{bucket}/{name}".encode()).hexdigest()
        return os.path.join(ARGS.data_dir, bucket, safe[:2], safe)

    # --- test control ----------------------------------------------------------------------------------------
    def control(self, method, path):
        if path == "/__emulator/faults" and method == "POST":
            payload = json.loads(self.body() or b"{}")
            with FAULTS_LOCK:
                for k, v in payload.items():
                    if k in FAULTS:
                        FAULTS[k] = v
            return self.reply(200, FAULTS)
        if path == "/__emulator/stats" and method == "GET":
            with FAULTS_LOCK:
                return self.reply(200, STATS)
        if path == "/__emulator/reset" and method == "POST":
            with FAULTS_LOCK:
                FAULTS.update(json.loads(json.dumps(DEFAULT_FAULTS)))
                STATS.update({"requests": 0, "deleted": 0, "faults": 0, "by_route": {}})
            return self.reply(200, {"ok": True})
        if path == "/__emulator/health":
            return self.reply(200, {"ok": True})
        self.reply(404, {"error": "unknown control route"})

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_DELETE(self):
        self.route("DELETE")


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=54350, help="0: any free port (see --port-file)")
    parser.add_argument("--port-file", default=None, help="write the port actually bound here, once serving")
    parser.add_argument("--database-url", default=None, help="as supabase_storage_admin")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--jwt-secret", required=True)
    parser.add_argument("--secret-key", default=None, help="the sb_secret_… key the gateway maps to service_role")
    parser.add_argument("--hard-limits", action="store_true", help="enforce the 1000-names-a-request limit")
    parser.add_argument("--print-keys", action="store_true", help="print the anon and service_role JWTs for this secret and exit")
    parser.add_argument("--sub", default=None, help="with --print-keys: also a signed-in user's JWT for this user id")
    parser.add_argument("--verbose", action="store_true")
    ARGS = parser.parse_args()
    if ARGS.print_keys:
        keys = {"anon": make_jwt({"role": "anon", "iss": "supabase"}, ARGS.jwt_secret),
                "service_role": make_jwt({"role": "service_role", "iss": "supabase"}, ARGS.jwt_secret)}
        if ARGS.sub:
            keys["user"] = make_jwt({"role": "authenticated", "sub": ARGS.sub, "iss": "supabase"}, ARGS.jwt_secret)
        print(json.dumps(keys))
        return
    if not ARGS.database_url or not ARGS.data_dir:
        parser.error("--database-url and --data-dir are required to serve")
    os.makedirs(ARGS.data_dir, exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    if ARGS.port_file:
        with open(ARGS.port_file + ".tmp", "w") as f:
            f.write(str(port))
        os.replace(ARGS.port_file + ".tmp", ARGS.port_file)
    print(f"storage emulator on http://127.0.0.1:{port}/storage/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
