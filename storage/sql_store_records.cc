// SqlStore's records beside the captures: sweeps (sweep_store.h), tokens (token_store.h), baselines
// (baseline_store.h), and what servers sharing the database tell each other (fleet_store.h).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/sql_store.h"
#include "storage/sql_store_internal.h"
#include "storage/store_rows.h"
#include "storage/timestamp.h"

namespace memfleet::storage {
namespace {

using sql_store_internal::ReadFirstText;

constexpr char kUpsertSweepSql[] =
    "INSERT INTO sweeps (sweep_id, started_at, selector, finished_at, server_id) VALUES (?1, ?2, ?3, ?4, ?5) "
    "ON CONFLICT (sweep_id) DO UPDATE SET started_at = excluded.started_at, selector = excluded.selector, "
    "finished_at = excluded.finished_at, server_id = excluded.server_id";
constexpr char kDeleteSweepDevicesSql[] = "DELETE FROM sweep_devices WHERE sweep_id = ?1";
constexpr char kInsertSweepDeviceSql[] = "INSERT INTO sweep_devices (sweep_id, device_id, state) VALUES (?1, ?2, ?3)";
constexpr char kGetSweepSql[] =
    "SELECT sweep_id, started_at, selector, finished_at, server_id FROM sweeps WHERE sweep_id = ?1";
constexpr char kGetSweepDevicesSql[] = "SELECT device_id, state FROM sweep_devices WHERE sweep_id = ?1";
constexpr char kUnfinishedSweepIdsSql[] = "SELECT sweep_id FROM sweeps WHERE finished_at = '' ORDER BY sweep_id";

constexpr char kPutTokenSql[] =
    "INSERT INTO tokens (name, kind, device_id, sha256, created_at, revoked_at) VALUES (?1, ?2, ?3, ?4, ?5, '')";
constexpr char kFindTokenSql[] =
    "SELECT name, kind, device_id, sha256, created_at, revoked_at FROM tokens WHERE sha256 = ?1";
constexpr char kListTokensSql[] =
    "SELECT name, kind, device_id, sha256, created_at, revoked_at FROM tokens ORDER BY name";
constexpr char kHasTokensSql[] = "SELECT 1 FROM tokens LIMIT 1";
constexpr char kRevokeTokenSql[] = "UPDATE tokens SET revoked_at = ?2 WHERE name = ?1 AND revoked_at = ''";

constexpr char kPutBaselineSql[] =
    "INSERT INTO baselines (name, imported_at, raw_text) VALUES (?1, ?2, ?3) RETURNING version";
constexpr char kGetBaselineSql[] = "SELECT version, name, imported_at, raw_text FROM baselines WHERE version = ?1";
constexpr char kGetLatestBaselineSql[] =
    "SELECT version, name, imported_at, raw_text FROM baselines ORDER BY version DESC LIMIT 1";

constexpr char kPutSessionSql[] =
    "INSERT INTO sessions (device_id, server_id, connected_at, heartbeat_ms, model, soc, build_fingerprint, kernel, "
    "agent_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (device_id) DO UPDATE SET "
    "server_id = excluded.server_id, connected_at = excluded.connected_at, heartbeat_ms = excluded.heartbeat_ms, "
    "model = excluded.model, soc = excluded.soc, build_fingerprint = excluded.build_fingerprint, "
    "kernel = excluded.kernel, agent_version = excluded.agent_version";
constexpr char kTouchSessionsSql[] = "UPDATE sessions SET heartbeat_ms = ?2 WHERE server_id = ?1";
constexpr char kDeleteSessionSql[] = "DELETE FROM sessions WHERE device_id = ?1 AND server_id = ?2";
constexpr char kLiveSessionsSql[] =
    "SELECT device_id, server_id, connected_at, heartbeat_ms, model, soc, build_fingerprint, kernel, agent_version "
    "FROM sessions WHERE heartbeat_ms >= ?1 ORDER BY device_id";

constexpr char kPutServerHeartbeatSql[] =
    "INSERT INTO servers (server_id, heartbeat_ms) VALUES (?1, ?2) "
    "ON CONFLICT (server_id) DO UPDATE SET heartbeat_ms = excluded.heartbeat_ms";
constexpr char kLiveServersSql[] = "SELECT server_id FROM servers WHERE heartbeat_ms >= ?1 ORDER BY server_id";
constexpr char kDeleteIncidentsSql[] = "DELETE FROM server_incidents WHERE server_id = ?1";
constexpr char kInsertIncidentSql[] =
    "INSERT INTO server_incidents (server_id, device_id, refused_streams, refused_facts, future_captures) "
    "VALUES (?1, ?2, ?3, ?4, ?5)";
constexpr char kLiveIncidentsSql[] =
    "SELECT i.server_id, i.device_id, i.refused_streams, i.refused_facts, i.future_captures "
    "FROM server_incidents i JOIN servers s ON s.server_id = i.server_id WHERE s.heartbeat_ms >= ?1 "
    "ORDER BY i.device_id, i.server_id";

constexpr char kPutRelaySql[] =
    "INSERT INTO sweep_relays (sweep_id, device_id, server_id, labels, state, full_smaps) "
    "VALUES (?1, ?2, ?3, ?4, 'sent', ?5) ON CONFLICT (sweep_id, device_id) DO NOTHING";
// A relay's columns (ReadRelay), full_smaps read as 0 or 1, the same on both engines.
constexpr char kTakeRelaysSql[] =
    "UPDATE sweep_relays SET taken = TRUE WHERE server_id = ?1 AND NOT taken RETURNING sweep_id, device_id, "
    "server_id, labels, state, capture_id, message, CASE WHEN full_smaps THEN 1 ELSE 0 END";
// Final states are never left: a late "capturing" cannot undo "stored".
constexpr char kSetRelayStateSql[] =
    "UPDATE sweep_relays SET state = ?3, capture_id = CASE WHEN ?4 = '' THEN capture_id ELSE ?4 END, message = ?5 "
    "WHERE sweep_id = ?1 AND device_id = ?2 AND state IN ('sent', 'capturing')";
constexpr char kSweepRelaysSql[] =
    "SELECT sweep_id, device_id, server_id, labels, state, capture_id, message, CASE WHEN full_smaps THEN 1 ELSE 0 "
    "END FROM sweep_relays WHERE sweep_id = ?1 ORDER BY device_id";
constexpr char kDeleteSweepRelaysSql[] = "DELETE FROM sweep_relays WHERE sweep_id = ?1";

constexpr char kHistoryRowCountsSql[] =
    "SELECT (SELECT COUNT(*) FROM sweeps), (SELECT COUNT(*) FROM sweep_devices), "
    "(SELECT COUNT(*) FROM capture_labels), (SELECT COUNT(*) FROM device_retention)";

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

SessionRecord ReadSession(const SqlRow& row) {
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

SweepRelay ReadRelay(const SqlRow& row) {
  SweepRelay r;
  r.sweep_id = row.ColumnText(0);
  r.device_id = row.ColumnText(1);
  r.server_id = row.ColumnText(2);
  r.labels = DecodeLabels(row.ColumnText(3));
  r.state = row.ColumnText(4);
  r.capture_id = row.ColumnText(5);
  r.message = row.ColumnText(6);
  r.full_smaps = row.ColumnInt64(7) == 1;
  return r;
}

BaselineRecord ReadBaseline(const SqlRow& row) {
  BaselineRecord b;
  b.version = row.ColumnInt64(0);
  b.name = row.ColumnText(1);
  b.imported_at = row.ColumnText(2);
  b.raw_text = row.ColumnText(3);
  return b;
}

}  // namespace

// ---- sweeps ----

absl::Status SqlStore::PutSweep(const SweepRecord& sweep) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(sweep.sweep_id, "sweep_id"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string started_at, NormalizeOptionalTimestamp(sweep.started_at, "started_at"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string finished_at, NormalizeOptionalTimestamp(sweep.finished_at, "finished_at"));
  SqlConnectionPool::Lease db = writers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(SqlTransaction txn, SqlTransaction::Begin(*db));
  MEMFLEET_RETURN_IF_ERROR(db->Send(
      kUpsertSweepSql, {SqlValue::Text(sweep.sweep_id), SqlValue::Text(started_at), SqlValue::Text(sweep.selector),
                        SqlValue::Text(finished_at), SqlValue::Text(sweep.server_id)}));
  // The record is the whole state: a device no longer listed is no longer part of the sweep.
  MEMFLEET_RETURN_IF_ERROR(db->Send(kDeleteSweepDevicesSql, {SqlValue::Text(sweep.sweep_id)}));
  for (const auto& [device_id, state] : sweep.states) {
    MEMFLEET_RETURN_IF_ERROR(db->Send(
        kInsertSweepDeviceSql, {SqlValue::Text(sweep.sweep_id), SqlValue::Text(device_id), SqlValue::Text(state)}));
  }
  return txn.Commit();
}

absl::StatusOr<std::optional<SweepRecord>> SqlStore::GetSweep(const std::string& sweep_id) {
  SqlConnectionPool::Lease db = readers_->Acquire();
  // One snapshot, so the row and its states agree.
  MEMFLEET_ASSIGN_OR_RETURN(SqlTransaction txn, SqlTransaction::Begin(*db, SqlTransactionKind::kSnapshot));
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<SweepRecord> sweep,
                            QueryFirst(*db, kGetSweepSql, {SqlValue::Text(sweep_id)}, [](const SqlRow& row) {
                              SweepRecord record;
                              record.sweep_id = row.ColumnText(0);
                              record.started_at = row.ColumnText(1);
                              record.selector = row.ColumnText(2);
                              record.finished_at = row.ColumnText(3);
                              record.server_id = row.ColumnText(4);
                              return record;
                            }));
  if (!sweep.has_value()) return sweep;
  MEMFLEET_ASSIGN_OR_RETURN(
      auto states, QueryAll(*db, kGetSweepDevicesSql, {SqlValue::Text(sweep_id)},
                            [](const SqlRow& row) { return std::make_pair(row.ColumnText(0), row.ColumnText(1)); }));
  sweep->states.insert(states.begin(), states.end());
  MEMFLEET_RETURN_IF_ERROR(txn.Commit());
  return sweep;
}

absl::StatusOr<std::vector<SweepRecord>> SqlStore::UnfinishedSweeps() {
  std::vector<std::string> ids;
  {
    SqlConnectionPool::Lease db = readers_->Acquire();
    MEMFLEET_ASSIGN_OR_RETURN(ids, QueryAll(*db, kUnfinishedSweepIdsSql, {}, ReadFirstText));
  }
  std::vector<SweepRecord> sweeps;
  for (const std::string& id : ids) {
    MEMFLEET_ASSIGN_OR_RETURN(std::optional<SweepRecord> sweep, GetSweep(id));
    if (sweep.has_value()) sweeps.push_back(*std::move(sweep));
  }
  return sweeps;
}

// ---- tokens ----

absl::Status SqlStore::PutToken(const TokenRecord& token) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(token.name, "token name"));
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(token.sha256_hex, "token hash"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string created_at, NormalizeTimestamp(token.created_at, "created_at"));
  SqlConnectionPool::Lease db = writers_->Acquire();
  absl::Status s = RunSql(*db, kPutTokenSql,
                          {SqlValue::Text(token.name), SqlValue::Text(token.kind), SqlValue::Text(token.device_id),
                           SqlValue::Text(token.sha256_hex), SqlValue::Text(created_at)})
                       .status();
  if (s.code() == absl::StatusCode::kAlreadyExists) {
    return absl::AlreadyExistsError(
        absl::StrCat("a token named \"", token.name, "\" exists already (revoked names stay taken)"));
  }
  if (s.code() == absl::StatusCode::kInvalidArgument) {
    return absl::InvalidArgumentError(absl::StrCat("token kind \"", token.kind, "\" is not agent, read or admin"));
  }
  return s;
}

