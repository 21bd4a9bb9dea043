#!/usr/bin/env bash
# The Debian packages of packaging/CMakeLists.txt, built by `cpack -G DEB` from the build folder: each holds
# exactly the files docs/deploy.md ("Packages") lists, with their modes, control fields, conffiles and
# maintainer script; the users its sysusers.d file declares are made by the real systemd-sysusers in the
# extracted tree; and the extracted binaries run: each answers --version with the project's version (the
# arm64 agent under qemu-aarch64-static), and the extracted memfleet-server takes an agent that the
# extracted memfleet CLI deploys, without being told where the agent is, to a stand-in phone
# (tests/support/fake_adb/adb). Nothing is installed on this machine: dpkg -i and apt are not run.
#   deb_packages_test.sh REPO BUILD_DIR VERSION HAVE_AGENTS(0|1)
set -euo pipefail
repo="$1"; build="$2"; version="$3"; have_agents="$4"
if [ "$have_agents" != 1 ]; then
  echo "SKIPPED: no static agents given to CMake (-DMEMFLEET_ARM64_AGENT=..., -DMEMFLEET_X86_64_STATIC_AGENT=...)"
  exit 77
fi
qemu=$(command -v qemu-aarch64-static) || { echo "qemu-aarch64-static missing (qemu-user-static)" >&2; exit 1; }
work=$(mktemp -d)
server_pid=""
cleanup() {
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  # An agent the test started on the stand-in phone, if the test failed before stopping it.
  p=$(cat "$work/phones/emulator-5554/data/local/tmp/memfleet/agent.pid" 2>/dev/null || true)
  case "$p" in ''|*[!0-9]*) ;; *) kill -9 "$p" 2>/dev/null || true ;; esac
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; exit 1; }
arch=$(dpkg --print-architecture)
cli="$work/out/memfleet_${version}_${arch}.deb"
server="$work/out/memfleet-server_${version}_${arch}.deb"
agents="$work/out/memfleet-agents_${version}_all.deb"
for deb in "$cli" "$server" "$agents"; do
  [ -f "$deb" ] || { echo "FAIL: $(basename "$deb") was not built; cpack made: $(ls "$work/out")" >&2; exit 1; }
done

# Every path each package holds ("MODE OWNER PATH", directories left out), against the list it must be.
contents() { dpkg-deb -c "$1" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $1, $2, $6 }' | sort; }
expect_contents() {  # expect_contents DEB "MODE OWNER PATH" ...
  local deb="$1"; shift
  local want got
  want=$(printf '%s\n' "$@" | sort)
  got=$(contents "$deb")
  [ "$got" = "$want" ] || fail "$(basename "$deb") holds:"$'\n'"$got"$'\n'"not:"$'\n'"$want"
}
exe="-rwxr-xr-x root/root"
file="-rw-r--r-- root/root"
expect_contents "$cli" "$exe /usr/bin/memfleet" \
  "$file /etc/memfleet/agents.conf" "$file /etc/memfleet/relay.conf" \
  "$file /usr/lib/systemd/system/memfleet-agents-supervise.service" "$file /usr/lib/systemd/system/memfleet-relay.service" \
  "$file /usr/lib/sysusers.d/memfleet.conf" "$file /usr/share/doc/memfleet/README.md" \
  "$file /usr/share/doc/memfleet/deploy.md" "$file /usr/share/doc/memfleet/labels.md" \
  "$file /usr/share/doc/memfleet/baselines.md"
expect_contents "$server" "$exe /usr/bin/memfleet-server" "$file /etc/memfleet/server.conf" \
  "$file /usr/lib/systemd/system/memfleet-server.service" "$file /usr/lib/sysusers.d/memfleet-server.conf" \
  "$file /usr/share/doc/memfleet-server/README.md" "$file /usr/share/doc/memfleet-server/security.md" \
  "$file /usr/share/doc/memfleet-server/metrics.md" "$file /usr/share/doc/memfleet-server/dashboard.md" \
  "$file /usr/share/doc/memfleet-server/reliability.md"
expect_contents "$agents" "$exe /usr/share/memfleet/agents/arm64-v8a/memfleet-agent" \
  "$exe /usr/share/memfleet/agents/x86_64/memfleet-agent"

# Control fields: the shared libraries the binaries link come from dpkg-shlibdeps; the agents need none.
field() { dpkg-deb -f "$1" "$2"; }
[ "$(field "$cli" Package)" = memfleet ] || fail "memfleet's Package is $(field "$cli" Package)"
[ "$(field "$server" Package)" = memfleet-server ] || fail "memfleet-server's Package is $(field "$server" Package)"
[ "$(field "$agents" Package)" = memfleet-agents ] || fail "memfleet-agents' Package is $(field "$agents" Package)"
for deb in "$cli" "$server" "$agents"; do
  [ "$(field "$deb" Version)" = "$version" ] || fail "$(basename "$deb"): Version $(field "$deb" Version)"
done
for deb in "$cli" "$server"; do
  depends=$(field "$deb" Depends)
  for lib in 'libgrpc++1.51' libprotobuf32 libc6 systemd; do
    grep -q "$lib" <<<"$depends" || fail "$(basename "$deb") does not depend on $lib: $depends"
  done
