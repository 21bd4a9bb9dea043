// PgStore's FleetStore methods (fleet_store.h): sessions and sweep relays, on the writer connection for
// writes and the reader for reads, as the rest of PgStore.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "storage/postgres/pg_connection.h"
#include "storage/postgres/pg_store.h"
#include "storage/postgres/pg_store_internal.h"

namespace memfleet::storage {
namespace {

using pg_store_internal::Connection;

constexpr char kPutSessionSql[] =
    "INSERT INTO sessions (device_id, server_id, connected_at, heartbeat_ms, model, soc, build_fingerprint, kernel, "
    "agent_version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (device_id) DO UPDATE SET "
    "server_id = excluded.server_id, connected_at = excluded.connected_at, heartbeat_ms = excluded.heartbeat_ms, "
    "model = excluded.model, soc = excluded.soc, build_fingerprint = excluded.build_fingerprint, "
    "kernel = excluded.kernel, agent_version = excluded.agent_version";
constexpr char kTouchSessionsSql[] = "UPDATE sessions SET heartbeat_ms = $2 WHERE server_id = $1";
constexpr char kDeleteSessionSql[] = "DELETE FROM sessions WHERE device_id = $1 AND server_id = $2";
constexpr char kLiveSessionsSql[] =
    "SELECT device_id, server_id, connected_at, heartbeat_ms, model, soc, build_fingerprint, kernel, agent_version "
    "FROM sessions WHERE heartbeat_ms >= $1 ORDER BY device_id";

constexpr char kPutRelaySql[] =
    "INSERT INTO sweep_relays (sweep_id, device_id, server_id, labels, state, full_smaps) "
    "VALUES ($1, $2, $3, $4, 'sent', $5) ON CONFLICT (sweep_id, device_id) DO NOTHING";
constexpr char kRelayColumns[] = "sweep_id, device_id, server_id, labels, state, capture_id, message, full_smaps";
// Final states are never left: a late "capturing" cannot undo "stored".
constexpr char kSetRelayStateSql[] =
    "UPDATE sweep_relays SET state = $3, capture_id = CASE WHEN $4 = '' THEN capture_id ELSE $4 END, message = $5 "
    "WHERE sweep_id = $1 AND device_id = $2 AND state IN ('sent', 'capturing')";

// Labels as "key=value" lines: keys hold no '=', values are printable ASCII (docs/labels.md), so neither
// holds a newline.
std::string EncodeLabels(const Labels& labels) {
  std::string text;
  for (const auto& [key, value] : labels) absl::StrAppend(&text, text.empty() ? "" : "\n", key, "=", value);
  return text;
}

Labels DecodeLabels(std::string_view text) {
  Labels labels;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos) labels.emplace(std::string(line.substr(0, eq)), std::string(line.substr(eq + 1)));
  }
  return labels;
}

SessionRecord ReadSession(const PgRow& row) {
  SessionRecord s;
  s.device_id = row.ColumnText(0);
  s.server_id = row.ColumnText(1);
  s.connected_at = row.ColumnText(2);
  s.heartbeat_ms = row.ColumnInt64(3);
  s.model = row.ColumnText(4);
  s.soc = row.ColumnText(5);
  s.build_fingerprint = row.ColumnText(6);
  s.kernel = row.ColumnText(7);
  s.agent_version = row.ColumnText(8);
  return s;
}

SweepRelay ReadRelay(const PgRow& row) {
  SweepRelay r;
  r.sweep_id = row.ColumnText(0);
  r.device_id = row.ColumnText(1);
  r.server_id = row.ColumnText(2);
  r.labels = DecodeLabels(row.ColumnText(3));
  r.state = row.ColumnText(4);
  r.capture_id = row.ColumnText(5);
  r.message = row.ColumnText(6);
  r.full_smaps = row.ColumnText(7) == "t";
  return r;
}

template <typename Read>
auto ReadAll(const PgResult& result, const Read& read) {
  std::vector<decltype(read(result.Row(0)))> rows;
  for (int i = 0; i < result.RowCount(); ++i) rows.push_back(read(result.Row(i)));
  return rows;
}

