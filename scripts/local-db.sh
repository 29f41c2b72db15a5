#!/usr/bin/env bash
# A throwaway PostgreSQL cluster that behaves like a Supabase project's database.
#
#   scripts/local-db.sh start    initdb (first time), start, create roles and template databases
#   scripts/local-db.sh stop     stop the cluster
#   scripts/local-db.sh status   is it running?
#   scripts/local-db.sh url      print the URL Steward uses (role postgres, database steward_demo)
#   scripts/local-db.sh reset    stop and delete everything
#   scripts/local-db.sh ca       print the path of the cluster's CA certificate (TLS is on)
#   scripts/local-db.sh crash-restart   restart the server the hard way (-m immediate), for fault tests
#   scripts/local-db.sh newdb NAME [legacy|2026]   create a database with the local shim applied
#   scripts/local-db.sh supautils NAME on|off       give or take the supautils stand-in in one database
#
# Environment: STEWARD_PG_DIR (default .local/pg), STEWARD_PG_PORT (default 54329),
# STEWARD_PG_SUPAUTILS (default on): off leaves the supautils stand-in out of the databases newdb creates, so
# postgres cannot create policies on storage.objects (plain PostgreSQL's rule; the platform allows it through supautils).
# The cluster runs as the OS user postgres (PostgreSQL refuses root); its superuser is supabase_admin,
# and Steward logs in as postgres (not superuser, BYPASSRLS), as on the platform.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${STEWARD_PG_DIR:-$root/.local/pg}
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
port=${STEWARD_PG_PORT:-54329}
link=$dir
[ -L "$dir" ] && dir=$(readlink -f "$dir")
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
password=steward-local
admin_url="postgresql://supabase_admin:$password@127.0.0.1:$port"

as_postgres() {
  if [ "$(id -un)" = postgres ]; then "$@"; else (cd / && runuser -u postgres -- "$@"); fi
}

# Starts the server with no descriptor of ours but 0-2: a caller's pipe inherited by the server would stay
# open for the server's lifetime (and make a caller that waits for end-of-output or for our exit wait for ever).
start_server() {
  (
    cd /
    for fd in /proc/self/fd/*; do
      fd=${fd##*/}
      [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-" 2>/dev/null
    done
    runuser_or_self "$bin/pg_ctl" "$@" </dev/null >/dev/null 2>&1
  )
}

runuser_or_self() {
  if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi
}

psql_admin() { # database, then psql arguments
  local db=$1; shift
  PGCONNECT_TIMEOUT=10 PGOPTIONS='-c client_min_messages=warning' psql "$admin_url/$db" -X -q -v ON_ERROR_STOP=1 "$@"
}

ensure_installed() {
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ] || [ ! -f "$(pg_config --includedir-server 2>/dev/null)/postgres.h" ] \
     || ! command -v gcc >/dev/null; then
    "$root/scripts/install-deps.sh"
    bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  fi
}

# PostgreSQL runs as the OS user postgres: the data folder must be reachable by it. When the checkout
# sits under a private folder (/root/…), the cluster lives under /tmp instead and a link points to it.
prepare_dir() {
  mkdir -p "$(dirname "$dir")"
  if [ ! -e "$dir" ]; then
    mkdir -p "$dir"
    if ! as_postgres test -x "$dir" 2>/dev/null; then
      rmdir "$dir"
      local outside
      outside=$(mktemp -d /tmp/steward-pg.XXXXXX)
      chmod 755 "$outside"
      ln -s "$outside" "$dir"
      echo "local-db: $dir is private to postgres; the cluster lives in $outside" >&2
      dir=$outside
    fi
  fi
  chown postgres: "$dir"
}

new_database() { # name, grant mode
  local name=$1 mode=${2:-2026}
  psql_admin postgres -c "create database \"$name\" owner postgres" >/dev/null
  psql_admin "$name" -f "$root/sql/local/10_auth.sql" -f "$root/sql/local/20_storage.sql" \
    -f "$root/sql/local/30_public_$mode.sql" >/dev/null
  supautils "$name" "${STEWARD_PG_SUPAUTILS:-on}"
}

# The supautils stand-in (sql/local/supautils_stand_in.c) acts in a database whose setting lists the grant; a
# database copied from a template does not inherit the setting, so whoever copies one sets it (TestDatabase does).
supautils() { # database, on|off
  case "$2" in
    on) psql_admin postgres -c "alter database \"$1\" set supautils_stand_in.policy_grants = 'postgres:storage.objects'" >/dev/null ;;
    off) psql_admin postgres -c "alter database \"$1\" reset supautils_stand_in.policy_grants" >/dev/null ;;
    *) echo "local-db: supautils takes on or off, not '$2'" >&2; exit 64 ;;
  esac
}

