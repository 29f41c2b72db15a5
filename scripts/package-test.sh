#!/usr/bin/env bash
# Installs the Debian package in a clean Debian 12 root and runs it there: debootstrap (minbase, from the mirror
# this machine's apt uses), apt-get install ./steward_<version>_amd64.deb (its Depends and Recommends from the
# archive), steward version, config check of the installed conffile (as root and as the steward user),
# migrate --dry-run against the test database, two daemons of steward@.service (one per project) and their
# metrics; then an upgrade to a second build keeps an edited conffile, and purge removes it. Needs root (chroot)
# and the network to the mirror.
#
#   scripts/package-test.sh            fresh root every time (about 70 s of debootstrap)
#   STEWARD_PACKAGE_TEST_CACHE=1 ...   reuse .local/debootstrap-bookworm.tar (made by the first such run)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
started=$SECONDS
say() { echo "package-test: $* ($((SECONDS - started)) s)" >&2; }
fail() { echo "package-test: FAILED: $*" >&2; exit 1; }

mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)\/*$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

work=$(mktemp -d "${TMPDIR:-/tmp}/steward-package-test.XXXXXX")
chroot_dir=$work/root
cleanup() {
    mountpoint -q "$chroot_dir/proc" 2>/dev/null && umount "$chroot_dir/proc"
    rm -rf "$work"
}
trap cleanup EXIT

# The package, and a second build of it as the upgrade.
first=$(STEWARD_PACKAGE_OUT=$work/first scripts/package.sh | tail -1)
version=$(dpkg-deb -f "$first" Version)
second=$(STEWARD_PACKAGE_VERSION="$version+upgrade1" STEWARD_PACKAGE_OUT=$work/second scripts/package.sh | tail -1)
say "built $(basename "$first") and $(basename "$second")"

# The clean root.
cache=$root/.local/debootstrap-bookworm.tar
if [ "${STEWARD_PACKAGE_TEST_CACHE:-0}" = 1 ] && [ -f "$cache" ]; then
    mkdir -p "$chroot_dir" && tar -C "$chroot_dir" -xf "$cache"
    say "Debian 12 minbase root unpacked from $cache"
else
    debootstrap --variant=minbase bookworm "$chroot_dir" "$mirror" >"$work/debootstrap.log" 2>&1 \
        || { tail -20 "$work/debootstrap.log" >&2; fail "debootstrap"; }
    if [ "${STEWARD_PACKAGE_TEST_CACHE:-0}" = 1 ]; then mkdir -p "$(dirname "$cache")" && tar -C "$chroot_dir" -cf "$cache" .; fi
    say "debootstrap --variant=minbase bookworm from $mirror"
fi
mount -t proc proc "$chroot_dir/proc" 2>/dev/null || true
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf" 2>/dev/null || true
in_root() { chroot "$chroot_dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }
cp "$first" "$second" "$chroot_dir/tmp/"

in_root apt-get update -qq >"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; fail "apt-get update in the root"; }
in_root apt-get install -y -q "/tmp/$(basename "$first")" >>"$work/apt.log" 2>&1 || { tail -30 "$work/apt.log" >&2; fail "apt-get install"; }
say "apt-get install ./$(basename "$first") (with $(grep -c '^Setting up' "$work/apt.log") packages set up)"
for dependency in libpq5 libssl3 libpg-query1504.0 libicu72 libcurl4; do
    in_root dpkg-query -W -f='${Status}\n' "$dependency" | grep -q "install ok installed" || fail "$dependency not installed"
done

# What it installed, and as whom.
in_root steward version | grep -qx "steward ${version%%+*}" || fail "steward version"
in_root getent passwd steward >/dev/null || fail "no steward user"
[ "$(in_root stat -c '%a %U:%G' /etc/steward/steward.ini)" = "640 root:steward" ] || fail "steward.ini mode or group: $(in_root stat -c '%a %U:%G' /etc/steward/steward.ini)"
[ "$(in_root stat -c '%a %U:%G' /etc/steward)" = "750 root:steward" ] || fail "/etc/steward mode or group"
for file in /usr/share/man/man1/steward.1.gz /usr/share/man/man5/steward.ini.5.gz /usr/share/bash-completion/completions/steward \
            /lib/systemd/system/steward.service /usr/lib/sysusers.d/steward.conf /usr/share/steward/migrations/0001_profiles_table.sql \
            /usr/share/steward/reserved-usernames.txt /usr/share/doc/steward/copyright /usr/share/doc/steward/changelog.gz; do
    [ -f "$chroot_dir$file" ] || fail "$file missing"
done
in_root steward config check --config /etc/steward/steward.ini >"$work/check.out" 2>&1 || { cat "$work/check.out" >&2; fail "config check as root"; }
in_root runuser -u steward -- steward config check --config /etc/steward/steward.ini >/dev/null 2>&1 || fail "config check as the steward user"
say "steward version, config check --config /etc/steward/steward.ini (root and steward)"

# migrate --dry-run against the test database (the host's loopback is the root's).
export STEWARD_PG_DIR=${STEWARD_TEST_PG_DIR:-$root/.local/test-pg} STEWARD_PG_PORT=${STEWARD_TEST_PG_PORT:-54339}
started_db=no
if ! scripts/local-db.sh status >/dev/null 2>&1; then scripts/local-db.sh start >/dev/null; started_db=yes; fi
database=steward_package_test_$$
scripts/local-db.sh newdb "$database" >/dev/null
url=$(scripts/local-db.sh url "$database")
# The installed conffile reads the password as the unit's credential: hand it over as systemd would.
password=$(sed -n 's|^postgresql://[^:]*:\([^@]*\)@.*|\1|p' <<<"$url")
install -d -m 700 "$chroot_dir/run/credentials/steward.service"
(umask 077; printf '%s' "$password" > "$chroot_dir/run/credentials/steward.service/database-password")
dry_run_status=0
in_root CREDENTIALS_DIRECTORY=/run/credentials/steward.service \
    steward migrate --dry-run --config /etc/steward/steward.ini --database-url "${url/:$password@/@}" >"$work/migrate.out" 2>&1 || dry_run_status=$?
[ "$dry_run_status" -eq 0 ] || { cat "$work/migrate.out" >&2; fail "migrate --dry-run (exit $dry_run_status)"; }
grep -q "0001_profiles_table" "$work/migrate.out" || { cat "$work/migrate.out" >&2; fail "migrate --dry-run did not plan 0001_profiles_table"; }
say "steward migrate --dry-run against the test database"

# Two projects, one daemon each, as steward@.service runs them (the root has no systemd: what the unit sets up is
# done here by hand from the installed unit's own lines): /etc/steward/<instance>.ini and .password, the runtime
# directory, the credential, the environment, ExecStart with %i; then each one's metrics textfile is read.
unit=$chroot_dir/lib/systemd/system/steward@.service
[ -f "$unit" ] || fail "/lib/systemd/system/steward@.service missing"
unit_value() { sed -n "s/^$1=//p" "$unit"; }
[ "$(unit_value RuntimeDirectory)" = "steward/%i" ] && [ "$(unit_value StateDirectory)" = "steward/%i" ] || fail "steward@.service directories"
install -d -m 755 -o root "$chroot_dir/var/lib/prometheus/node-exporter"
in_root chown steward:steward /var/lib/prometheus/node-exporter
instance_pids=()
stop_instances() { for pid in "${instance_pids[@]}"; do kill "$pid" 2>/dev/null || true; done; for pid in "${instance_pids[@]}"; do wait "$pid" 2>/dev/null || true; done; }
for instance in alpha beta; do
    scripts/local-db.sh newdb "${database}_$instance" >/dev/null
    instance_url=$(scripts/local-db.sh url "${database}_$instance")
    { cat "$chroot_dir/etc/steward/steward.ini"
      printf '\n[database]\nurl = %s\n[metrics]\ntextfile = /var/lib/prometheus/node-exporter/steward-%s.prom\n[daemon]\nhost = package-test-%s\n' \
          "${instance_url/:$password@/@}" "$instance" "$instance"
    } > "$chroot_dir/etc/steward/$instance.ini"
    chmod 640 "$chroot_dir/etc/steward/$instance.ini"; in_root chgrp steward "/etc/steward/$instance.ini"
    (umask 077; printf '%s' "$password" > "$chroot_dir/etc/steward/$instance.password")
    # LoadCredential= and RuntimeDirectory= of the instance.
    credentials=/run/credentials/steward@$instance.service
    install -d -m 700 "$chroot_dir$credentials"
    credential=$(unit_value LoadCredential | sed "s/%i/$instance/g")
    cp "$chroot_dir${credential#*:}" "$chroot_dir$credentials/${credential%%:*}"
    in_root chown -R steward:steward "$credentials"
    # Checked as the service's user, who owns the credential (as under systemd).
    chroot --userspec=steward:steward "$chroot_dir" /usr/bin/env -i PATH=/usr/bin:/bin CREDENTIALS_DIRECTORY="$credentials" \
        steward config check --config "/etc/steward/$instance.ini" >"$work/$instance.check" 2>&1 \
        || { cat "$work/$instance.check" >&2; fail "config check of /etc/steward/$instance.ini"; }
    install -d -m 750 "$chroot_dir/run/steward/$instance"
    in_root chown steward:steward "/run/steward/$instance"
    environment=$(unit_value Environment | sed "s/%i/$instance/g")
    exec_start=$(unit_value ExecStart | sed "s/%i/$instance/g")
    # User=steward, without a process in between: the PID is the daemon's own (stopped below with SIGTERM).
    # shellcheck disable=SC2086
    chroot --userspec=steward:steward "$chroot_dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 \
        CREDENTIALS_DIRECTORY="$credentials" $environment $exec_start >"$work/$instance.log" 2>&1 &
    instance_pids+=($!)
done
for instance in alpha beta; do
    prom=$chroot_dir/var/lib/prometheus/node-exporter/steward-$instance.prom
    # The textfile is written every [metrics] interval (15 s): the one written after the instance took the lead.
    for _ in $(seq 1 90); do grep -q "^steward_leader{project=\"$instance\"} 1$" "$prom" 2>/dev/null && break; sleep 1; done
    grep -q "^steward_leader{project=\"$instance\"} 1$" "$prom" 2>/dev/null \
        || { stop_instances; tail -20 "$work/$instance.log" >&2; cat "$prom" >&2 2>/dev/null; fail "steward@$instance does not lead its project"; }
    grep -q "^steward_database_up{project=\"$instance\"} 1$" "$prom" || { stop_instances; cat "$prom" >&2; fail "steward@$instance: its database is not up"; }
    if grep -v '^#' "$prom" | grep -qv "project=\"$instance\""; then stop_instances; cat "$prom" >&2; fail "a metric of steward@$instance lacks project=\"$instance\""; fi
    in_root steward ctl --socket "/run/steward/$instance/control.sock" status >"$work/$instance.status" 2>&1 \
        || { stop_instances; cat "$work/$instance.status" >&2; fail "steward ctl of steward@$instance"; }
done
stop_instances
[ "$(stat -c %s "$chroot_dir/var/lib/prometheus/node-exporter/steward-alpha.prom")" -gt 0 ] || fail "alpha's textfile is empty"
say "steward@alpha and steward@beta: one daemon per project, each leading, own socket, metrics labelled by project"
psql -q "$(scripts/local-db.sh admin-url)" -c "drop database if exists $database" -c "drop database if exists ${database}_alpha with (force)" \
    -c "drop database if exists ${database}_beta with (force)" >/dev/null 2>&1 || true
[ "$started_db" = yes ] && scripts/local-db.sh stop >/dev/null

# Upgrade: an edited conffile stays as edited.
sed -i 's/^connect_timeout = 10$/connect_timeout = 7/' "$chroot_dir/etc/steward/steward.ini"
echo "; edited by the operator" >> "$chroot_dir/etc/steward/steward.ini"
before=$(sha256sum < "$chroot_dir/etc/steward/steward.ini")
in_root apt-get install -y -q -o Dpkg::Options::=--force-confold "/tmp/$(basename "$second")" >"$work/upgrade.log" 2>&1 \
    || { tail -30 "$work/upgrade.log" >&2; fail "upgrade"; }
[ "$(in_root dpkg-query -W -f='${Version}' steward)" = "$version+upgrade1" ] || fail "not upgraded"
[ "$(sha256sum < "$chroot_dir/etc/steward/steward.ini")" = "$before" ] || fail "the upgrade changed the edited steward.ini"
grep -q '^connect_timeout = 7$' "$chroot_dir/etc/steward/steward.ini" || fail "the edit is gone"
[ "$(in_root stat -c '%a %U:%G' /etc/steward/steward.ini)" = "640 root:steward" ] || fail "steward.ini mode or group after the upgrade"
in_root steward config check --config /etc/steward/steward.ini >/dev/null 2>&1 || fail "config check after the upgrade"
say "upgrade to $version+upgrade1 kept the edited /etc/steward/steward.ini"

# Purge takes the configuration with it.
in_root apt-get purge -y -q steward >"$work/purge.log" 2>&1 || { tail -20 "$work/purge.log" >&2; fail "purge"; }
[ ! -e "$chroot_dir/etc/steward/steward.ini" ] || fail "purge left /etc/steward/steward.ini"
[ ! -e "$chroot_dir/usr/bin/steward" ] || fail "purge left /usr/bin/steward"
say "purge removed it; all checks passed"