absl::Status RunOn(Connection& c, std::string_view sql, const std::vector<PgParam>& params) {
  absl::MutexLock lock(&c.mu);
  return c.db.Query(sql, params).status();
}

}  // namespace

absl::Status PgStore::PutSession(const SessionRecord& s) {
  if (s.device_id.empty() || s.server_id.empty()) return absl::InvalidArgumentError("a session needs ids");
  return RunOn(*writer_, kPutSessionSql,
               {PgParam::Text(s.device_id), PgParam::Text(s.server_id), PgParam::Text(s.connected_at),
                PgParam::Int(s.heartbeat_ms), PgParam::Text(s.model), PgParam::Text(s.soc),
                PgParam::Text(s.build_fingerprint), PgParam::Text(s.kernel), PgParam::Text(s.agent_version)});
}

absl::Status PgStore::TouchSessions(const std::string& server_id, int64_t heartbeat_ms) {
  return RunOn(*writer_, kTouchSessionsSql, {PgParam::Text(server_id), PgParam::Int(heartbeat_ms)});
}

absl::Status PgStore::DeleteSession(const std::string& device_id, const std::string& server_id) {
  return RunOn(*writer_, kDeleteSessionSql, {PgParam::Text(device_id), PgParam::Text(server_id)});
}

absl::StatusOr<std::vector<SessionRecord>> PgStore::LiveSessions(int64_t heartbeat_since_ms) {
  Connection& c = *reader_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(PgResult r, c.db.Query(kLiveSessionsSql, {PgParam::Int(heartbeat_since_ms)}));
  return ReadAll(r, ReadSession);
}

absl::Status PgStore::PutSweepRelays(const std::vector<SweepRelay>& relays) {
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(c.db));
  for (const SweepRelay& r : relays) {
    MEMFLEET_RETURN_IF_ERROR(c.db.Query(kPutRelaySql, {PgParam::Text(r.sweep_id), PgParam::Text(r.device_id),
                                                       PgParam::Text(r.server_id),
                                                       PgParam::Text(EncodeLabels(r.labels)),
                                                       PgParam::Text(r.full_smaps ? "true" : "false")})
                                 .status());
  }
  return txn.Commit();
}

absl::StatusOr<std::vector<SweepRelay>> PgStore::TakeSweepRelays(const std::string& server_id) {
  Connection& c = *writer_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(
      PgResult r, c.db.Query(absl::StrCat("UPDATE sweep_relays SET taken = TRUE WHERE server_id = $1 AND NOT taken "
                                          "RETURNING ", kRelayColumns),
                             {PgParam::Text(server_id)}));
  return ReadAll(r, ReadRelay);
}

absl::Status PgStore::SetSweepRelayState(const std::string& sweep_id, const std::string& device_id,
                                         const std::string& state, const std::string& capture_id,
                                         const std::string& message) {
  return RunOn(*writer_, kSetRelayStateSql,
               {PgParam::Text(sweep_id), PgParam::Text(device_id), PgParam::Text(state), PgParam::Text(capture_id),
                PgParam::Text(message)});
}

absl::StatusOr<std::vector<SweepRelay>> PgStore::SweepRelays(const std::string& sweep_id) {
  Connection& c = *reader_;
  absl::MutexLock lock(&c.mu);
  MEMFLEET_ASSIGN_OR_RETURN(
      PgResult r, c.db.Query(absl::StrCat("SELECT ", kRelayColumns, " FROM sweep_relays WHERE sweep_id = $1 "
                                          "ORDER BY device_id"),
                             {PgParam::Text(sweep_id)}));
  return ReadAll(r, ReadRelay);
}

absl::Status PgStore::DeleteSweepRelays(const std::string& sweep_id) {
  return RunOn(*writer_, "DELETE FROM sweep_relays WHERE sweep_id = $1", {PgParam::Text(sweep_id)});
}

}  // namespace memfleet::storage
