// Labels in the store (docs/labels.md), on both backends (SQLite, PostgreSQL): written with their capture
// in one transaction, looked up by (key, value) from their source (a sweep's or the agent's), read back per
// capture by source; on SQLite also through the index, kept by the migration from version 12, and deleted
// with their capture.
#include <sqlite3.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "report/report.h"
#include "storage/sqlite/schema.h"
#include "storage/sqlite/sqlite_db.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/store_backends.h"
#include "tests/support/temp_dir.h"

namespace memfleet::storage {
namespace {

using memfleet::testing::TempDir;

// A capture whose sweep gave it `labels` (and whose agent gave it `agent_labels`).
CaptureRecord MakeCapture(const std::string& capture_id, const std::string& device_id, const std::string& captured_at,
                          int64_t total_kb, const Labels& labels, const Labels& agent_labels = {}) {
  CaptureRecord c;
  c.capture_id = capture_id;
  c.device_id = device_id;
  c.captured_at = captured_at;
  c.received_at = captured_at;
  c.raw_codec = "gzip+proto";
  c.raw_blob = "blob-" + capture_id;
  c.raw_bytes = 4096;
  c.report.platform = report::Platform::kQcom;
  c.report.device_id = device_id;
  c.report.captured_at = captured_at;
  c.report.device.total_kb = total_kb;
  report::ProcessReport p;
  p.pid = 100;
  p.name = "surfaceflinger";
  p.total_kb = total_kb / 10;
  c.report.processes[100] = p;
  c.report_json = "{\"capture\":\"" + capture_id + "\"}";
  c.labels.sweep = labels;
  c.labels.agent = agent_labels;
  return c;
}

std::vector<std::string> Ids(const std::vector<LabelledCapture>& captures) {
  std::vector<std::string> ids;
  for (const LabelledCapture& c : captures) ids.push_back(c.capture_id);
  return ids;
}

class CaptureLabelsTest : public testing::StoreOnBackendTest {
 protected:
  void Put(const CaptureRecord& c) {
    absl::StatusOr<bool> inserted = store_->PutCapture(c);
    ASSERT_TRUE(inserted.ok()) << inserted.status();
    ASSERT_TRUE(*inserted) << c.capture_id;
  }
  // The captures carrying `labels` from a sweep and `agent_labels` from their agent.
  std::vector<std::string> Carrying(const Labels& labels, const Labels& agent_labels = {}) {
    absl::StatusOr<std::vector<LabelledCapture>> captures = store_->LabelledCaptures(LabelSet{labels, agent_labels});
    EXPECT_TRUE(captures.ok()) << captures.status();
    return captures.ok() ? Ids(*captures) : std::vector<std::string>{"error"};
  }
};

// What only SQLite shows: its file read directly, its query plans.
class SqliteCaptureLabelsTest : public CaptureLabelsTest {};

TEST_P(CaptureLabelsTest, CapturesCarryingEveryLabelComeByDeviceNewestFirst) {
  Put(MakeCapture("a-1", "dev-a", "2026-12-01T10:00:00.000Z", 1000, {{"run", "1234"}, {"suite", "camera"}}));
  Put(MakeCapture("a-2", "dev-a", "2026-12-01T11:00:00.000Z", 2000, {{"run", "1235"}, {"suite", "camera"}}));
  Put(MakeCapture("a-3", "dev-a", "2026-12-01T12:00:00.000Z", 3000, {}));
  Put(MakeCapture("b-1", "dev-b", "2026-12-01T09:00:00.000Z", 4000, {{"run", "1234"}}));
  Put(MakeCapture("b-2", "dev-b", "2026-12-01T09:30:00.000Z", 5000, {{"run", "1234"}, {"rack", "7"}}));

  EXPECT_EQ(Carrying({{"run", "1234"}}), (std::vector<std::string>{"a-1", "b-2", "b-1"}));
  EXPECT_EQ(Carrying({{"suite", "camera"}}), (std::vector<std::string>{"a-2", "a-1"}));
  EXPECT_EQ(Carrying({{"run", "1234"}, {"suite", "camera"}}), (std::vector<std::string>{"a-1"}));
  EXPECT_EQ(Carrying({{"run", "1234"}, {"rack", "7"}}), (std::vector<std::string>{"b-2"}));
  EXPECT_TRUE(Carrying({{"run", "9999"}}).empty());
  // A value is matched whole: no prefix, no case folding.
  EXPECT_TRUE(Carrying({{"run", "123"}}).empty());
  EXPECT_TRUE(Carrying({{"suite", "Camera"}}).empty());
  EXPECT_EQ(store_->LabelledCaptures(LabelSet{}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(CaptureLabelsTest, ASweepsLabelsAndAnAgentsAreKeptApartAndLookedUpFromTheirSource) {
  Put(MakeCapture("a-1", "dev-a", "2026-12-01T10:00:00.000Z", 1000, {{"run", "R1"}}, {{"rack", "7"}}));
  // Another device's agent writing the run's label into its own header.
  Put(MakeCapture("b-1", "dev-b", "2026-12-01T10:01:00.000Z", 2000, {}, {{"run", "R1"}}));
  EXPECT_EQ(Carrying({{"run", "R1"}}), (std::vector<std::string>{"a-1"}));
  EXPECT_EQ(Carrying({}, {{"run", "R1"}}), (std::vector<std::string>{"b-1"}));
  EXPECT_EQ(Carrying({{"run", "R1"}}, {{"rack", "7"}}), (std::vector<std::string>{"a-1"}));
  EXPECT_TRUE(Carrying({{"rack", "7"}}).empty());
  EXPECT_TRUE(Carrying({{"run", "R1"}}, {{"run", "R1"}}).empty());

  absl::StatusOr<LabelSet> a = store_->CaptureLabels("a-1");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->sweep, (Labels{{"run", "R1"}}));
  EXPECT_EQ(a->agent, (Labels{{"rack", "7"}}));
  absl::StatusOr<LabelSet> b = store_->CaptureLabels("b-1");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(b->sweep.empty());
  EXPECT_EQ(b->agent, (Labels{{"run", "R1"}}));

  // A key from both sources is the caller's mistake (the sweep's value wins before the store): refused,
  // nothing stored.
  absl::StatusOr<bool> both = store_->PutCapture(
      MakeCapture("a-2", "dev-a", "2026-12-01T11:00:00.000Z", 1000, {{"run", "R1"}}, {{"run", "R0"}}));
  EXPECT_EQ(both.status().code(), absl::StatusCode::kInvalidArgument) << both.status();
  absl::StatusOr<bool> stored = store_->HasCapture("a-2");
  ASSERT_TRUE(stored.ok());
  EXPECT_FALSE(*stored);
}

TEST_P(CaptureLabelsTest, LabelledCaptureRowsCarryTheirTimeAndDevice) {
  CaptureRecord c = MakeCapture("a-1", "dev-a", "2026-12-01T10:00:00.000Z", 1000, {{"run", "1234"}});
  c.sweep_id = "sweep-1";
  c.build_fingerprint = "google/a/b:14/X/1:user/release-keys";
  Put(c);
  absl::StatusOr<std::vector<LabelledCapture>> rows = store_->LabelledCaptures(LabelSet{{{"run", "1234"}}, {}});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].device_id, "dev-a");
  EXPECT_EQ((*rows)[0].captured_at, "2026-12-01T10:00:00.000Z");
  EXPECT_EQ((*rows)[0].sweep_id, "sweep-1");
  EXPECT_EQ((*rows)[0].build_fingerprint, "google/a/b:14/X/1:user/release-keys");
}

// A device's history says of each capture what `memfleet report` heads it with: the sweep it answered and
// its labels by source; a periodic capture without labels, nothing. A limit keeps the newest captures, and
// their labels only (another device's labelled capture at the same time is not among them).
TEST_P(CaptureLabelsTest, DeviceHistoryCarriesEachCapturesSweepAndLabels) {
  Put(MakeCapture("a-1", "dev-a", "2026-12-01T09:00:00.000Z", 900, {{"run", "1233"}}));
  Put(MakeCapture("a-2", "dev-a", "2026-12-01T10:00:00.000Z", 1000, {}));
  CaptureRecord swept = MakeCapture("a-3", "dev-a", "2026-12-01T11:00:00.000Z", 2000,
                                    {{"run", "1234"}, {"suite", "camera"}}, {{"rack", "7"}});
  swept.sweep_id = "sweep-1";
  Put(swept);
  Put(MakeCapture("a-4", "dev-a", "2026-12-01T12:00:00.000Z", 3000, {}, {{"rack", "8"}}));
  Put(MakeCapture("b-1", "dev-b", "2026-12-01T11:00:00.000Z", 4000, {{"run", "other"}}));

  absl::StatusOr<std::vector<HistoryRow>> rows = store_->DeviceHistory("dev-a", "total_kb", "", 3);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  const HistoryRow& periodic = (*rows)[0];
  const HistoryRow& sweep = (*rows)[1];
  const HistoryRow& agent = (*rows)[2];
  EXPECT_EQ(periodic.capture_id, "a-2");
  EXPECT_EQ(periodic.sweep_id, "");
  EXPECT_TRUE(periodic.labels.empty());
  EXPECT_EQ(sweep.capture_id, "a-3");
  EXPECT_EQ(sweep.value_kb, 2000);
  EXPECT_EQ(sweep.sweep_id, "sweep-1");
  EXPECT_EQ(sweep.labels.sweep, (Labels{{"run", "1234"}, {"suite", "camera"}}));
  EXPECT_EQ(sweep.labels.agent, (Labels{{"rack", "7"}}));
  EXPECT_EQ(agent.capture_id, "a-4");
  EXPECT_EQ(agent.sweep_id, "");
  EXPECT_TRUE(agent.labels.sweep.empty());
  EXPECT_EQ(agent.labels.agent, (Labels{{"rack", "8"}}));

  absl::StatusOr<std::vector<HistoryRow>> all = store_->DeviceHistory("dev-a", "total_kb", "", 0);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 4u);
  EXPECT_EQ(all->front().labels.sweep, (Labels{{"run", "1233"}}));
}

// A process's history carries its captures' marks as the device's does: each point its capture's sweep
// and labels, also a capture's second pid of the name, and also with a limit that starts mid-history.
TEST_P(CaptureLabelsTest, ProcessHistoryCarriesEachCapturesSweepAndLabels) {
  Put(MakeCapture("a-1", "dev-a", "2026-12-01T09:00:00.000Z", 900, {{"run", "1233"}}));
  CaptureRecord swept = MakeCapture("a-2", "dev-a", "2026-12-01T10:00:00.000Z", 2000,
                                    {{"run", "1234"}, {"suite", "camera"}}, {{"rack", "7"}});
  swept.sweep_id = "sweep-1";
  report::ProcessReport twin = swept.report.processes[100];
  twin.pid = 101;
  twin.total_kb = 7;
  swept.report.processes[101] = twin;
  Put(swept);
  Put(MakeCapture("a-3", "dev-a", "2026-12-01T11:00:00.000Z", 3000, {}, {{"rack", "8"}}));
  Put(MakeCapture("b-1", "dev-b", "2026-12-01T10:00:00.000Z", 4000, {{"run", "other"}}));

  absl::StatusOr<std::vector<HistoryRow>> rows = store_->ProcessHistory("dev-a", "surfaceflinger", "total_kb", "", 3);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  for (int i : {0, 1}) {
    const HistoryRow& pid = (*rows)[static_cast<size_t>(i)];
    EXPECT_EQ(pid.capture_id, "a-2");
    EXPECT_EQ(pid.pid, 100 + i);
    EXPECT_EQ(pid.sweep_id, "sweep-1");
    EXPECT_EQ(pid.labels.sweep, (Labels{{"run", "1234"}, {"suite", "camera"}}));
    EXPECT_EQ(pid.labels.agent, (Labels{{"rack", "7"}}));
  }
  EXPECT_EQ((*rows)[0].value_kb, 200);
  EXPECT_EQ((*rows)[1].value_kb, 7);
  const HistoryRow& agent = (*rows)[2];
  EXPECT_EQ(agent.capture_id, "a-3");
  EXPECT_EQ(agent.sweep_id, "");
  EXPECT_TRUE(agent.labels.sweep.empty());
  EXPECT_EQ(agent.labels.agent, (Labels{{"rack", "8"}}));

  absl::StatusOr<std::vector<HistoryRow>> all = store_->ProcessHistory("dev-a", "surfaceflinger", "total_kb", "", 0);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 4u);
  EXPECT_EQ(all->front().sweep_id, "");
  EXPECT_EQ(all->front().labels.sweep, (Labels{{"run", "1233"}})) << "a sweep's labels, though no sweep id";
}

