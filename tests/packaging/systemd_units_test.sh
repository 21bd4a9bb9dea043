#!/usr/bin/env bash
# The systemd units of packaging/systemd/ pass `systemd-analyze verify` in a root laid out as the packages
# install them (the built binaries in /usr/bin, socat, /etc/memfleet/ defaults, this machine's own units
# for the targets they name), carry the hardening docs/deploy.md promises, and a broken copy fails.
#   systemd_units_test.sh REPO MEMFLEET MEMFLEET_SERVER
set -euo pipefail
repo="$1"; memfleet="$2"; server="$3"
command -v systemd-analyze >/dev/null || { echo "systemd-analyze missing: scripts/setup-deps installs systemd" >&2; exit 1; }
socat=$(command -v socat) || { echo "socat missing: scripts/setup-deps installs it" >&2; exit 1; }
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
units="$root/usr/lib/systemd/system"
mkdir -p "$units" "$root/usr/bin" "$root/etc/memfleet"
cp -a /usr/lib/systemd/system/. "$units/"
cp "$memfleet" "$server" "$socat" "$root/usr/bin/"
cp "$repo"/packaging/etc/*.conf "$root/etc/memfleet/"
cp "$repo"/packaging/systemd/*.service "$units/"

verify() {  # verify UNIT...: systemd-analyze's output; fails when it exits non-zero or says anything
  local out
  out=$(cd "$root" && systemd-analyze verify --root="$root" "$@" 2>&1) || { echo "$out"; return 1; }
  [ -z "$out" ] || { echo "$out"; return 1; }
}

ours=("$units"/memfleet-server.service "$units"/memfleet-agents-supervise.service "$units"/memfleet-relay.service)
verify "${ours[@]}" || { echo "FAIL: the units do not verify" >&2; exit 1; }

server_unit="$units/memfleet-server.service"
for line in User=memfleet StateDirectory=memfleet Restart=on-failure ProtectSystem=strict NoNewPrivileges=yes \
    ProtectHome=yes PrivateTmp=yes "CapabilityBoundingSet="; do
  grep -qx "$line" "$server_unit" || { echo "FAIL: memfleet-server.service lacks $line" >&2; exit 1; }
done
grep -q '^ExecStart=/usr/bin/socat TCP-LISTEN:${MEMFLEET_RELAY_PORT},bind=127.0.0.1,' "$units/memfleet-relay.service" \
  || { echo "FAIL: the relay does not listen on 127.0.0.1 only" >&2; exit 1; }

# The check can fail: a misspelt setting and a missing program are reported.
sed 's/^Restart=on-failure$/Restart=sometimes/' "$server_unit" >"$units/broken-a.service"
sed 's|/usr/bin/socat|/usr/bin/no-socat|' "$units/memfleet-relay.service" >"$units/broken-b.service"
for broken in broken-a broken-b; do
  if verify "$units/$broken.service" >/dev/null; then echo "FAIL: $broken.service verified" >&2; exit 1; fi
done
echo "3 passed, 0 failed"
