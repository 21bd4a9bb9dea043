// The tier of each stored capture (docs/accounting.md section 9), on both backends (SQLite, PostgreSQL):
// every capture keeps the tier of the report the engine made of it, the device shows its latest capture's
// (a phone rooted later changes tier, a late capture of before does not move it back, a re-accounted report
// does), the tier its agent said in Hello is kept apart, and a database of the previous schema (SQLite 19,
// PostgreSQL 7) migrates with its captures' tier unknown, never guessed; the sweep a capture answered is read
// back with its report too. The reports are the fixtures'
// expected.json: shield-shell's is of the dumpsys tier, qcom-sm8450's (written before tiers) the kernel's.
#include <sqlite3.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/figure_tier.h"
#include "gtest/gtest.h"
#include "report/report_json.h"
#include "storage/postgres/pg_connection.h"
#include "storage/postgres/pg_schema.h"
#include "storage/sqlite/migration_functions.h"
#include "storage/sqlite/schema.h"
#include "storage/sqlite/sqlite_db.h"
#include "storage/store.h"
#include "tests/support/store_backends.h"
#include "tests/support/test_data.h"

namespace memfleet::storage {
namespace {

// The fixture's report; its own JSON is what the store keeps.
CaptureRecord CaptureOf(const std::string& expected_json, const std::string& device_id, const std::string& id,
                        const std::string& at) {
  const std::string text = testing::ReadTestData(expected_json);
  absl::StatusOr<report::Report> parsed = report::ReportFromJson(text);
  EXPECT_TRUE(parsed.ok()) << expected_json << ": " << parsed.status();
  CaptureRecord c;
  c.device_id = device_id;
  c.capture_id = id;
  c.captured_at = at;
  c.raw_codec = "zstd+proto";
  c.raw_blob = "raw";
  c.raw_bytes = 3;
  if (parsed.ok()) c.report = *parsed;
  c.report.device_id = device_id;
  c.report.captured_at = at;
  c.report_json = report::ReportToJson(c.report, -1);
  return c;
}

constexpr char kShellReport[] = "captures-shell/shield-shell/expected.json";
constexpr char kRootReport[] = "captures/qcom-sm8450/expected.json";

DeviceRecord HelloWithAgentTier(const std::string& device_id, const std::string& agent_tier) {
  DeviceRecord d;
  d.device_id = device_id;
  d.model = "SHIELD Android TV";
  d.last_seen_at = "2026-12-05T09:00:00.000Z";
  d.agent_tier = agent_tier;
  return d;
}

class CaptureTierTest : public testing::StoreOnBackendTest {
 protected:
  void Put(const CaptureRecord& c) {
    absl::StatusOr<bool> stored = store_->PutCapture(c);
    ASSERT_TRUE(stored.ok() && *stored) << stored.status();
  }

  // device id -> "tier/agent_tier" as ListDevices gives them.
  std::map<std::string, std::string> Tiers() {
    absl::StatusOr<std::vector<DeviceSummaryRow>> rows = store_->ListDevices();
    EXPECT_TRUE(rows.ok()) << rows.status();
    std::map<std::string, std::string> tiers;
    for (const DeviceSummaryRow& row : rows.ok() ? *rows : std::vector<DeviceSummaryRow>()) {
      tiers[row.device.device_id] = row.device.tier + "/" + row.device.agent_tier;
    }
    return tiers;
  }