absl::StatusOr<std::optional<TokenRecord>> SqlStore::FindTokenByHash(const std::string& sha256_hex) {
  SqlConnectionPool::Lease db = readers_->Acquire();
  return QueryFirst(*db, kFindTokenSql, {SqlValue::Text(sha256_hex)}, ReadToken<SqlRow>);
}

absl::StatusOr<std::vector<TokenRecord>> SqlStore::ListTokens() {
  SqlConnectionPool::Lease db = readers_->Acquire();
  return QueryAll(*db, kListTokensSql, {}, ReadToken<SqlRow>);
}

absl::StatusOr<bool> SqlStore::HasTokens() {
  SqlConnectionPool::Lease db = readers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<bool> row,
                            QueryFirst(*db, kHasTokensSql, {}, [](const SqlRow&) { return true; }));
  return row.has_value();
}

absl::StatusOr<bool> SqlStore::RevokeToken(const std::string& name, const std::string& revoked_at) {
  MEMFLEET_ASSIGN_OR_RETURN(std::string at, NormalizeTimestamp(revoked_at, "revoked_at"));
  SqlConnectionPool::Lease db = writers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(int64_t changed, RunSql(*db, kRevokeTokenSql, {SqlValue::Text(name), SqlValue::Text(at)}));
  return changed > 0;
}

