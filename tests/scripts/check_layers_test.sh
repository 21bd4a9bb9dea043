#!/usr/bin/env bash
# scripts/check-layers passes on the repository and fails on a tree where the agent includes the engine,
# the engine includes gRPC, or storage includes the server: the check must be able to fail.
set -euo pipefail
repo="$1"
checker="$repo/scripts/check-layers"
"$checker" "$repo" >/dev/null
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
plant() {  # plant FILE INCLUDE-LINE: one violation; the checker must fail and name it
  rm -rf "$tree"/*
  mkdir -p "$tree/$(dirname "$1")"
  printf '%s\n' "$2" >"$tree/$1"
  if out="$("$checker" "$tree")"; then
    echo "check-layers passed a tree where $1 has: $2" >&2
    exit 1
  fi
  grep -qF "$1:1:" <<<"$out" || { echo "check-layers did not name $1: $out" >&2; exit 1; }
}
plant agent/collector.cc '#include "server/accounting/account.h"'
plant server/accounting/account.cc '#include <grpcpp/grpcpp.h>'
plant storage/sqlite_store.cc '#include "server/lab_server.h"'
plant storage/sqlite_store.cc '#include <libpq-fe.h>'
plant storage/postgres/pg_store.cc '#include "server/lab_server.h"'
plant capture/capture.cc '#include "report/report.h"'
plant proto/capture_codec.cc '#include "storage/store.h"'
# And a tree that keeps its layers passes.
rm -rf "$tree"/*
mkdir -p "$tree/agent"
printf '#include "capture/capture.h"\n#include "absl/status/status.h"\n' >"$tree/agent/collector.cc"
"$checker" "$tree" >/dev/null
echo "check-layers: fails on each planted crossing, passes the repository"