  // The tier GetReportByCapture gives with the capture's report.
  std::string StoredTierOf(const std::string& capture_id) {
    absl::StatusOr<std::optional<StoredReport>> report = store_->GetReportByCapture(capture_id);
    EXPECT_TRUE(report.ok() && report->has_value()) << capture_id << ": " << report.status();
    return report.ok() && report->has_value() ? (*report)->tier : "(none)";
  }
};

TEST_P(CaptureTierTest, EachDeviceShowsItsLatestCapturesTierAndItsAgentsApart) {
  ASSERT_TRUE(store_->UpsertDevice(HelloWithAgentTier("shell-phone", kTierDumpsys)).ok());
  ASSERT_TRUE(store_->UpsertDevice(HelloWithAgentTier("root-phone", kTierKernel)).ok());
  ASSERT_TRUE(store_->UpsertDevice(HelloWithAgentTier("old-agent", "")).ok());
  // No capture yet: the tier of the figures is unknown, whatever the agent said.
  EXPECT_EQ(Tiers(), (std::map<std::string, std::string>{
                         {"old-agent", "/"}, {"root-phone", "/kernel"}, {"shell-phone", "/dumpsys"}}));

  Put(CaptureOf(kShellReport, "shell-phone", "shell-1", "2026-12-05T10:00:00.000Z"));
  Put(CaptureOf(kRootReport, "root-phone", "root-1", "2026-12-05T10:00:00.000Z"));
  Put(CaptureOf(kRootReport, "old-agent", "old-1", "2026-12-05T10:00:00.000Z"));
  EXPECT_EQ(Tiers(),
            (std::map<std::string, std::string>{
                {"old-agent", "kernel/"}, {"root-phone", "kernel/kernel"}, {"shell-phone", "dumpsys/dumpsys"}}));
  // A report read back carries the tier stored with it (what `memfleet report` heads its table with).
  EXPECT_EQ(StoredTierOf("shell-1"), "dumpsys");
  EXPECT_EQ(StoredTierOf("root-1"), "kernel");

  // The shell phone is rooted: its next capture is of the kernel tier, and a capture of before that
  // arrives late (a spooled backlog) does not move the device back.
  Put(CaptureOf(kRootReport, "shell-phone", "shell-2", "2026-12-05T11:00:00.000Z"));
  Put(CaptureOf(kShellReport, "shell-phone", "shell-0", "2026-12-05T09:30:00.000Z"));
  EXPECT_EQ(Tiers()["shell-phone"], "kernel/dumpsys");
  // A Hello does not change the figures' tier; the agent's is its latest Hello's.
  ASSERT_TRUE(store_->UpsertDevice(HelloWithAgentTier("shell-phone", kTierKernel)).ok());
  EXPECT_EQ(Tiers()["shell-phone"], "kernel/kernel");

  // Re-accounting replaces a report and its tier with it.
  const CaptureRecord shell = CaptureOf(kShellReport, "root-phone", "root-1", "2026-12-05T10:00:00.000Z");
  ASSERT_TRUE(store_->ReplaceReport("root-1", shell.report, shell.report_json).ok());
  EXPECT_EQ(Tiers()["root-phone"], "dumpsys/kernel");
  EXPECT_EQ(StoredTierOf("root-1"), "dumpsys");

  Reopen();
  EXPECT_EQ(Tiers(),
            (std::map<std::string, std::string>{
                {"old-agent", "kernel/"}, {"root-phone", "dumpsys/kernel"}, {"shell-phone", "kernel/kernel"}}));
}

// The process both fixtures have: qcom-sm8450 names it by its path, the shell text by its base name; the
// shell report's is renamed as its kernel-tier report names it, so that one history holds both.
constexpr char kSurfaceflinger[] = "/system/bin/surfaceflinger";

CaptureRecord WithSurfaceflingerNamed(CaptureRecord c) {
  for (auto& [pid, p] : c.report.processes) {
    if (p.name == "surfaceflinger") p.name = kSurfaceflinger;
  }
  c.report_json = report::ReportToJson(c.report, -1);
  return c;
}

std::optional<int64_t> SurfaceflingerTotalOf(const CaptureRecord& c) {
  for (const auto& [pid, p] : c.report.processes) {
    if (p.name == kSurfaceflinger) return p.total_kb;
  }
  return std::nullopt;
}

// A phone rooted later: each point of its history, the device's figures and a process's alike, carries the
// tier stored with its capture (what `memfleet trend` and the dashboard mark where it changes).
TEST_P(CaptureTierTest, HistoryPointsCarryTheTierOfTheirCapture) {
  const CaptureRecord shell_1 =
      WithSurfaceflingerNamed(CaptureOf(kShellReport, "rooted-later", "rl-1", "2026-12-05T09:00:00.000Z"));
  const CaptureRecord shell_2 =
      WithSurfaceflingerNamed(CaptureOf(kShellReport, "rooted-later", "rl-2", "2026-12-05T10:00:00.000Z"));
  const CaptureRecord rooted = CaptureOf(kRootReport, "rooted-later", "rl-3", "2026-12-05T11:00:00.000Z");
  for (const CaptureRecord* c : {&shell_1, &shell_2, &rooted}) Put(*c);
  ASSERT_TRUE(SurfaceflingerTotalOf(shell_1).has_value() && SurfaceflingerTotalOf(rooted).has_value());

  absl::StatusOr<std::vector<HistoryRow>> device = store_->DeviceHistory("rooted-later", "total_kb", "", 0);
  ASSERT_TRUE(device.ok()) << device.status();
  ASSERT_EQ(device->size(), 3u);
  const std::vector<std::string> expected_tiers = {"dumpsys", "dumpsys", "kernel"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*device)[i].tier, expected_tiers[i]) << i;
    EXPECT_EQ((*device)[i].value_kb, (i < 2 ? shell_1 : rooted).report.device.total_kb) << i;
  }