// ---- baselines ----

absl::StatusOr<int64_t> SqlStore::PutBaseline(const std::string& name, const std::string& imported_at,
                                              const std::string& raw_text) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(name, "baseline name"));
  MEMFLEET_ASSIGN_OR_RETURN(std::string at, NormalizeTimestamp(imported_at, "imported_at"));
  SqlConnectionPool::Lease db = writers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(
      std::optional<int64_t> version,
      QueryFirst(*db, kPutBaselineSql, {SqlValue::Text(name), SqlValue::Text(at), SqlValue::Text(raw_text)},
                 [](const SqlRow& row) { return row.ColumnInt64(0); }));
  if (!version.has_value()) return absl::InternalError("storing the baseline returned no version");
  return *version;
}

absl::StatusOr<std::optional<BaselineRecord>> SqlStore::GetBaseline(int64_t version) {
  if (version < 0) return absl::InvalidArgumentError("baseline version must be 1 or more (0 = the latest)");
  SqlConnectionPool::Lease db = readers_->Acquire();
  if (version == 0) return QueryFirst(*db, kGetLatestBaselineSql, {}, ReadBaseline);
  return QueryFirst(*db, kGetBaselineSql, {SqlValue::Int(version)}, ReadBaseline);
}

// ---- the fleet of servers sharing the database ----

