#!/usr/bin/env bash
# Builds the Debian package steward_<version>_amd64.deb with dpkg-deb, offline: the static release binary, the
# systemd unit and its template for one instance per project (steward@.service), their sysusers.d user, /etc/steward/steward.ini as a conffile, the migrations, the reserved
# usernames, the man pages and bash completion (both written by the binary from its own tables), copyright and
# changelog. Depends is computed by dpkg-shlibdeps from the binary's NEEDED libraries; the libraries Steward
# opens on first use (ICU for username-check, libcurl for HTTP) are Recommends.
#
#   scripts/package.sh                      build the release binary, then the package in .build/package/
#   STEWARD_PACKAGE_VERSION=0.1.0+1 ...     another version (an upgrade test's second build)
#   STEWARD_PACKAGE_OUT=DIR ...             where the .deb goes
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

version=${STEWARD_PACKAGE_VERSION:-$(sed -n 's/^ *static let version = "\(.*\)"$/\1/p' Sources/steward/Steward.swift)}
[ -n "$version" ] || { echo "package: no version in Sources/steward/Steward.swift" >&2; exit 1; }
out=${STEWARD_PACKAGE_OUT:-$root/.build/package}
arch=$(dpkg --print-architecture)
deb=$out/steward_${version}_${arch}.deb

swift build -c release --static-swift-stdlib --product steward
binary=$(swift build -c release --static-swift-stdlib --show-bin-path)/steward

stage=$(mktemp -d "${TMPDIR:-/tmp}/steward-package.XXXXXX")
trap 'rm -rf "$stage"' EXIT
pkg=$stage/root
install -d -m 755 "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/lib/systemd/system" "$pkg/usr/lib/sysusers.d" \
    "$pkg/usr/share/steward" "$pkg/usr/share/doc/steward" "$pkg/usr/share/man/man1" "$pkg/usr/share/man/man5" \
    "$pkg/usr/share/bash-completion/completions"
install -d -m 750 "$pkg/etc/steward"

# The binary, stripped (the Swift runtime needs its metadata sections, not its symbols).
install -m 755 "$binary" "$pkg/usr/bin/steward"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$pkg/usr/bin/steward"
"$pkg/usr/bin/steward" version | grep -qx "steward $(sed -n 's/^ *static let version = "\(.*\)"$/\1/p' Sources/steward/Steward.swift)"

# The unit, pointing at the packaged binary; the user it runs as.
# The template unit beside it: one instance per project (steward@NAME reads /etc/steward/NAME.ini).
for unit in steward.service steward@.service; do
    sed -e 's|/usr/local/bin/steward|/usr/bin/steward|g' -e 's|^Documentation=.*|Documentation=man:steward(1) man:steward.ini(5)|' \
        "systemd/$unit" > "$pkg/lib/systemd/system/$unit"
    chmod 644 "$pkg/lib/systemd/system/$unit"
done
install -m 644 systemd/steward.sysusers "$pkg/usr/lib/sysusers.d/steward.conf"

# The sysusers.d line must create the user and group systemd-sysusers would (tried on an empty root).
install -d "$stage/sysroot/etc"
touch "$stage/sysroot/etc/passwd" "$stage/sysroot/etc/group"
systemd-sysusers --root="$stage/sysroot" "$pkg/usr/lib/sysusers.d/steward.conf" >/dev/null 2>&1
grep -q '^steward:x:[0-9]*:[0-9]*:Steward database upkeep:/var/lib/steward:/usr/sbin/nologin$' "$stage/sysroot/etc/passwd" \
    && grep -q '^steward:x:' "$stage/sysroot/etc/group" || { echo "package: sysusers.d/steward.conf does not create steward" >&2; exit 1; }

# Migrations and opt-in folders, the reserved usernames.
cp -r sql/migrations "$pkg/usr/share/steward/migrations"
rm -f "$pkg/usr/share/steward/migrations/all.sql.txt"
cp -r sql/optional "$pkg/usr/share/steward/optional"
install -m 644 config/reserved-usernames.txt "$pkg/usr/share/steward/reserved-usernames.txt"
find "$pkg/usr/share/steward" -type d -exec chmod 755 {} + -o -type f -exec chmod 644 {} +

# The conffile: config/steward.ini with the packaged paths, and the project-specific examples commented out.
awk -f scripts/packaging/deb/steward-ini.awk config/steward.ini > "$pkg/etc/steward/steward.ini"
chmod 640 "$pkg/etc/steward/steward.ini"
printf '/etc/steward/steward.ini\n' > "$pkg/DEBIAN/conffiles"
# It must pass its own check as shipped (its /usr/share/steward paths read from the staged tree).
sed "s|/usr/share/steward/|$pkg/usr/share/steward/|g" "$pkg/etc/steward/steward.ini" > "$stage/steward.ini"
"$pkg/usr/bin/steward" config check --config "$stage/steward.ini" >/dev/null

# Man pages and completion, from the binary's own tables.
"$pkg/usr/bin/steward" man steward | gzip -9n > "$pkg/usr/share/man/man1/steward.1.gz"
"$pkg/usr/bin/steward" man steward.ini | gzip -9n > "$pkg/usr/share/man/man5/steward.ini.5.gz"
"$pkg/usr/bin/steward" man bash-completion > "$pkg/usr/share/bash-completion/completions/steward"
chmod 644 "$pkg/usr/share/man/man1/steward.1.gz" "$pkg/usr/share/man/man5/steward.ini.5.gz" \
    "$pkg/usr/share/bash-completion/completions/steward"

