#!/usr/bin/env bash
# scripts/check-layers passes on the repository, fails on a tree where any folder with a layer rule
# includes the top of the server (for the server's own root: the tests), fails on classic crossings, and
# fails on code in a folder that has no rule: the check must be able to fail for every folder.
set -euo pipefail
repo="$1"
checker="$repo/scripts/check-layers"
"$checker" "$repo" >/dev/null
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
plant() {  # plant FILE INCLUDE-LINE: one violation; the checker must fail and name it
  rm -rf "${tree:?}"/*
  mkdir -p "$tree/$(dirname "$1")"
  printf '%s\n' "$2" >"$tree/$1"
  if out="$("$checker" "$tree")"; then
    echo "check-layers passed a tree where $1 has: $2" >&2
    exit 1
  fi
  grep -qF "$1:" <<<"$out" || { echo "check-layers did not name $1: $out" >&2; exit 1; }
}
planted=0
while read -r folder kind; do
  [ "$kind" = layer ] || continue
  if [ "$folder" = server ]; then
    plant "$folder/planted.cc" '#include "tests/support/test_server.h"'
  else
    plant "$folder/planted.cc" '#include "server/lab_server.h"'
  fi
  planted=$((planted + 1))
done < <("$checker" --rules)
[ "$planted" -ge 25 ] || { echo "only $planted folders have layer rules" >&2; exit 1; }
# Crossings inside the lower layers, and system headers a pure layer must not reach.
plant agent/reader/collector.cc '#include "accounting/account.h"'
plant accounting/account.cc '#include <grpcpp/grpcpp.h>'
plant accounting/account.cc '#include "storage/store.h"'
plant storage/sqlite/sqlite_store.cc '#include <libpq-fe.h>'
plant storage/postgres/pg_store.cc '#include <sqlite3.h>'
plant storage/sqlite/sqlite_store.cc '#include "storage/postgres/pg_store.h"'
# The one store over both engines reaches neither.
plant storage/sql_store.cc '#include <sqlite3.h>'
plant storage/sql_store.cc '#include "storage/sqlite/sqlite_db.h"'
plant storage/postgres/pg_connection.cc '#include "storage/sqlite/sqlite_db.h"'
plant capture/capture.cc '#include "report/report.h"'
plant proto/capture_codec.cc '#include "storage/store.h"'
plant server/core/clock.cc '#include "server/ingest/agent_stream.h"'
plant server/fleet/fleet_link.cc '#include "server/ingest/agent_stream.h"'
plant server/ingest/agent_stream.cc '#include "server/query/query_service.h"'
plant server/http/metrics/exposition.cc '#include "server/http/metrics_source.h"'
plant cli/commands/report_command.cc '#include "server/query/query_service.h"'
# Code in a folder without a rule of its own is refused, even under a folder that has one.
plant server/newpart/thing.cc '#include "absl/status/status.h"'
plant newtop/thing.h '#include "common/decimal.h"'
# And a tree that keeps its layers passes.
rm -rf "${tree:?}"/*
mkdir -p "$tree/agent/reader" "$tree/tests/anything"
printf '#include "capture/capture.h"\n#include "absl/status/status.h"\n' >"$tree/agent/reader/collector.cc"
printf '#include "server/lab_server.h"\n' >"$tree/tests/anything/x_test.cc"
"$checker" "$tree" >/dev/null
echo "check-layers: fails on a planted crossing in each of $planted folders and on a folder without a rule"