absl::Status SqlStore::PutSession(const SessionRecord& s) {
  if (s.device_id.empty() || s.server_id.empty()) return absl::InvalidArgumentError("a session needs ids");
  SqlConnectionPool::Lease db = writers_->Acquire();
  return RunSql(*db, kPutSessionSql,
                {SqlValue::Text(s.device_id), SqlValue::Text(s.server_id), SqlValue::Text(s.connected_at),
                 SqlValue::Int(s.heartbeat_ms), SqlValue::Text(s.model), SqlValue::Text(s.soc),
                 SqlValue::Text(s.build_fingerprint), SqlValue::Text(s.kernel), SqlValue::Text(s.agent_version)})
      .status();
}

absl::Status SqlStore::TouchSessions(const std::string& server_id, int64_t heartbeat_ms) {
  SqlConnectionPool::Lease db = writers_->Acquire();
  return RunSql(*db, kTouchSessionsSql, {SqlValue::Text(server_id), SqlValue::Int(heartbeat_ms)}).status();
}

absl::Status SqlStore::DeleteSession(const std::string& device_id, const std::string& server_id) {
  SqlConnectionPool::Lease db = writers_->Acquire();
  return RunSql(*db, kDeleteSessionSql, {SqlValue::Text(device_id), SqlValue::Text(server_id)}).status();
}

absl::Status SqlStore::PutServerHeartbeat(const std::string& server_id, int64_t heartbeat_ms) {
  SqlConnectionPool::Lease db = writers_->Acquire();
  return RunSql(*db, kPutServerHeartbeatSql, {SqlValue::Text(server_id), SqlValue::Int(heartbeat_ms)}).status();
}

absl::StatusOr<std::vector<std::string>> SqlStore::LiveServers(int64_t heartbeat_since_ms) {
  SqlConnectionPool::Lease db = readers_->Acquire();
  return QueryAll(*db, kLiveServersSql, {SqlValue::Int(heartbeat_since_ms)}, ReadFirstText);
}

absl::Status SqlStore::PutIncidents(const std::string& server_id, const std::vector<IncidentRecord>& incidents) {
  if (server_id.empty()) return absl::InvalidArgumentError("incidents need a server id");
  SqlConnectionPool::Lease db = writers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(SqlTransaction txn, SqlTransaction::Begin(*db));
  MEMFLEET_RETURN_IF_ERROR(db->Send(kDeleteIncidentsSql, {SqlValue::Text(server_id)}));
  for (const IncidentRecord& i : incidents) {
    MEMFLEET_RETURN_IF_ERROR(db->Send(
        kInsertIncidentSql,
        {SqlValue::Text(server_id), SqlValue::Text(i.device_id), SqlValue::Int(static_cast<int64_t>(i.refused_streams)),
         SqlValue::Text(i.refused_facts), SqlValue::Int(static_cast<int64_t>(i.future_captures))}));
  }
  return txn.Commit();
}