TEST_P(CaptureLabelsTest, CaptureLabelsReadBackAndADuplicateKeepsTheFirstLabels) {
  Put(MakeCapture("a-1", "dev-a", "2026-12-01T10:00:00.000Z", 1000, {{"run", "1234"}, {"suite", "camera"}}));
  absl::StatusOr<LabelSet> labels = store_->CaptureLabels("a-1");
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_EQ(labels->sweep, (Labels{{"run", "1234"}, {"suite", "camera"}}));

  // A resend (the same capture id) is a duplicate: nothing of it is written, its labels included.
  absl::StatusOr<bool> again =
      store_->PutCapture(MakeCapture("a-1", "dev-a", "2026-12-01T10:00:00.000Z", 1000, {{"run", "other"}}));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(*again);
  labels = store_->CaptureLabels("a-1");
  ASSERT_TRUE(labels.ok());
  EXPECT_EQ(labels->sweep, (Labels{{"run", "1234"}, {"suite", "camera"}}));

  absl::StatusOr<LabelSet> none = store_->CaptureLabels("not-stored");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_P(CaptureLabelsTest, CaptureFigureReadsOneReportsDeviceOrProcessFigure) {
  Put(MakeCapture("a-1", "dev-a", "2026-12-01T10:00:00.000Z", 1000, {{"run", "1234"}}));
  Put(MakeCapture("a-2", "dev-a", "2026-12-01T11:00:00.000Z", 2000, {}));
  absl::StatusOr<std::optional<int64_t>> total = store_->CaptureFigure("a-1", "total_kb", "");
  ASSERT_TRUE(total.ok()) << total.status();
  EXPECT_EQ(*total, 1000);
  absl::StatusOr<std::optional<int64_t>> process = store_->CaptureFigure("a-1", "total_kb", "surfaceflinger");
  ASSERT_TRUE(process.ok()) << process.status();
  EXPECT_EQ(*process, 100);
  // A null figure, an absent process and an unknown capture are all "no value", never 0.
  absl::StatusOr<std::optional<int64_t>> null_figure = store_->CaptureFigure("a-1", "gcma_kb", "");
  ASSERT_TRUE(null_figure.ok());
  EXPECT_FALSE(null_figure->has_value());
  absl::StatusOr<std::optional<int64_t>> absent = store_->CaptureFigure("a-1", "total_kb", "no-such-process");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  absl::StatusOr<std::optional<int64_t>> unknown = store_->CaptureFigure("zz", "total_kb", "");
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(unknown->has_value());
  // The metric is a whitelisted column name, never SQL.
  EXPECT_EQ(store_->CaptureFigure("a-1", "total_kb; DROP TABLE captures", "").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(SqliteCaptureLabelsTest, LabelsGoWithTheirCapture) {
  Put(MakeCapture("a-1", "dev-a", "2026-12-01T10:00:00.000Z", 1000, {{"run", "1234"}}));
  store_.reset();
  absl::StatusOr<SqliteDb> db = SqliteDb::Open(location_, SQLITE_OPEN_READWRITE);
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE(db->Exec("PRAGMA foreign_keys = ON").ok());
  ASSERT_TRUE(db->Exec("DELETE FROM captures WHERE capture_id = 'a-1'").ok());
  absl::StatusOr<Statement> st = db->Prepare("SELECT COUNT(*) FROM capture_labels");
  ASSERT_TRUE(st.ok());
  absl::StatusOr<StepResult> r = st->Step();
  ASSERT_TRUE(r.ok() && *r == StepResult::kRow);
  EXPECT_EQ(st->ColumnInt64(0), 0);
}

TEST_P(SqliteCaptureLabelsTest, LookupByLabelUsesTheKeyValueIndex) {
  absl::StatusOr<SqliteDb> db = SqliteDb::Open(location_, SQLITE_OPEN_READONLY);
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<Statement> st = db->Prepare(
      "EXPLAIN QUERY PLAN SELECT capture_id FROM capture_labels WHERE key = 'run' AND value = '1234' AND "
      "source = 'sweep'");
  ASSERT_TRUE(st.ok()) << st.status();
  std::string plan;
  for (;;) {
    absl::StatusOr<StepResult> r = st->Step();
    ASSERT_TRUE(r.ok());
    if (*r == StepResult::kDone) break;
    plan += st->ColumnText(3) + "\n";
  }
  EXPECT_NE(plan.find(kCaptureLabelsIndex), std::string::npos) << plan;
  EXPECT_NE(plan.find("source=?"), std::string::npos) << "the source is matched in the index range: " << plan;
}

INSTANTIATE_TEST_SUITE_P(Backends, CaptureLabelsTest, testing::kBothBackends, testing::StoreBackendName);
INSTANTIATE_TEST_SUITE_P(Sqlite, SqliteCaptureLabelsTest, ::testing::Values(testing::StoreBackend::kSqlite),
                         testing::StoreBackendName);

// A database at version 12 (every migration up to it, as a server of that version left it) with a
// capture: the migration to 13 keeps it, and labels work on it at once.
TEST(CaptureLabelsMigrationTest, Version12DatabaseKeepsItsCapturesAndGainsLabels) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir.path() + "/memfleet.db";
  {
    absl::StatusOr<SqliteDb> db = SqliteDb::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(db->Exec("CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT; "
                         "INSERT INTO schema_version (version) VALUES (12)")
                    .ok());
    for (int i = 0; i < 12; ++i) ASSERT_TRUE(db->Exec(Migrations()[static_cast<size_t>(i)]).ok()) << i;
    ASSERT_TRUE(db->Exec("INSERT INTO devices (device_id) VALUES ('dev-a'); "
                         "INSERT INTO captures (capture_id, device_id, captured_at, raw_blob) "
                         "VALUES ('old-1', 'dev-a', '2026-11-01T10:00:00.000Z', x'00')")
                    .ok());
  }
  absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(path);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<bool> kept = (*store)->HasCapture("old-1");
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(*kept);
  absl::StatusOr<LabelSet> old_labels = (*store)->CaptureLabels("old-1");
  ASSERT_TRUE(old_labels.ok()) << old_labels.status();
  EXPECT_TRUE(old_labels->empty());
  absl::StatusOr<bool> put =
      (*store)->PutCapture(MakeCapture("new-1", "dev-a", "2026-12-01T10:00:00.000Z", 1000, {{"run", "1234"}}));
  ASSERT_TRUE(put.ok()) << put.status();
  absl::StatusOr<std::vector<LabelledCapture>> run = (*store)->LabelledCaptures(LabelSet{{{"run", "1234"}}, {}});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(Ids(*run), (std::vector<std::string>{"new-1"}));
}

}  // namespace
}  // namespace memfleet::storage
