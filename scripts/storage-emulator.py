#!/usr/bin/env python3
"""A Supabase Storage API emulator for development and tests, on loopback only.

It follows the contract in shared/reference/supabase.md section 4 as Supabase's own clients (storage3,
supabase-swift) use it: the routes under /storage/v1 (delete many, delete one, list, upload and update, raw or
multipart, download, public download, get bucket), the gateway's key mapping, one transaction per request as the
role of the caller with the settings the real server sets (so storage RLS and the delete guard behave as on the
platform), exact-name deletes, and errors as HTTP 400 with the real status in the body's statusCode string.
Where the server's behaviour is taken from its sources (supabase/storage), the path is named at the place.
Objects' bytes live under --data-dir. Faults are injected through POST /__emulator/faults (tests only):
fail_next (500s), rate_limit_next with retry_after (429 + Retry-After), delay_ms (slow answers), drop_next (the
connection closed without an answer), partial_delete (a share of every delete batch left undone) or
partial_delete_next (the next n batches half done), fail_every (every n-th request a 500), and hostile answers:
retry_after takes any text ("nan", a date), hang_next (the next n requests get no answer for hang_s seconds),
huge_body_next with huge_body_bytes (a 200 whose JSON-looking body is that long; -1: endless), echo_next with
echo_status (an error whose body and X-Echo header repeat the request's headers, raw and percent-encoded, as a
careless proxy does), raw_next (a list of base64 byte strings, each written verbatim as the next answer), and
answer_next: a list of error answers, each {"http": 400, "statusCode": "503", "code": …, "error": …, "message": …},
given to the next requests one each (the real server's transient answers: HTTP 400 with statusCode "503" or "423",
HTTP 429, HTTP 5xx; or any plain 4xx), and guard_next (the next n deletes run without storage.allow_delete_query, so
the delete guard refuses them with its own message, as it refuses a direct delete), and gateway_next: the next n
requests are answered at once by "the gateway" with gateway_status (502) and a body that is not Storage's, then
carried out gateway_late_ms later (-1: never) with their answer thrown away, as when a proxy gives up on an upstream
that goes on working.

Requests for Steward's own objects (names under ".steward/" in the URL: its Storage proof's canaries) are counted apart,
in the stats' "canary_requests" and "canary_deleted", and faults pass them by unless canary_faults is true: a test
aims its faults at the job's deletes, and the proof every run starts with would otherwise take them first.

    scripts/storage-emulator.py --port 54350 --database-url postgresql://supabase_storage_admin:…@127.0.0.1:54329/db \\
        --data-dir .local/storage --jwt-secret … [--hard-limits]

Differences from the real server: no S3 backend (files on disk), no image transformation, no TUS resumable uploads,
no signed URLs, no move/copy/info routes and no bucket creation routes (they answer "route not found"), HS256 JWTs only.
"""
import argparse, base64, hashlib, hmac, io, json, os, random, re, threading, time, unicodedata, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, unquote, urlsplit

import psycopg

ARGS = None
LOCAL = threading.local()
FAULTS_LOCK = threading.Lock()
DEFAULT_FAULTS = {"fail_next": 0, "rate_limit_next": 0, "retry_after": 1, "delay_ms": 0, "drop_next": 0, "partial_delete": 0.0,
                  "partial_delete_next": 0, "fail_every": 0, "hang_next": 0, "hang_s": 600, "huge_body_next": 0,
                  "huge_body_bytes": -1, "echo_next": 0, "echo_status": 500, "raw_next": [], "answer_next": [],
                  "guard_next": 0, "gateway_next": 0, "gateway_status": 502, "gateway_late_ms": 1000, "canary_faults": False}
FAULTS = json.loads(json.dumps(DEFAULT_FAULTS))
STATS = {"requests": 0, "deleted": 0, "faults": 0, "by_route": {}, "canary_requests": 0, "canary_deleted": 0}


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
    answer, a hang, a huge body, an echo, a dropped connection, a gateway's answer, a failure, a rate limit, in that order; then every
    fail_every-th request fails. None when no fault is due. Keys a caller's faults lack count as 0."""
    if faults.get("raw_next"):
        return ("raw", base64.b64decode(faults["raw_next"].pop(0)))
    for key, action in (("hang_next", "hang"), ("huge_body_next", "huge"), ("echo_next", "echo"), ("drop_next", "drop"),
                        ("gateway_next", "gateway"), ("fail_next", "fail"), ("rate_limit_next", "limit")):
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


