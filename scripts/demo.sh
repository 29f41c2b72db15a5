#!/usr/bin/env bash
# The embedded default: builds Steward, starts a local Supabase-like Postgres (shim applied), and runs
# Steward's main job against it: plan, migrate, sign up demo users (the trigger makes their profiles),
# then status and verify. Safe to run again: the demo database is made anew each time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

scripts/install-deps.sh
swift build --product steward 2>&1 | grep -E "error|warning: unre|Compiling|Build" | tail -n 3 >&2 || true
steward="$root/.build/debug/steward"
scripts/local-db.sh start
psql "$(scripts/local-db.sh admin-url)" -X -q -c "drop database if exists steward_demo with (force)"
scripts/local-db.sh newdb steward_demo 2026
export STEWARD_DATABASE_URL=$(scripts/local-db.sh url steward_demo)

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

step steward migrate --dry-run
"$steward" migrate --dry-run | head -n 24; echo "  …"
step steward migrate
"$steward" migrate

step "signing up 300 demo users through auth.users (as the Auth server would)"
psql "postgresql://supabase_auth_admin:steward-local@127.0.0.1:${STEWARD_PG_PORT:-54329}/steward_demo" -X -q -v ON_ERROR_STOP=1 <<'SQL'
insert into auth.users (id, aud, role, email, raw_user_meta_data, raw_app_meta_data, created_at, updated_at)
select gen_random_uuid(), 'authenticated', 'authenticated', format('user%s@example.com', n),
       case when n % 3 = 0 then jsonb_build_object('full_name', format('Demo User %s', n),
                                                   'avatar_url', format('https://avatars.example.com/u/%s.png', n))
            else '{}'::jsonb end,
       jsonb_build_object('provider', case when n % 10 = 0 then 'apple' else 'email' end),
       now() - make_interval(days => n), now()
from generate_series(1, 300) n;
SQL
psql "$STEWARD_DATABASE_URL" -X -q -c "select count(*) as profiles, count(full_name) as with_full_name, count(avatar_url) as with_avatar from public.profiles"

step "some users pick usernames (each kind of trouble the username check looks for)"
psql "$STEWARD_DATABASE_URL" -X -q -v ON_ERROR_STOP=1 <<'SQL'
update public.profiles p set username = v.username
from (values (1, 'alice'), (2, 'Bob'), (3, 'bob'), (4, 'paypal'), (5, 'pаypal'), (6, 'admin'), (7, 'ｓｕｐｐｏｒｔ'),
             (8, 'scope'), (9, 'ѕсоре'), (10, 'bo b'), (11, E'zero\u200Dwidth'), (12, ' lead'), (13, 'ab👩‍👩‍👧'),
             (14, 'ﬁsh'), (15, 'fish'), (16, 'αlpha'), (17, 'carol.b'), (18, repeat('x', 31))) v(n, username)
where p.id = (select id from public.profiles order by id offset v.n limit 1);
SQL
step steward job run username-check
"$steward" job run username-check 2>&1 | grep -v "new username finding"
psql "$STEWARD_DATABASE_URL" -X -c "select rule, username, detail from steward.username_findings where resolved_at is null order by rule, username limit 12"

step "the Swift app at work: every profile save uploads a new <UUID>.jpeg and orphans the previous one"
emulator_port=${STEWARD_EMULATOR_PORT:-54350}
pkill -f "storage-emulator.py --port $emulator_port" 2>/dev/null || true
mkdir -p "$root/.local"
rm -rf "$root/.local/storage"
jwt_secret=steward-demo-jwt-secret-not-for-production
python3 scripts/storage-emulator.py --port "$emulator_port" --data-dir "$root/.local/storage" --jwt-secret "$jwt_secret" \
  --database-url "postgresql://supabase_storage_admin:steward-local@127.0.0.1:${STEWARD_PG_PORT:-54329}/steward_demo" \
  >"$root/.local/storage-emulator.log" 2>&1 &
key_file="$root/.local/demo-service-key"
( umask 077; python3 scripts/storage-emulator.py --jwt-secret "$jwt_secret" --print-keys \
    | python3 -c "import json, sys; sys.stdout.write(json.load(sys.stdin)['service_role'])" > "$key_file" )
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$emulator_port/__emulator/health" >/dev/null && break; sleep 0.1; done
python3 - "$emulator_port" "$key_file" <<'PYTHON'
import sys, urllib.request, uuid
port, key = sys.argv[1], open(sys.argv[2]).read()
for i in range(60):
    name = f"{uuid.uuid4()}.jpeg"
    req = urllib.request.Request(f"http://127.0.0.1:{port}/storage/v1/object/avatars/{name}", data=b"\xff\xd8jpeg" * (100 + i),
                                 method="POST", headers={"apikey": key, "Authorization": "Bearer " + key, "Content-Type": "image/jpeg"})
    urllib.request.urlopen(req).read()