  absl::StatusOr<std::vector<HistoryRow>> process =
      store_->ProcessHistory("rooted-later", kSurfaceflinger, "total_kb", "", 0);
  ASSERT_TRUE(process.ok()) << process.status();
  ASSERT_EQ(process->size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*process)[i].tier, expected_tiers[i]) << i;
    EXPECT_EQ((*process)[i].value_kb, SurfaceflingerTotalOf(i < 2 ? shell_1 : rooted)) << i;
  }
  // The newest points only (a limit): each still carries its own tier.
  process = store_->ProcessHistory("rooted-later", kSurfaceflinger, "total_kb", "", 2);
  ASSERT_TRUE(process.ok() && process->size() == 2u) << process.status();
  EXPECT_EQ((*process)[0].tier, "dumpsys");
  EXPECT_EQ((*process)[1].tier, "kernel");
}

// The sweep a capture answered is read back with its report as its tier is: what lets `memfleet report`
// head a capture with its sweep as `trend` and the dashboard mark it. A periodic capture has none ("").
TEST_P(CaptureTierTest, EveryReadOfAReportCarriesTheSweepItsCaptureAnswered) {
  ASSERT_TRUE(store_->UpsertDevice(HelloWithAgentTier("lab-a", kTierKernel)).ok());
  Put(CaptureOf(kRootReport, "lab-a", "periodic-1", "2026-12-05T10:00:00.000Z"));
  CaptureRecord swept = CaptureOf(kRootReport, "lab-a", "swept-1", "2026-12-05T11:00:00.000Z");
  swept.sweep_id = "sw-42";
  Put(swept);
  // "capture_id/sweep_id" of a read's report, "(none)" when it found none.
  const auto of = [](const absl::StatusOr<std::optional<StoredReport>>& read) {
    EXPECT_TRUE(read.ok()) << read.status();
    return read.ok() && read->has_value() ? (*read)->capture_id + "/" + (*read)->sweep_id : std::string("(none)");
  };
  for (int pass = 0; pass < 2; ++pass) {
    SCOPED_TRACE(pass == 0 ? "as stored" : "reopened");
    EXPECT_EQ(of(store_->GetReport("lab-a", "")), "swept-1/sw-42");
    EXPECT_EQ(of(store_->GetReport("lab-a", "2026-12-05T10:30:00.000Z")), "periodic-1/");
    EXPECT_EQ(of(store_->GetReportByCapture("swept-1")), "swept-1/sw-42");
    EXPECT_EQ(of(store_->GetReportByCapture("periodic-1")), "periodic-1/");
    absl::StatusOr<std::vector<StoredReport>> of_sweep = store_->LatestReportsOfSweep("sw-42");
    ASSERT_TRUE(of_sweep.ok()) << of_sweep.status();
    ASSERT_EQ(of_sweep->size(), 1u);
    EXPECT_EQ((*of_sweep)[0].sweep_id, "sw-42");
    Reopen();
  }
}

// ---- a database of the previous schema ----

// A device and one capture as the previous schema (SQLite 19, PostgreSQL 7: the same tables) stored them,
// with no tier anywhere. `blob` is the backend's literal of a one-byte blob.
std::string PreviousSchemaRows(const std::string& blob) {
  return "INSERT INTO devices (device_id, model, last_seen_at, access) VALUES ('old-phone', 'Pixel 8', "
         "'2026-11-30T08:00:00.000Z', 'shell');"
         "INSERT INTO captures (capture_id, device_id, captured_at, raw_codec, raw_blob) VALUES ('old-1', "
         "'old-phone', '2026-11-30T08:00:00.000Z', 'zstd+proto', " +
         blob +
         ");"
         "INSERT INTO device_reports (capture_id, device_id, captured_at, platform, total_kb) VALUES ('old-1', "
         "'old-phone', '2026-11-30T08:00:00.000Z', 'generic', 966011);";
}

constexpr char kUnknownTierCountSql[] = "SELECT COUNT(*) FROM device_reports WHERE tier IS NULL";

