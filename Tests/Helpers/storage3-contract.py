#!/usr/bin/env python3
"""Drives the Storage emulator with Supabase's own Python client, storage3, and with raw HTTP where storage3 has no
call (a raw-body upload, a request without Content-Type, pipelined requests on one connection), checking the answers
against the contract the real server keeps (shared/reference/supabase.md sections 4 and 10).

    storage3-contract.py --url http://127.0.0.1:PORT --service-key JWT --anon-key JWT --user-key JWT --third-party-key JWT

The bucket `avatars` must exist, private, with the quickstart's policies. Prints one JSON line with the number of
checks made; exits 1 naming every check that failed.
"""
import argparse, json, re, socket, sys, urllib.parse

import httpx
import storage3
from storage3.exceptions import StorageApiError

FAILURES = []
CHECKS = 0


def check(condition, what):
    global CHECKS
    CHECKS += 1
    if not condition:
        FAILURES.append(what)


def api_error(call):
    """The StorageApiError `call` raises, or None."""
    try:
        call()
    except StorageApiError as e:
        return e
    return None


def iso_z(value):
    return isinstance(value, str) and len(value) == 24 and value.endswith("Z") and value[10] == "T"


def main():
    parser = argparse.ArgumentParser()
    for name in ("--url", "--service-key", "--anon-key", "--user-key", "--third-party-key"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    base = args.url.rstrip("/") + "/storage/v1"

    def client(key):
        return storage3.create_client(base, {"apikey": key, "Authorization": "Bearer " + key}, is_async=False)

    def headers(key, **extra):
        return {"apikey": key, "Authorization": "Bearer " + key, **extra}

    service = client(args.service_key)
    bucket = service.from_("avatars")
    raw = httpx.Client(timeout=20)

    # get bucket: the quickstart's bucket is private and has no owner, which the server's JSON gives as "".
    info = service.get_bucket("avatars")
    check(info.id == "avatars" and info.public is False, f"get_bucket: {info}")
    check(info.owner == "", f"get_bucket: a null owner is \"\", got {info.owner!r}")
    answer = raw.get(base + "/bucket/avatars", headers=headers(args.service_key)).json()
    check(iso_z(answer.get("created_at")), f"get_bucket: created_at is ISO-8601 with Z: {answer.get('created_at')!r}")
    missing = api_error(lambda: service.get_bucket("no-such-bucket"))
    check(missing is not None and str(missing.status) == "404", f"get_bucket of a missing bucket: {missing!r}")

    # upload (multipart, as storage3 sends it): the file part alone is stored, with its own content type and the
    # cacheControl field.
    png = bytes(range(256)) * 8 + b"\r\n--not-a-boundary\r\n"
    up = bucket.upload("c3/one.png", png, {"content-type": "image/png", "cache-control": "120"})
    check(up.full_path == "avatars/c3/one.png", f"upload: Key {up.full_path!r}")
    check(bucket.download("c3/one.png") == png, "download: the bytes uploaded, not the multipart envelope")
    listed = {item["name"]: item for item in bucket.list("c3")}
    meta = (listed.get("one.png") or {}).get("metadata") or {}
    check(meta.get("mimetype") == "image/png", f"upload: the file part's content type, got {meta.get('mimetype')!r}")
    check(meta.get("cacheControl") == "max-age=120", f"upload: cacheControl field, got {meta.get('cacheControl')!r}")
    check(meta.get("size") == len(png), f"upload: size {meta.get('size')!r}, sent {len(png)}")

    # duplicate: HTTP 400 with statusCode "409" in the body.
    dup = api_error(lambda: bucket.upload("c3/one.png", b"again", {"content-type": "image/png"}))
    check(dup is not None and str(dup.status) == "409", f"duplicate: statusCode 409, got {dup!r}")
    answer = raw.post(base + "/object/avatars/c3/one.png", content=b"again", headers=headers(args.service_key, **{"Content-Type": "image/png"}))
    check(answer.status_code == 400 and answer.json().get("code") == "KeyAlreadyExists" and answer.json().get("statusCode") == "409",
          f"duplicate, raw: {answer.status_code} {answer.text}")

    # upsert: the new bytes replace the old.
    bucket.upload("c3/one.png", b"second version", {"content-type": "image/png", "upsert": "true"})
    check(bucket.download("c3/one.png") == b"second version", "upsert: the new bytes")

    # raw upload: the body is the file, Content-Type and cache-control kept as sent.
    answer = raw.post(base + "/object/avatars/c3/raw.bin", content=b"\x00raw\xff",
                      headers=headers(args.service_key, **{"Content-Type": "application/x-steward", "cache-control": "max-age=60"}))
    check(answer.status_code == 200 and answer.json().get("Key") == "avatars/c3/raw.bin", f"raw upload: {answer.status_code} {answer.text}")
    check(bucket.download("c3/raw.bin") == b"\x00raw\xff", "raw upload: the bytes")
    meta = ({item["name"]: item for item in bucket.list("c3")}.get("raw.bin") or {}).get("metadata") or {}
    check(meta.get("mimetype") == "application/x-steward" and meta.get("cacheControl") == "max-age=60", f"raw upload metadata: {meta}")

    # list: a file and a folder of the same name are both listed; order is lower(name) collate "C"; search is a
    # case-insensitive prefix in which `_` is a plain character; limit and offset are validated.
    for name in ("c3/B.png", "c3/a_b.png", "c3/axb.png", "c3/sub", "c3/sub/x.png", "c3/Z/y.png"):
        bucket.upload(name, b"x", {"content-type": "image/png"})
    items = bucket.list("c3")
    names = [item["name"] for item in items]
    expected = sorted(["B.png", "a_b.png", "axb.png", "sub", "sub", "one.png", "raw.bin", "Z"], key=lambda n: n.lower().encode())
    check(names == expected, f"list order and rows: {names}, expected {expected}")
    subs = [item for item in items if item["name"] == "sub"]
    check(sorted(item["id"] is None for item in subs) == [False, True], f"list: file and folder 'sub' both listed: {subs}")
    folder = [item for item in items if item["name"] == "Z"]
    check(folder and folder[0]["id"] is None and folder[0]["metadata"] is None, f"list: a folder row: {folder}")
    files = [item for item in items if item["id"] is not None]
    check(all(iso_z(item["created_at"]) and iso_z(item["updated_at"]) for item in files), f"list: timestamps ISO-8601 with Z: {files[:1]}")
    found = [item["name"] for item in bucket.list("c3", {"search": "a_"})]
    check(found == ["a_b.png"], f"list search 'a_': prefix, '_' not a wildcard: {found}")
    found = [item["name"] for item in bucket.list("c3", {"search": "b"})]
    check(found == ["B.png"], f"list search 'b': case-insensitive prefix: {found}")
    found = [item["name"] for item in bucket.list("c3", {"limit": 2, "offset": 1})]
    check(found == expected[1:3], f"list limit 2 offset 1: {found}")
    found = [item["name"] for item in bucket.list("c3", {"sortBy": {"column": "name", "order": "desc"}})]
    check(found == list(reversed(expected)) or found[0] == expected[-1], f"list desc: {found}")
    newest = bucket.list("c3", {"sortBy": {"column": "created_at", "order": "desc"}})
    check([item["name"] for item in newest if item["id"]][:1] == ["Z"] or [item["name"] for item in newest if item["id"]][:1] == ["sub"],
          f"list by created_at desc: the last upload first: {[item['name'] for item in newest]}")
    for options, what in (({"limit": 0}, "limit 0"), ({"offset": -1}, "offset -1"), ({"limit": "many"}, "limit 'many'"),
                          ({"sortBy": {"column": "size"}}, "sortBy size")):
        refused = api_error(lambda: bucket.list("c3", options))
        check(refused is not None and str(refused.status) == "400", f"list {what} refused with statusCode 400: {refused!r}")

    # remove: exact names; missing ones left out; the answer's value shapes.
    removed = bucket.remove(["c3/raw.bin", "c3/missing.png"])
    check([item["name"] for item in removed] == ["c3/raw.bin"], f"remove: {removed}")
    check(removed and removed[0]["owner"] == "" and removed[0]["owner_id"] == "", f"remove: a null owner is \"\": {removed[:1]}")
    check(removed and iso_z(removed[0]["created_at"]) and iso_z(removed[0]["last_accessed_at"]), f"remove: ISO-8601 timestamps: {removed[:1]}")
    gone = api_error(lambda: bucket.download("c3/raw.bin"))
    check(gone is not None and str(gone.status) == "404", f"download after remove: statusCode 404: {gone!r}")

    # A JSON route without Content-Type: application/json is refused (the body is not read as JSON) and deletes nothing.
    answer = raw.request("DELETE", base + "/object/avatars", content=json.dumps({"prefixes": ["c3/B.png"]}).encode(),
                         headers=headers(args.service_key))
    check(answer.status_code == 400 and answer.json().get("statusCode") == "400" and answer.json().get("code") == "InvalidRequest",
          f"DELETE without Content-Type: {answer.status_code} {answer.text}")
    check(bucket.download("c3/B.png") == b"x", "DELETE without Content-Type deleted nothing")

    # Kept-alive connection: an answer given without using the body (a wrong route, a refused key) leaves nothing
    # behind that the next request on the connection would be read from.
    host, port = urllib.parse.urlsplit(args.url).hostname, urllib.parse.urlsplit(args.url).port
    smuggled = b"PATCH /storage/v1/bogus HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
    with socket.create_connection((host, port), timeout=20) as s:
        first = (f"POST /storage/v1/object/move HTTP/1.1\r\nHost: x\r\napikey: wrong\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(smuggled)}\r\n\r\n").encode() + smuggled
        second = b"GET /__emulator/health HTTP/1.1\r\nHost: x\r\n\r\n"
        s.sendall(first + second)
        data = b""
        while data.count(b"HTTP/1.1 ") < 2 or not data.endswith(b"}"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", data)
    check(len(statuses) == 2 and statuses[1] == b"200" and data.endswith(b'{"ok": true}'),
          f"kept-alive connection after an unread body: {data[-300:]!r}")

    # Unsupported routes answer "route not found", never an upload into a bucket named after the route.
    for method, path in (("POST", "/object/move"), ("POST", "/object/sign/avatars/c3/B.png"), ("POST", "/object/upload/sign/avatars/c3/n.png"),
                         ("POST", "/object/list/avatars/extra"), ("PATCH", "/object/avatars/c3/B.png")):
        answer = raw.request(method, base + path, content=b"{}", headers=headers(args.service_key, **{"Content-Type": "application/json"}))
        check(answer.status_code == 404 and "not found" in answer.json().get("message", ""), f"{method} {path}: {answer.status_code} {answer.text}")

    # A private bucket is not served from /object/public/.
    answer = raw.get(base + "/object/public/avatars/c3/B.png")
    check(answer.status_code == 400 and answer.json().get("statusCode") == "404" and answer.json().get("code") == "NoSuchBucket",
          f"public route on a private bucket: {answer.status_code} {answer.text}")

    # Keys: S3-safe characters (and letters of any script); others are InvalidKey.
    for name in ("c3/bad{brace}.png", "c3/back\\slash.png", "c3/tab\t.png", "c3/caret^.png"):
        refused = api_error(lambda: bucket.upload(name, b"x", {"content-type": "image/png"}))
        check(refused is not None and str(refused.status) == "400", f"key {name!r} refused: {refused!r}")
    bucket.upload("c3/café (1).png", b"u", {"content-type": "image/png"})
    check(bucket.download("c3/café (1).png") == b"u", "a key with a non-ASCII letter, a space and parentheses")

    # A JWT that does not verify is AccessDenied (statusCode 403).
    bad = client(args.service_key[:-4] + "AAAA")
    denied = api_error(lambda: bad.from_("avatars").download("c3/B.png"))
    check(denied is not None and str(denied.status) == "403", f"a bad signature: {denied!r}")

    # A signed-in user; and a third-party-auth user whose sub is not a UUID: it goes to owner_id only.
    client(args.user_key).from_("avatars").upload("c3/user.png", b"u", {"content-type": "image/png"})
    client(args.third_party_key).from_("avatars").upload("c3/third.png", b"t", {"content-type": "image/png"})
    removed = {item["name"]: item for item in bucket.remove(["c3/user.png", "c3/third.png"])}
    user, third = removed.get("c3/user.png") or {}, removed.get("c3/third.png") or {}
    check(user.get("owner") and user.get("owner") == user.get("owner_id"), f"a user's upload: owner and owner_id: {user}")
    check(third.get("owner") == "" and third.get("owner_id") == "auth0|steward-contract", f"a third-party sub: owner_id only: {third}")

    # The delete guard's own message comes back as AccessDenied when a delete runs without the server's setting.
    raw.post(args.url + "/__emulator/faults", json={"guard_next": 1})
    guarded = api_error(lambda: bucket.remove(["c3/B.png"]))
    check(guarded is not None and str(guarded.status) == "403" and "Direct deletion from storage tables is not allowed" in guarded.message,
          f"the delete guard: {guarded!r}")
    answer = raw.post(args.url + "/__emulator/faults", json={"guard_next": 1})
    answer = raw.request("DELETE", base + "/object/avatars", json={"prefixes": ["c3/B.png"]}, headers=headers(args.service_key))
    check(answer.json().get("code") == "AccessDenied" and answer.json().get("error") == "Unauthorized", f"the delete guard, raw: {answer.text}")
    check(bucket.download("c3/B.png") == b"x", "the guarded delete deleted nothing")

    print(json.dumps({"checks": CHECKS, "failures": len(FAILURES), "storage3": storage3.__version__}))
    for failure in FAILURES:
        print("FAILED: " + failure, file=sys.stderr)
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