# What the shim's files say, so templates made from an older shim are made again.
shim_fingerprint() { cat "$root"/sql/local/*.sql | md5sum | cut -c1-32; }

# Builds the stand-in against the server's headers when its source is newer than the module.
build_stand_in() {
  local so="$dir/lib/supautils_stand_in.so" src="$root/sql/local/supautils_stand_in.c"
  if [ ! -f "$so" ] || [ "$src" -nt "$so" ]; then
    mkdir -p "$dir/lib"
    gcc -O2 -Wall -Werror -fPIC -shared -I"$(pg_config --includedir-server)" -o "$so.tmp" "$src"
    chmod 755 "$dir/lib" "$so.tmp"
    mv "$so.tmp" "$so"
    return 0
  fi
  return 1
}

# A throwaway CA and a server certificate for localhost/127.0.0.1, so TLS (sslmode=verify-full) is tested for real.
# The CA certificate is left at $dir/ca.crt for clients.
make_certificates() {
  local tmp
  tmp=$(mktemp -d)
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=Steward local CA" \
    -keyout "$tmp/ca.key" -out "$tmp/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$tmp/server.key" -out "$tmp/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$tmp/ext"
  openssl x509 -req -in "$tmp/server.csr" -CA "$tmp/ca.crt" -CAkey "$tmp/ca.key" -CAcreateserial -days 3650 \
    -extfile "$tmp/ext" -out "$tmp/server.crt" 2>/dev/null
  install -o postgres -m 600 "$tmp/server.key" "$dir/data/server.key"
  install -o postgres -m 644 "$tmp/server.crt" "$dir/data/server.crt"
  install -m 644 "$tmp/ca.crt" "$dir/ca.crt"
  rm -rf "$tmp"
}

start() {
  ensure_installed
  prepare_dir
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_postgres mkdir -p "$dir/data"
    local pwfile="$dir/.pwfile"
    echo "$password" > "$pwfile"; chown postgres: "$pwfile"; chmod 600 "$pwfile"
    as_postgres "$bin/initdb" -D "$dir/data" -U supabase_admin --pwfile="$pwfile" \
      --auth-local=peer --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
    rm -f "$pwfile"
    cat >> "$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = ''
fsync = off
full_page_writes = off
max_connections = 200
shared_buffers = 128MB
log_min_messages = warning
CONF
  fi
  if [ ! -f "$dir/data/server.crt" ]; then
    as_postgres "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    make_certificates
    printf "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n" >> "$dir/data/postgresql.conf"
  fi
  local rebuilt=no
  build_stand_in && rebuilt=yes
  if ! grep -q '^shared_preload_libraries' "$dir/data/postgresql.conf"; then
    echo "shared_preload_libraries = '$dir/lib/supautils_stand_in.so'" >> "$dir/data/postgresql.conf"
    rebuilt=yes
  fi
  if ! as_postgres "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    start_server -D "$dir/data" -l "$dir/data/server.log" -w -t 60 start
  elif [ "$rebuilt" = yes ]; then
    start_server -D "$dir/data" -l "$dir/data/server.log" -m fast -w -t 60 restart
  fi
  psql_admin postgres -f "$root/sql/local/00_roles.sql" >/dev/null
  local fingerprint
  fingerprint=$(shim_fingerprint)
  for mode in legacy 2026; do
    local template="steward_template_$mode"
    local made
    made=$(psql_admin postgres -tAc "select coalesce(shobj_description(oid, 'pg_database'), '-') from pg_database where datname = '$template'")
    if [ -n "$made" ] && [ "$made" != "steward shim $fingerprint" ]; then
      psql_admin postgres -c "alter database \"$template\" with is_template false" -c "drop database \"$template\" with (force)" >/dev/null
      made=
    fi
    if [ -z "$made" ]; then
      new_database "$template" "$mode"
      psql_admin postgres -c "alter database \"$template\" with is_template true" \
        -c "comment on database \"$template\" is 'steward shim $fingerprint'" >/dev/null
    fi
  done
  echo "local-db: running on 127.0.0.1:$port (data in $dir/data)" >&2
}

stop() {
  [ -n "$bin" ] && [ -f "$dir/data/PG_VERSION" ] || return 0
  as_postgres "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) as_postgres "$bin/pg_ctl" -D "$dir/data" status ;;
  crash-restart) start_server -D "$dir/data" -l "$dir/data/server.log" -m immediate -w -t 60 restart ;;
  url) echo "postgresql://postgres:$password@127.0.0.1:$port/${2:-steward_demo}" ;;
  admin-url) echo "$admin_url/${2:-postgres}" ;;
  ca) echo "$dir/ca.crt" ;;
  newdb) new_database "${2:?database name}" "${3:-2026}" ;;
  supautils) supautils "${2:?database name}" "${3:?on or off}" ;;
  reset) stop; rm -rf "$dir" "$link" ;;
  *) sed -n '2,20p' "$0" >&2; exit 64 ;;
esac