done
grep -q libpq5 <<<"$(field "$server" Depends)" || fail "memfleet-server does not depend on libpq5"
[ -z "$(field "$agents" Depends)" ] || fail "memfleet-agents depends on $(field "$agents" Depends)"
grep -q 'memfleet-agents' <<<"$(field "$cli" Recommends)" || fail "memfleet does not recommend memfleet-agents"
grep -q '^adb' <<<"$(field "$cli" Recommends)" || fail "memfleet does not recommend adb"

# Maintainer files: the /etc defaults are conffiles (an upgrade keeps a lab's edits), postinst makes the users.
for pair in "$cli:/etc/memfleet/agents.conf /etc/memfleet/relay.conf" "$server:/etc/memfleet/server.conf"; do
  deb=${pair%%:*}; want=${pair#*:}
  rm -rf "$work/control"; dpkg-deb -e "$deb" "$work/control"
  [ "$(tr '\n' ' ' <"$work/control/conffiles" | sed 's/ $//')" = "$want" ] \
    || fail "$(basename "$deb") conffiles: $(cat "$work/control/conffiles")"
  [ -x "$work/control/postinst" ] && grep -q '^  systemd-sysusers memfleet' "$work/control/postinst" \
    || fail "$(basename "$deb") has no postinst running systemd-sysusers"
done

# The extracted tree, as dpkg would lay it out.
root="$work/root"
for deb in "$cli" "$server" "$agents"; do dpkg-deb -x "$deb" "$root"; done

# The sysusers.d files, through the real systemd-sysusers on a copy of this machine's users.
mkdir -p "$root/etc"
cp /etc/passwd /etc/group /etc/shadow /etc/gshadow "$root/etc/" 2>/dev/null || true
systemd-sysusers --root="$root" memfleet-server.conf memfleet.conf >"$work/sysusers.log" 2>&1 \
  || fail "systemd-sysusers: $(cat "$work/sysusers.log")"
grep -q '^memfleet:[^:]*:[0-9]*:[0-9]*:[^:]*:/var/lib/memfleet:' "$root/etc/passwd" || fail "no user memfleet made"
grep -q '^memfleet-adb:[^:]*:[0-9]*:[0-9]*:[^:]*:/var/lib/memfleet-adb:' "$root/etc/passwd" || fail "no user memfleet-adb made"
grep -q '^plugdev:.*memfleet-adb' "$root/etc/group" || fail "memfleet-adb is not in plugdev: $(grep ^plugdev: "$root/etc/group")"

# --version of every binary as extracted (the arm64 agent on qemu, as no arm64 kernel is here): the project's
# version, with the commit the build stamps after it (common/version.h).
check_version() {  # check_version NAME COMMAND...
  local name="$1"; shift
  local got
  got=$("$@" --version 2>&1) || fail "$* --version exited $?: $got"
  [[ "$got" =~ ^$name\ ${version//./[.]}(\+g[0-9a-f]+(-dirty)?)?$ ]] \
    || fail "$* --version says \"$got\", not \"$name $version[+gCOMMIT]\""
}
check_version memfleet "$root/usr/bin/memfleet"
check_version memfleet-server "$root/usr/bin/memfleet-server"
check_version memfleet-agent "$root/usr/share/memfleet/agents/x86_64/memfleet-agent"
check_version memfleet-agent "$qemu" "$root/usr/share/memfleet/agents/arm64-v8a/memfleet-agent"

# The extracted server takes the agent the extracted CLI deploys from where the package put it.
"$root/usr/bin/memfleet-server" --listen 127.0.0.1:0 --db "$work/memfleet.db" >"$work/server.log" 2>&1 &
server_pid=$!
address=""
for _ in $(seq 1 600); do
  address=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$work/server.log" | head -n 1)
  [ -n "$address" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$address" ] || { cat "$work/server.log"; echo "FAIL: the extracted memfleet-server did not listen" >&2; exit 1; }
mkdir -p "$work/phones/emulator-5554"
printf 'ro.product.cpu.abi=x86_64\nro.debuggable=1\n' >"$work/phones/emulator-5554/props"
export ADB="$repo/tests/support/fake_adb/adb" MEMFLEET_FAKE_ADB_PHONES="$work/phones"
unset MEMFLEET_SERVER MEMFLEET_TOKEN MEMFLEET_CA_CERT
(cd "$work" && "$root/usr/bin/memfleet" agents deploy --all --server-port "${address##*:}" --insecure-no-tokens \
  --interval 3600 --confirm-timeout 120) >"$work/deploy.log" 2>&1 || fail "deploy from the extracted CLI: $(cat "$work/deploy.log")"
grep -q '1 of 1 phones running an agent' "$work/deploy.log" || fail "deploy: $(cat "$work/deploy.log")"
cmp -s "$work/phones/emulator-5554/data/local/tmp/memfleet/memfleet-agent" \
  "$root/usr/share/memfleet/agents/x86_64/memfleet-agent" || fail "the phone did not get the packaged x86_64 agent"
"$root/usr/bin/memfleet" agents stop --all >"$work/stop.log" 2>&1 || fail "agents stop: $(cat "$work/stop.log")"

if [ "$failures" -ne 0 ]; then echo "--- server ---"; cat "$work/server.log"; exit 1; fi
echo "3 packages: contents, control, conffiles, users, --version and a deploy from the extracted tree: passed"
