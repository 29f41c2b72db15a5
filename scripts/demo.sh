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
"$steward" job run username-check
psql "$STEWARD_DATABASE_URL" -X -c "select rule, username, detail from steward.username_findings where resolved_at is null order by rule, username limit 12"

step steward status
"$steward" status
step steward verify
"$steward" verify
step "steward migrate   (again: nothing to do)"
"$steward" migrate
printf "\nThe demo database stays up: export STEWARD_DATABASE_URL=\$(scripts/local-db.sh url) to point steward at it;\nstop it with scripts/local-db.sh stop.\n"