# The largest request body read; a longer one is refused and its connection closed (never left half read).
MAX_BODY_BYTES = 64 << 20

# Object keys the server accepts (supabase/storage src/storage/limits.ts, isValidKey): S3-safe ASCII characters and
# the few that need special handling, plus letters, marks and digits of any script.
KEY_SPECIALS = set("/!-_.*'() &$@=;:+,?")

# First path segments under /object that name routes of the server this emulator does not serve (sign, move, copy,
# info, upload/sign, list-v2: supabase/storage src/http/routes/object/index.ts): they answer "route not found", never
# an upload into a bucket of that name.
RESERVED_OBJECT_ROUTES = {"list", "list-v2", "sign", "move", "copy", "info", "upload", "public", "authenticated"}

# A version-independent UUID as the server checks it (src/storage/limits.ts, isUuid): only such a JWT `sub` also goes
# to the deprecated uuid column `owner`; any other (third-party auth) goes to `owner_id` only.
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-5][0-9a-f]{3}-[089ab][0-9a-f]{3}-[0-9a-f]{12}$", re.I)

# Timestamps as the server's JSON has them (node-postgres Dates serialised): ISO-8601 in UTC with milliseconds and Z.
def iso(column):
    return f"""to_char({column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"""


def valid_key(key):
    if not key:
        return False
    for ch in key:
        if ch.isascii():
            if not (ch.isalnum() or ch in KEY_SPECIALS):
                return False
        elif unicodedata.category(ch)[0] not in "LMN":
            return False
    return True


def header_param(value, name):
    """A parameter (`boundary`, `name`, `filename`) of a header value, quoted or not; None when absent."""
    m = re.search(r'(?:^|;)\s*' + name + r'\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))', value, re.I)
    if not m:
        return None
    return m.group(1).replace('\\"', '"') if m.group(1) is not None else m.group(2)