absl::StatusOr<std::vector<IncidentRecord>> SqlStore::LiveIncidents(int64_t heartbeat_since_ms) {
  SqlConnectionPool::Lease db = readers_->Acquire();
  return QueryAll(*db, kLiveIncidentsSql, {SqlValue::Int(heartbeat_since_ms)}, [](const SqlRow& row) {
    IncidentRecord i;
    i.server_id = row.ColumnText(0);
    i.device_id = row.ColumnText(1);
    i.refused_streams = static_cast<uint64_t>(std::max<int64_t>(0, row.ColumnInt64(2)));
    i.refused_facts = row.ColumnText(3);
    i.future_captures = static_cast<uint64_t>(std::max<int64_t>(0, row.ColumnInt64(4)));
    return i;
  });
}

absl::StatusOr<std::vector<SessionRecord>> SqlStore::LiveSessions(int64_t heartbeat_since_ms) {
  SqlConnectionPool::Lease db = readers_->Acquire();
  return QueryAll(*db, kLiveSessionsSql, {SqlValue::Int(heartbeat_since_ms)}, ReadSession);
}

absl::Status SqlStore::PutSweepRelays(const std::vector<SweepRelay>& relays) {
  SqlConnectionPool::Lease db = writers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(SqlTransaction txn, SqlTransaction::Begin(*db));
  for (const SweepRelay& r : relays) {
    MEMFLEET_RETURN_IF_ERROR(
        db->Send(kPutRelaySql, {SqlValue::Text(r.sweep_id), SqlValue::Text(r.device_id), SqlValue::Text(r.server_id),
                                SqlValue::Text(EncodeLabels(r.labels)), SqlValue::Int(r.full_smaps ? 1 : 0)}));
  }
  return txn.Commit();
}

absl::StatusOr<std::vector<SweepRelay>> SqlStore::TakeSweepRelays(const std::string& server_id) {
  SqlConnectionPool::Lease db = writers_->Acquire();
  return QueryAll(*db, kTakeRelaysSql, {SqlValue::Text(server_id)}, ReadRelay);
}

absl::Status SqlStore::SetSweepRelayState(const std::string& sweep_id, const std::string& device_id,
                                          const std::string& state, const std::string& capture_id,
                                          const std::string& message) {
  SqlConnectionPool::Lease db = writers_->Acquire();
  return RunSql(*db, kSetRelayStateSql,
                {SqlValue::Text(sweep_id), SqlValue::Text(device_id), SqlValue::Text(state), SqlValue::Text(capture_id),
                 SqlValue::Text(message)})
      .status();
}

absl::StatusOr<std::vector<SweepRelay>> SqlStore::SweepRelays(const std::string& sweep_id) {
  SqlConnectionPool::Lease db = readers_->Acquire();
  return QueryAll(*db, kSweepRelaysSql, {SqlValue::Text(sweep_id)}, ReadRelay);
}

absl::Status SqlStore::DeleteSweepRelays(const std::string& sweep_id) {
  SqlConnectionPool::Lease db = writers_->Acquire();
  return RunSql(*db, kDeleteSweepRelaysSql, {SqlValue::Text(sweep_id)}).status();
}

absl::StatusOr<HistoryRowCounts> SqlStore::CountHistoryRows() {
  SqlConnectionPool::Lease db = readers_->Acquire();
  MEMFLEET_ASSIGN_OR_RETURN(std::optional<HistoryRowCounts> counts,
                            QueryFirst(*db, kHistoryRowCountsSql, {}, [](const SqlRow& row) {
                              return HistoryRowCounts{NonNegative(row.ColumnInt64(0)), NonNegative(row.ColumnInt64(1)),
                                                      NonNegative(row.ColumnInt64(2)), NonNegative(row.ColumnInt64(3))};
                            }));
  if (!counts.has_value()) return absl::InternalError("the row counts returned no row");
  return *counts;
}

}  // namespace memfleet::storage