PYTHON
psql "$(scripts/local-db.sh admin-url steward_demo)" -X -q -v ON_ERROR_STOP=1 <<'SQL'
-- Yesterday's saves: the 40 newest profiles point at one avatar each (half by path, half by public URL); 20 are orphans.
alter table storage.objects disable trigger update_objects_updated_at;
update storage.objects set created_at = now() - interval '2 days', updated_at = now() - interval '2 days';
alter table storage.objects enable trigger update_objects_updated_at;
with o as (select name, row_number() over (order by name) n from storage.objects where bucket_id = 'avatars'),
     p as (select id, row_number() over (order by id) n from public.profiles)
update public.profiles pr set avatar_url = case when o.n % 2 = 0 then o.name
                                               else 'http://127.0.0.1:54350/storage/v1/object/public/avatars/' || o.name || '?t=1' end
from o join p on p.n = o.n where pr.id = p.id and o.n <= 40;
SQL
storage_args=(--storage-url "http://127.0.0.1:$emulator_port" --service-key-file "$key_file")
step steward job run orphan-avatars --dry-run
"$steward" job run orphan-avatars --dry-run "${storage_args[@]}" 2>&1 | grep -v "would delete" | grep -vE "^20.* info (jobs|postgres)"
step steward job run orphan-avatars
"$steward" job run orphan-avatars "${storage_args[@]}" 2>&1 | grep -vE "^20.* info (jobs|postgres)"
psql "$STEWARD_DATABASE_URL" -X -c "select count(*) as audited_deletions, sum(size) as bytes from steward.deleted_objects where deleted_at is not null"

step "Sign in with Apple: a client secret that expires in 10 days"
apple_dir="$root/.local/apple"
rm -rf "$apple_dir"; mkdir -p "$apple_dir"; chmod 700 "$apple_dir"
openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out "$apple_dir/AuthKey_DEMO123456.p8"
chmod 600 "$apple_dir/AuthKey_DEMO123456.p8"
cat > "$apple_dir/steward.ini" <<INI
[apple]
team_id = DEMOTEAM01
key_id = DEMO123456
services_id = com.example.app.web
private_key_file = $apple_dir/AuthKey_DEMO123456.p8
secret_file = $apple_dir/client-secret.jwt
INI
"$steward" apple-secret generate --days 10 --out "$apple_dir/client-secret.jwt" --config "$apple_dir/steward.ini" 2>/dev/null
step steward apple-secret status
"$steward" apple-secret status --config "$apple_dir/steward.ini" || true
step steward job run apple-secret
"$steward" job run apple-secret --config "$apple_dir/steward.ini" 2>&1 | grep -vE "^20.* info (jobs|postgres|migrations)"

step steward status
"$steward" status
step steward verify
"$steward" verify
step "the older tutorial's hand-made \"User\" table (RLS off, granted to anon as pre-2026 projects do), a few rows"
psql "$STEWARD_DATABASE_URL" -X -q -v ON_ERROR_STOP=1 -f sql/demo/legacy_user_table.sql
psql "$STEWARD_DATABASE_URL" -X -q -v ON_ERROR_STOP=1 <<'SQL'
grant all on table public."User" to anon, authenticated;
insert into public."User" ("userID", name, email)
select u.id::text, 'Legacy ' || u.email, u.email from auth.users u order by u.email limit 4;
insert into public."User" ("userID", name, email) values
  ('not-a-uuid', 'Typo', 'typo@example.com'),
  (gen_random_uuid()::text, 'Deleted account', 'gone@example.com'),
  ((select id::text from auth.users order by email offset 5 limit 1), 'Changed email', 'old-address@example.com');
SQL
step "steward advise   (exits 2: error-level findings)"
"$steward" advise || echo "(exit $?)"
step steward migrate --include sql/optional/legacy-user-table
"$steward" migrate --include sql/optional/legacy-user-table
step "steward advise   (the User table is no longer reported)"
"$steward" advise || echo "(exit $?)"
step steward job run import-legacy-users --dry-run
"$steward" job run import-legacy-users --dry-run 2>&1 | grep -vE "^20.* info (jobs|postgres|migrations)"
step steward job run import-legacy-users
"$steward" job run import-legacy-users 2>&1 | grep -vE "^20.* info (jobs|postgres|migrations)"
step "steward job run import-legacy-users   (again: nothing to import)"
"$steward" job run import-legacy-users 2>&1 | grep -vE "^20.* info (jobs|postgres|migrations)"
step steward job run security-advisor
"$steward" job run security-advisor 2>&1 | grep -vE "^20.* info (jobs|postgres|migrations)"
step "steward migrate   (again: nothing to do)"
"$steward" migrate --include sql/optional/legacy-user-table
printf "\nThe Storage emulator stays up on port %s (key in %s).\n" "$emulator_port" "$key_file"
printf "\nThe demo database stays up: export STEWARD_DATABASE_URL=\$(scripts/local-db.sh url) to point steward at it;\nstop it with scripts/local-db.sh stop.\n"