// Writes the previous schema and its rows at `location` (a fatal failure when it cannot).
void WritePreviousSchema(testing::StoreBackend backend, const std::string& location) {
  if (backend == testing::StoreBackend::kSqlite) {
    absl::StatusOr<SqliteDb> db = SqliteDb::Open(location, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(RegisterMigrationFunctions(*db).ok());  // migrations 14, 16 and 19 name them
    ASSERT_TRUE(
        db->Exec(
              "CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT; INSERT INTO schema_version VALUES (19)")
            .ok());
    for (int v = 0; v < 19; ++v) ASSERT_TRUE(db->Exec(Migrations()[static_cast<size_t>(v)]).ok()) << v;
    absl::Status rows = db->Exec(PreviousSchemaRows("x'00'"));
    ASSERT_TRUE(rows.ok()) << rows;
    return;
  }
  absl::StatusOr<std::unique_ptr<PgConnection>> db = PgConnection::Connect(location);
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE(MigratePgTo(**db, 7).ok());
  absl::Status rows = (*db)->Exec(PreviousSchemaRows("decode('00', 'hex')"));
  ASSERT_TRUE(rows.ok()) << rows;
}

int64_t CountAt(testing::StoreBackend backend, const std::string& location, const char* sql) {
  if (backend == testing::StoreBackend::kSqlite) {
    absl::StatusOr<SqliteDb> db = SqliteDb::Open(location, SQLITE_OPEN_READONLY);
    EXPECT_TRUE(db.ok()) << db.status();
    if (!db.ok()) return -1;
    absl::StatusOr<Statement> st = db->Prepare(sql);
    EXPECT_TRUE(st.ok()) << st.status();
    if (!st.ok()) return -1;
    absl::StatusOr<StepResult> r = st->Step();
    return r.ok() && *r == StepResult::kRow ? st->ColumnInt64(0) : -1;
  }
  absl::StatusOr<std::unique_ptr<PgConnection>> db = PgConnection::Connect(location);
  EXPECT_TRUE(db.ok()) << db.status();
  if (!db.ok()) return -1;
  absl::StatusOr<std::optional<int64_t>> n =
      QueryFirst(**db, sql, {}, [](const SqlRow& row) { return row.ColumnInt64(0); });
  EXPECT_TRUE(n.ok()) << n.status();
  return n.ok() && n->has_value() ? **n : -1;
}

class PreviousSchemaTierTest : public ::testing::TestWithParam<testing::StoreBackend> {
 protected:
  testing::TempDir dir_{"memfleet_tier_migration"};
};

TEST_P(PreviousSchemaTierTest, StoredCapturesMigrateWithTheirTierUnknownAndNewOnesCarryIt) {
  ASSERT_FALSE(dir_.path().empty());
  const std::string location = testing::NewStoreLocation(GetParam(), dir_.path());
  ASSERT_FALSE(location.empty());
  WritePreviousSchema(GetParam(), location);
  if (HasFatalFailure()) return;

  std::unique_ptr<Store> store = testing::OpenStoreAt(location);
  ASSERT_NE(store, nullptr);
  absl::StatusOr<std::vector<DeviceSummaryRow>> rows = store->ListDevices();
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  // The data is kept; the tier of what was stored before is not known here (its report says it, and
  // `memfleet-server --reaccount` stores it): unknown, not the kernel tier by default. Its agent has not said.
  EXPECT_EQ((*rows)[0].device.access, "shell");
  EXPECT_EQ((*rows)[0].last_total_kb, std::optional<int64_t>(966011));
  EXPECT_EQ((*rows)[0].device.tier, "");
  EXPECT_EQ((*rows)[0].device.agent_tier, "");
  EXPECT_EQ(CountAt(GetParam(), location, kUnknownTierCountSql), 1);

  absl::StatusOr<bool> stored =
      store->PutCapture(CaptureOf(kShellReport, "old-phone", "new-1", "2026-12-05T10:00:00.000Z"));
  ASSERT_TRUE(stored.ok() && *stored) << stored.status();
  rows = store->ListDevices();
  ASSERT_TRUE(rows.ok() && rows->size() == 1u) << rows.status();
  EXPECT_EQ((*rows)[0].device.tier, "dumpsys");
  EXPECT_EQ(CountAt(GetParam(), location, kUnknownTierCountSql), 1);  // the old capture stays unknown
  // Its history says so point by point: unknown ("") for the old capture, the new one's tier after it.
  absl::StatusOr<std::vector<HistoryRow>> history = store->DeviceHistory("old-phone", "total_kb", "", 0);
  ASSERT_TRUE(history.ok() && history->size() == 2u) << history.status();
  EXPECT_EQ((*history)[0].tier, "");
  EXPECT_EQ((*history)[1].tier, "dumpsys");
}

INSTANTIATE_TEST_SUITE_P(Backends, CaptureTierTest, testing::kBothBackends, testing::StoreBackendName);
INSTANTIATE_TEST_SUITE_P(Backends, PreviousSchemaTierTest, testing::kBothBackends, testing::StoreBackendName);

}  // namespace
}  // namespace memfleet::storage