# copyright and changelog (an entry is added for a version the changelog does not have yet).
install -m 644 scripts/packaging/deb/copyright "$pkg/usr/share/doc/steward/copyright"
changelog=$stage/changelog
if ! head -1 scripts/packaging/deb/changelog | grep -qF "steward ($version)"; then
    printf 'steward (%s) bookworm; urgency=medium\n\n  * Rebuild.\n\n -- %s  %s\n\n' "$version" \
        "$(sed -n 's/^ -- \(.*>\)  .*/\1/p' scripts/packaging/deb/changelog | head -1)" "$(date -R)" > "$changelog"
fi
cat scripts/packaging/deb/changelog >> "$changelog"
gzip -9nc "$changelog" > "$pkg/usr/share/doc/steward/changelog.gz"
chmod 644 "$pkg/usr/share/doc/steward/changelog.gz"

for script in postinst prerm postrm; do install -m 755 "scripts/packaging/deb/$script" "$pkg/DEBIAN/$script"; done

# Depends: what the binary links, as dpkg-shlibdeps reads it (package names and minimum versions from the
# libraries' shlibs and symbols files).
mkdir -p "$stage/shlibs/debian"
printf 'Source: steward\n\nPackage: steward\nArchitecture: any\n' > "$stage/shlibs/debian/control"
depends=$(cd "$stage/shlibs" && dpkg-shlibdeps -O "$pkg/usr/bin/steward" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "package: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
# Time zones (`time_zone` of a job) are read from the system's tzdata files, not from a library.
depends="$depends, tzdata"
# Recommends: the libraries opened with dlopen on first use, by the soname the code opens, at the version its
# shlibs file asks for.
recommends_for() {  # soname, e.g. libcurl.so.4
    local name=${1%%.so.*} soversion=${1##*.so.} path package
    path=$(ldconfig -p | awk -v so="$1" '$1 == so { print $NF; exit }')
    [ -n "$path" ] || { echo "package: $1 is not installed here" >&2; exit 1; }
    package=$(dpkg -S "$(readlink -f "$path")" | head -1 | cut -d: -f1)
    local shlibs=/var/lib/dpkg/info/$package:$arch.shlibs
    [ -f "$shlibs" ] || shlibs=/var/lib/dpkg/info/$package.shlibs
    local dependency
    dependency=$(awk -v n="$name" -v v="$soversion" '$1 == n && $2 == v { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }' "$shlibs")
    [ -n "$dependency" ] || { echo "package: $shlibs does not name $1" >&2; exit 1; }
    echo "$dependency"
}
icu_major=$(sed -n 's/^#define U_ICU_VERSION_MAJOR_NUM \([0-9]*\).*/\1/p' /usr/include/unicode/uvernum.h)
recommends="$(recommends_for "libicui18n.so.$icu_major"), $(recommends_for libcurl.so.4)"

installed_size=$(du -k -s --exclude=DEBIAN "$pkg" | cut -f1)
cat > "$pkg/DEBIAN/control" <<CONTROL
Package: steward
Version: $version
Architecture: $arch
Maintainer: $(sed -n 's/^ -- \(.*>\)  .*/\1/p' scripts/packaging/deb/changelog | head -1)
Installed-Size: $installed_size
Depends: $depends
Recommends: $recommends
Section: admin
Priority: optional
Description: keeps a Supabase user-management project's database in shape
 Steward applies and verifies the migrations of a Supabase user-management
 project, runs its upkeep jobs on a schedule (history pruning, username
 checks, orphaned avatar cleanup through the Storage API, Sign in with Apple
 client-secret reminders and rotation) as a systemd service with leader
 election, and answers operators on a control socket with status and
 Prometheus metrics.
 .
 ICU (libicu72) is opened when username-check first runs, and libcurl
 (libcurl4) when a job first talks HTTP (orphan-avatars, Apple secret pushes
 and webhooks): both are recommended, and Steward says which one is missing
 if it is not installed.
CONTROL

# The unit as systemd reads it, against the staged files.
unit_check=$stage/unit
mkdir -p "$unit_check"
sed "s|/usr/bin/steward|$pkg/usr/bin/steward|g" "$pkg/lib/systemd/system/steward.service" > "$unit_check/steward.service"
# The template is verified as an instance (systemd-analyze cannot verify a bare template).
sed "s|/usr/bin/steward|$pkg/usr/bin/steward|g" "$pkg/lib/systemd/system/steward@.service" > "$unit_check/steward@.service"
ln -s steward@.service "$unit_check/steward@package-check.service"
for unit in steward.service steward@package-check.service; do
    if ! verify=$(cd "$unit_check" && MANPATH=$pkg/usr/share/man systemd-analyze verify "$unit_check/$unit" 2>&1) || [ -n "$verify" ]; then
        echo "package: systemd-analyze verify $unit:" >&2; echo "$verify" >&2; exit 1
    fi
done

mkdir -p "$out"
dpkg-deb --root-owner-group -Zxz -z1 --build "$pkg" "$deb" >/dev/null
echo "$deb"