def parse_multipart(body, content_type):
    """A multipart/form-data body as the server's parser reads it (@fastify/multipart, in
    src/http/routes/object/createObject.ts): the first part with a filename is the file (its bytes and its own
    Content-Type), parts without one are fields. Raises StorageError on a body that is not multipart."""
    boundary = header_param(content_type, "boundary")
    if not boundary:
        raise StorageError(400, "InvalidRequest", "multipart/form-data without a boundary", code="InvalidRequest")
    delimiter = b"\r\n--" + boundary.encode("latin-1")
    pieces = (b"\r\n" + body).split(delimiter)
    if len(pieces) < 3:
        raise StorageError(400, "InvalidRequest", "Multipart: Boundary not found", code="InvalidRequest")
    fields, file = {}, None
    for piece in pieces[1:]:
        if piece.startswith(b"--"):
            break
        head, sep, content = piece.partition(b"\r\n\r\n")
        if not sep:
            raise StorageError(400, "InvalidRequest", "Multipart: malformed part", code="InvalidRequest")
        headers = {}
        for line in head.decode("utf-8", "replace").split("\r\n"):
            if ":" in line:
                key, value = line.split(":", 1)
                headers[key.strip().lower()] = value.strip()
        disposition = headers.get("content-disposition", "")
        filename = header_param(disposition, "filename")
        if filename is not None:
            if file is None:
                file = (content, headers.get("content-type") or "application/octet-stream")
        else:
            fields[header_param(disposition, "name") or ""] = content.decode("utf-8", "replace")
    return fields, file


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        if ARGS.verbose:
            super().log_message(*args)

    # --- plumbing -------------------------------------------------------------------------------------------
    def body(self):
        """The request's body, read once (Content-Length or chunked). Every request has its body read before it is
        answered, so a kept-alive connection never takes the rest of a body for the next request; a body that cannot
        be read whole (too long, a bad length) is refused and the connection closed."""
        if getattr(self, "_body", None) is not None:
            return self._body
        self._body = b""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            data = bytearray()
            while True:
                line = self.rfile.readline(1024)
                try:
                    size = int(line.split(b";")[0].strip(), 16)
                except ValueError:
                    self.close_connection = True
                    raise StorageError(400, "InvalidRequest", "malformed chunked body", code="InvalidRequest")
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                if len(data) + size > MAX_BODY_BYTES:
                    self.close_connection = True
                    raise StorageError(413, "Payload too large", "The object exceeded the maximum allowed size", code="EntityTooLarge")
                data += self.rfile.read(size)
                self.rfile.readline(1024)
            self._body = bytes(data)
            return self._body
        text = (self.headers.get("Content-Length") or "0").strip()
        if not text.isdigit():
            self.close_connection = True
            raise StorageError(400, "InvalidRequest", "invalid Content-Length", code="InvalidRequest")
        length = int(text)
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            raise StorageError(413, "Payload too large", "The object exceeded the maximum allowed size", code="EntityTooLarge")
        self._body = self.rfile.read(length) if length else b""
        return self._body

    def json_body(self):
        """The body of a JSON route. As the server (fastify's body parser, then the route's schema): without
        `Content-Type: application/json` the body is not parsed, and the schema refuses the missing object."""
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        raw = self.body()
        if content_type != "application/json":
            raise StorageError(400, "Bad Request", "body must be object", code="InvalidRequest")
        try:
            payload = json.loads(raw)
        except ValueError:
            raise StorageError(400, "Bad Request", "Body is not valid JSON but content-type is set to 'application/json'", code="InvalidRequest")
        if not isinstance(payload, dict):
            raise StorageError(400, "Bad Request", "body must be object", code="InvalidRequest")
        return payload

    def reply(self, status, payload, content_type="application/json", extra=None):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def error(self, e):
        self.reply(e.http, {"statusCode": e.status_code, "error": e.error, "message": e.message, "code": e.code})

    def claims(self):
        """The gateway's key mapping, then the server's JWT check (src/http/plugins/jwt.ts: a JWT that does not verify
        is AccessDenied with the verifier's message): the role and subject of this request."""
        apikey = self.headers.get("apikey")
        auth = self.headers.get("Authorization", "")
        if not apikey:
            raise StorageError(403, "Unauthorized", "No API key found in request", http=401, code="AccessDenied")
        if apikey.startswith("sb_secret_"):
            if apikey != ARGS.secret_key:
                raise StorageError(403, "Unauthorized", "Invalid API key", http=401, code="AccessDenied")
            token = make_jwt({"role": "service_role"}, ARGS.jwt_secret) if not auth.startswith("Bearer ey") else auth[7:]
        elif apikey.startswith("sb_publishable_"):
            token = make_jwt({"role": "anon"}, ARGS.jwt_secret) if not auth.startswith("Bearer ey") else auth[7:]
        else:
            if not verify_jwt(apikey, ARGS.jwt_secret):
                raise StorageError(403, "Unauthorized", "Invalid API key", http=401, code="AccessDenied")
            token = auth[7:] if auth.startswith("Bearer ") else apikey
        claims = verify_jwt(token, ARGS.jwt_secret)
        if claims is None:
            raise StorageError(403, "Unauthorized", "invalid signature", code="AccessDenied")
        if claims.get("role") not in ("anon", "authenticated", "service_role"):
            raise StorageError(403, "Unauthorized", "role not allowed", code="AccessDenied")
        return claims

    def transaction(self, claims, operation):
        """A transaction as the caller's role, with the settings Storage sets for RLS and the delete guard."""
        allow_delete = "true"
        if operation.startswith("storage.object.delete"):
            with FAULTS_LOCK:
                if FAULTS.get("guard_next", 0) > 0:
                    FAULTS["guard_next"] -= 1
                    STATS["faults"] += 1
                    allow_delete = "false"
        conn = connection()
        cur = conn.cursor()
        cur.execute(f"set local role {claims['role']}")
        for name, value in [("request.jwt.claim.role", claims["role"]), ("request.jwt.claim.sub", str(claims.get("sub", ""))),
                            ("request.jwt.claims", json.dumps(claims)), ("storage.operation", operation),
                            ("storage.allow_delete_query", allow_delete)]:
            cur.execute("select set_config(%s, %s, true)", (name, value))
        return conn, cur

    def inject(self):
        """Applies the faults the test asked for; True when the request was answered (or dropped) by a fault."""
        with FAULTS_LOCK:
            STATS["requests"] += 1
            delay = FAULTS["delay_ms"]
            answer = FAULTS["answer_next"].pop(0) if FAULTS.get("answer_next") else None
            action = None if answer else take_fault(FAULTS, STATS["requests"])
            if action or delay or answer:
                STATS["faults"] += 1
            retry_after = FAULTS["retry_after"]
            hang_s, huge_bytes, echo_status = FAULTS["hang_s"], FAULTS["huge_body_bytes"], FAULTS["echo_status"]
            gateway_status, gateway_late_ms = FAULTS["gateway_status"], FAULTS["gateway_late_ms"]
        if delay:
            time.sleep(delay / 1000)
        if action == "drop":
            self.close_connection = True
            self.connection.shutdown(2)
            return True
        if action and hostile(self, action, hang_s, huge_bytes, echo_status, retry_after):
            return True
        if action == "gateway":
            # The proxy in front answers at once, with its own body (no statusCode: not Storage's), and closes; the
            # request still reaches Storage later, and what Storage answers then goes nowhere.
            self.body()
            self.close_connection = True
            self.reply(int(gateway_status), {"message": "An invalid response was received from the upstream server"})
            self.wfile.flush()
            if gateway_late_ms < 0:
                return True
            time.sleep(gateway_late_ms / 1000)
            self.wfile = io.BytesIO()
            return False
        if action or answer:
            # Read the request body first, as a real server does: left unread it would be taken for the next request.
            self.body()
        if answer:
            status = int(answer.get("http", 400))
            self.reply(status, {"statusCode": str(answer.get("statusCode", status)), "error": answer.get("error", "injected"),
                                "message": answer.get("message", "injected answer"), "code": answer.get("code", "InjectedError")},
                       extra={"Retry-After": str(answer["retry_after"])} if "retry_after" in answer else None)
            return True
        if action == "fail":
            self.reply(500, {"statusCode": "500", "error": "internal", "message": "injected internal error", "code": "InternalError"})
            return True
        if action == "limit":
            self.reply(429, {"statusCode": "429", "error": "too_many_requests", "message": "injected rate limit", "code": "SlowDown"},
                       extra={"Retry-After": str(retry_after)})
            return True
        return False

    def not_found(self, method, path):
        # The server's answer for a route it does not have (fastify's not-found handler).
        return StorageError(404, "Not Found", f"Route {method}:{path} not found", http=404, code="NotFound")

    @staticmethod
    def is_canary(path):
        """Whether the request names one of Steward's own objects (/object/{bucket}/.steward/…)."""
        if not path.startswith("/storage/v1/object/"):
            return False
        parts = [unquote(p) for p in path[len("/storage/v1/object/"):].split("/")]
        return len(parts) >= 2 and parts[1] == ".steward"

    def route(self, method):
        self._body = None
        path = urlsplit(self.path).path
        canary = self.is_canary(path)
        try:
            if path.startswith("/__emulator/"):
                return self.control(method, path)
            with FAULTS_LOCK:
                spared = canary and not FAULTS["canary_faults"]
                if spared:
                    STATS["canary_requests"] += 1
            if not spared and self.inject():
                return
            # Every body is read before the answer, whatever the route: nothing is left on a kept-alive connection.
            self.body()
        except StorageError as e:
            return self.error(e)
        if not path.startswith("/storage/v1/"):
            return self.error(self.not_found(method, path))
        parts = [unquote(p) for p in path[len("/storage/v1/"):].split("/")]
        key = f"{method} /{parts[0]}"
        with FAULTS_LOCK:
            if not canary:
                STATS["by_route"][key] = STATS["by_route"].get(key, 0) + 1
        try:
            if parts[:2] == ["object", "public"] and method == "GET" and len(parts) >= 4:
                # Public objects need no JWT (src/http/routes/object/getPublicObject.ts); only public buckets serve them.
                return self.download_public(parts[2], "/".join(parts[3:]))
            claims = self.claims()
            if parts[0] == "bucket" and method == "GET" and len(parts) == 2:
                return self.get_bucket(claims, parts[1])
            if parts[0] == "object":
                rest = parts[1:]
                if method == "POST" and rest[:1] == ["list"] and len(rest) == 2:
                    return self.list(claims, rest[1])
                if rest[:1] == ["authenticated"] and method == "GET" and len(rest) >= 3:
                    return self.download(claims, rest[1], "/".join(rest[2:]))
                if rest and rest[0] not in RESERVED_OBJECT_ROUTES:
                    if method == "DELETE" and len(rest) == 1:
                        return self.delete_many(claims, rest[0])
                    if method == "DELETE" and len(rest) >= 2:
                        return self.delete_one(claims, rest[0], "/".join(rest[1:]))
                    if method in ("POST", "PUT") and len(rest) >= 2:
                        return self.upload(claims, rest[0], "/".join(rest[1:]), update=method == "PUT")
                    if method == "GET" and len(rest) >= 2:
                        return self.download(claims, rest[0], "/".join(rest[1:]))
            raise self.not_found(method, path)
        except StorageError as e:
            connection().rollback()
            self.error(e)
        except psycopg.Error as e:
            connection().rollback()
            self.error(self.database_error(e))

    @staticmethod
    def database_error(e):
        """A database error as the server renders it (src/storage/database/errors.ts, DBError.fromDBError): 42501 is
        AccessDenied with RLS's message or the database's own (the delete guard's), 55P03 ResourceLocked (423),
        57014 DatabaseTimeout, 25006 read-only (503), the rest DatabaseError (500)."""
        state = getattr(e, "sqlstate", None)
        message = (e.diag.message_primary if getattr(e, "diag", None) and e.diag.message_primary else str(e)).strip()
        if state == "42501":
            text = "new row violates row-level security policy" if "row-level security" in message else message
            return StorageError(403, "Unauthorized", text, code="AccessDenied")
        if state == "23505":
            return StorageError(409, "Duplicate", "The resource already exists", code="ResourceAlreadyExists")
        if state == "55P03":
            return StorageError(423, "ResourceLocked", "The resource is locked", code="ResourceLocked")
        if state == "57014":
            return StorageError(544, "DatabaseTimeout", "The connection to the database timed out", http=544, code="DatabaseTimeout")
        if state == "25006":
            return StorageError(503, "DatabaseReadOnly", "The database is in read-only mode", code="DatabaseReadOnly")
        return StorageError(500, "DatabaseError", f"database error, code: {state}", http=500, code="DatabaseError")

    # --- routes ----------------------------------------------------------------------------------------------
    def get_bucket(self, claims, bucket):
        conn, cur = self.transaction(claims, "storage.bucket.get")
        # The response schema (src/storage/schemas/bucket.ts) types owner as a string: a null owner is "".
        cur.execute(f"select id, name, coalesce(owner::text, ''), public, {iso('created_at')}, {iso('updated_at')}, file_size_limit, "
                    "allowed_mime_types from storage.buckets where id = %s", (bucket,))
        row = cur.fetchone()
        conn.commit()
        if not row:
            raise StorageError(404, "Bucket not found", "Bucket not found", code="NoSuchBucket")
        keys = ["id", "name", "owner", "public", "created_at", "updated_at", "file_size_limit", "allowed_mime_types"]
        self.reply(200, dict(zip(keys, row)))

    # The object columns of an answer (src/storage/schemas/object.ts): owner, owner_id and version are strings ("" for
    # null), timestamps ISO-8601 with Z.
    OBJECT_COLUMNS = ("name, bucket_id, coalesce(owner::text, ''), coalesce(owner_id, ''), coalesce(version, ''), id::text, "
                      f"{iso('updated_at')}, {iso('created_at')}, {iso('last_accessed_at')}, metadata, user_metadata")
    OBJECT_KEYS = ["name", "bucket_id", "owner", "owner_id", "version", "id", "updated_at", "created_at", "last_accessed_at",
                   "metadata", "user_metadata"]

    def delete_many(self, claims, bucket):
        payload = self.json_body()
        names = payload.get("prefixes")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise StorageError(400, "Bad Request", "body/prefixes must NOT have fewer than 1 items", code="InvalidRequest")
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
            cur.execute(f"delete from storage.objects where bucket_id = %s and name = any(%s) returning {self.OBJECT_COLUMNS}",
                        (bucket, chunk))
            deleted += [dict(zip(self.OBJECT_KEYS, row)) for row in cur.fetchall()]
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
            STATS["canary_deleted" if self.is_canary(urlsplit(self.path).path) else "deleted"] += 1
        self.reply(200, {"message": "Successfully deleted"})

    @staticmethod
    def integer(payload, key, minimum, default):
        """A body integer as the route's schema checks it (ajv with type coercion: "10" is 10; 1.5, true are not)."""
        value = payload.get(key, default)
        if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
            value = int(value)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise StorageError(400, "Bad Request", f"body/{key} must be integer", code="InvalidRequest")
        if value < minimum:
            raise StorageError(400, "Bad Request", f"body/{key} must be >= {minimum}", code="InvalidRequest")
        return value

    def list(self, claims, bucket):
        """POST /object/list/{bucket} (src/http/routes/object/listObjects.ts and the tenant migrations' storage.search):
        the names one level under `prefix`; a folder is a row with null id and timestamps, and a file and a folder of
        the same name are both listed. `search` keeps the names that start with it (case-insensitively; `_` and `%`
        are plain characters); rows are ordered by the sortBy column, then by lower(name) collate "C"."""
        payload = self.json_body()
        if "prefix" not in payload:
            raise StorageError(400, "Bad Request", "body must have required property 'prefix'", code="InvalidRequest")
        if not isinstance(payload["prefix"], str):
            raise StorageError(400, "Bad Request", "body/prefix must be string", code="InvalidRequest")
        limit = min(self.integer(payload, "limit", 1, 100), 1500)
        offset = self.integer(payload, "offset", 0, 0)
        search = payload.get("search", "")
        if not isinstance(search, str):
            raise StorageError(400, "Bad Request", "body/search must be string", code="InvalidRequest")
        sort = payload.get("sortBy", {"column": "name", "order": "asc"})
        if not isinstance(sort, dict) or "column" not in sort:
            raise StorageError(400, "Bad Request", "body/sortBy must have required property 'column'", code="InvalidRequest")
        column, order = sort.get("column"), sort.get("order", "asc")
        if column not in ("name", "updated_at", "created_at", "last_accessed_at"):
            raise StorageError(400, "Bad Request", "body/sortBy/column must be equal to one of the allowed values", code="InvalidRequest")
        if order not in ("asc", "desc"):
            raise StorageError(400, "Bad Request", "body/sortBy/order must be equal to one of the allowed values", code="InvalidRequest")
        prefix = payload["prefix"].strip("/")
        prefix = prefix + "/" if prefix else ""
        by_name = f'lower(name) collate "C" {order}, name collate "C" {order}'
        order_by = by_name if column == "name" else f"{column} {order}, {by_name}"
        conn, cur = self.transaction(claims, "storage.object.list")
        cur.execute(f"""
            with o as (select substr(name, char_length(%(p)s) + 1) as rel, id, updated_at, created_at, last_accessed_at, metadata
                       from storage.objects where bucket_id = %(b)s and left(name, char_length(%(p)s)) = %(p)s),
                 items as (select rel as name, false as folder, id, updated_at, created_at, last_accessed_at, metadata
                           from o where position('/' in rel) = 0 and rel <> ''
                           union all
                           select split_part(rel, '/', 1), true, null, null, null, null, null
                           from o where position('/' in rel) > 0 group by 1)
            select name, folder, id::text, {iso('updated_at')}, {iso('created_at')}, {iso('last_accessed_at')}, metadata from items
            where lower(left(name, char_length(%(s)s))) = lower(%(s)s)
            order by {order_by}, folder desc limit %(l)s offset %(o)s""",
                    {"p": prefix, "b": bucket, "s": search, "l": limit, "o": offset})
        rows = cur.fetchall()
        conn.commit()
        keys = ["name", "id", "updated_at", "created_at", "last_accessed_at", "metadata"]
        self.reply(200, [dict(zip(keys, (name, oid, upd, cre, acc, meta))) for name, _folder, oid, upd, cre, acc, meta in rows])

    def upload(self, claims, bucket, name, update=False):
        """POST (create, `x-upsert: true` to overwrite) or PUT (update) /object/{bucket}/{path}: a raw body keeps its
        Content-Type and cache-control headers as sent; a multipart/form-data body (storage3, supabase-swift) stores its
        file part only, with that part's Content-Type, the `cacheControl` field as max-age and `metadata` as
        user_metadata (src/storage/uploader.ts)."""
        if not valid_key(name):
            raise StorageError(400, "InvalidKey", f"Invalid key: {name}", code="InvalidKey")
        data = self.body()
        content_type = self.headers.get("Content-Type") or ""
        user_metadata = None
        if content_type.split(";")[0].strip().lower() == "multipart/form-data":
            fields, file = parse_multipart(data, content_type)
            if file is None:
                raise StorageError(400, "InvalidRequest", "No content provided", code="InvalidRequest")
            data, mime = file
            cache = fields.get("cacheControl")
            cache_control = ("max-age=" + cache) if cache and cache.isdigit() else (cache or "no-cache")
            if fields.get("metadata"):
                try:
                    user_metadata = json.loads(fields["metadata"])
                except ValueError:
                    raise StorageError(400, "InvalidRequest", "Invalid metadata", code="InvalidRequest")
        else:
            mime = content_type or "application/octet-stream"
            cache_control = self.headers.get("cache-control") or "no-cache"
        upsert = update or self.headers.get("x-upsert", "false") == "true"
        sub = claims.get("sub")
        sub = str(sub) if sub not in (None, "") else None
        owner = sub if sub and UUID_RE.match(sub) else None
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
                           "cacheControl": cache_control,
                           "lastModified": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()), "contentLength": len(data),
                           "httpStatusCode": 200})
        version = str(uuid.uuid4())
        user_meta = json.dumps(user_metadata) if user_metadata is not None else None
        try:
            if update:
                cur.execute("update storage.objects set metadata = %s, version = %s, owner = %s, owner_id = %s, user_metadata = %s "
                            "where bucket_id = %s and name = %s returning id::text", (meta, version, owner, sub, user_meta, bucket, name))
            elif upsert:
                cur.execute("insert into storage.objects (bucket_id, name, owner, owner_id, metadata, version, user_metadata) "
                            "values (%s, %s, %s, %s, %s, %s, %s) on conflict (bucket_id, name) do update set metadata = excluded.metadata, "
                            "version = excluded.version, owner = excluded.owner, owner_id = excluded.owner_id, "
                            "user_metadata = excluded.user_metadata returning id::text",
                            (bucket, name, owner, sub, meta, version, user_meta))
            else:
                cur.execute("insert into storage.objects (bucket_id, name, owner, owner_id, metadata, version, user_metadata) "
                            "values (%s, %s, %s, %s, %s, %s, %s) returning id::text", (bucket, name, owner, sub, meta, version, user_meta))
        except psycopg.errors.UniqueViolation:
            conn.rollback()
            raise StorageError(409, "Duplicate", "The resource already exists", code="KeyAlreadyExists")
        row = cur.fetchone()
        if row is None:
            conn.rollback()
            raise StorageError(404, "not_found", "Object not found", code="NoSuchKey")
        path = self.file(bucket, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        conn.commit()
        self.reply(200, {"Id": row[0], "Key": f"{bucket}/{name}"})

    def download(self, claims, bucket, name):
        conn, cur = self.transaction(claims, "storage.object.get_authenticated")
        cur.execute("select metadata->>'mimetype', metadata->>'cacheControl' from storage.objects where bucket_id = %s and name = %s",
                    (bucket, name))
        row = cur.fetchone()
        conn.commit()
        if not row:
            raise StorageError(404, "not_found", "Object not found", code="NoSuchKey")
        self.send_object(bucket, name, row)

    def download_public(self, bucket, name):
        conn = connection()
        cur = conn.cursor()
        cur.execute("select public from storage.buckets where id = %s", (bucket,))
        found = cur.fetchone()
        if not found or not found[0]:
            conn.commit()
            # A private bucket is not found on the public route, exactly as a missing one.
            raise StorageError(404, "Bucket not found", "Bucket not found", code="NoSuchBucket")
        cur.execute("select metadata->>'mimetype', metadata->>'cacheControl' from storage.objects where bucket_id = %s and name = %s",
                    (bucket, name))
        row = cur.fetchone()
        conn.commit()
        if not row:
            raise StorageError(404, "not_found", "Object not found", code="NoSuchKey")
        self.send_object(bucket, name, row)

    def send_object(self, bucket, name, row):
        try:
            with open(self.file(bucket, name), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            data = b""
        self.reply(200, data, content_type=row[0] or "application/octet-stream",
                   extra={"Cache-Control": row[1]} if row[1] else None)

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
                STATS.update({"requests": 0, "deleted": 0, "faults": 0, "by_route": {}, "canary_requests": 0, "canary_deleted": 0})
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

    def do_PUT(self):
        self.route("PUT")

    def do_PATCH(self):
        self.route("PATCH")


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
