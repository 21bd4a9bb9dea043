// Schema version 16 (storage/sqlite/schema.cc): the report of a capture stored as a delta of a keyframe is
// stored against the keyframe's report (storage/report_codec.h, CompressReportJsonAgainst). Every read
// answers the JSON stored; re-accounting the keyframe keeps its dependants readable; the keyframe cannot
// go while they stay; a damaged or missing base is DataLoss naming the capture read; a version-15 file
// migrates its deltas' reports and answers what it stored.
#include <sqlite3.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "report/report.h"
#include "report/report_json.h"
#include "storage/report_codec.h"
#include "storage/sqlite/migration_functions.h"
#include "storage/sqlite/schema.h"
#include "storage/sqlite/sqlite_db.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/temp_dir.h"

namespace memfleet::storage {
namespace {

constexpr char kDevice[] = "dev-a";

// A report of 40 processes whose figures move with `seq`, as a device's reports a few minutes apart do.
report::Report ReportAt(int seq) {
  report::Report r;
  r.platform = report::Platform::kQcom;
  r.device_id = kDevice;
  r.device.total_kb = 3'000'000 + seq * 1'111;
  for (int p = 0; p < 40; ++p) {
    report::ProcessReport& pr = r.processes[1000 + p];
    pr.pid = 1000 + p;
    pr.name = p == 0 ? "surfaceflinger" : "com.example.app" + std::to_string(p);
    pr.total_kb = 20'000 + p * 313 + (p % 5 == 0 ? seq * 17 : 0);
    pr.pss_kb = 15'000 + p * 211;
  }
  return r;
}

CaptureRecord CaptureAt(int seq, const std::string& raw_base) {
  CaptureRecord c;
  c.device_id = kDevice;
  c.capture_id = "dev-a-" + std::to_string(seq);
  c.captured_at = "2026-11-30T08:" + std::string(seq < 10 ? "0" : "") + std::to_string(seq) + ":00.000Z";
  c.raw_codec = raw_base.empty() ? "zstd+proto" : "zstd-delta+proto";
  c.raw_blob = "raw";
  c.raw_bytes = 3;
  c.raw_base = raw_base;
  c.report = ReportAt(seq);
  c.report.captured_at = c.captured_at;
  c.report_json = report::ReportToJson(c.report, -1);
  return c;
}

std::string ReportJsonOf(SqlStore& store, const std::string& capture_id) {
  absl::StatusOr<std::optional<StoredReport>> r = store.GetReportByCapture(capture_id);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok() || !r->has_value()) return "(none)";
  return (*r)->report_json;
}

// Reads the file beside the store's own connections: the stored frame and base of a capture's report.
struct StoredFrame {
  std::string report_zstd;
  std::optional<int64_t> base_no;
  int64_t capture_no = 0;
};

class ReportBaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    path_ = dir_.path() + "/memfleet.db";
    Open();
  }

  void Open() {
    store_.reset();
    absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(path_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  // keyframe dev-a-0, deltas dev-a-1 and dev-a-2 of it, keyframe dev-a-3.
  void StoreFour() {
    std::vector<CaptureRecord> captures = {CaptureAt(0, ""), CaptureAt(1, "dev-a-0"), CaptureAt(2, "dev-a-0"),
                                           CaptureAt(3, "")};
    for (const CaptureRecord& c : captures) json_[c.capture_id] = c.report_json;
    absl::StatusOr<std::vector<bool>> stored = store_->PutCaptures(captures);
    ASSERT_TRUE(stored.ok()) << stored.status();
    ASSERT_EQ(*stored, std::vector<bool>(4, true));
  }

  StoredFrame FrameOf(const std::string& capture_id) {
    StoredFrame f;
    absl::StatusOr<SqliteDb> db = SqliteDb::Open(path_, SQLITE_OPEN_READONLY);
    EXPECT_TRUE(db.ok()) << db.status();
    if (!db.ok()) return f;
    absl::StatusOr<Statement> st = db->Prepare(
        "SELECT b.report_zstd, b.base_no, b.capture_no FROM report_blobs AS b JOIN device_reports AS r "
        "ON r.capture_no = b.capture_no WHERE r.capture_id = ?1");
    EXPECT_TRUE(st.ok()) << st.status();
    if (!st.ok() || !st->BindText(1, capture_id).ok()) return f;
    absl::StatusOr<StepResult> row = st->Step();
    EXPECT_TRUE(row.ok() && *row == StepResult::kRow) << capture_id;
    if (!row.ok() || *row != StepResult::kRow) return f;
    f.report_zstd = st->ColumnBlob(0);
    if (!st->ColumnIsNull(1)) f.base_no = st->ColumnInt64(1);
    f.capture_no = st->ColumnInt64(2);
    return f;
  }

  void ExecOnFile(const std::string& sql) {
    absl::StatusOr<SqliteDb> db = SqliteDb::Open(path_, SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(db.ok()) << db.status();
    absl::Status s = db->Exec(sql);
    ASSERT_TRUE(s.ok()) << s;
  }

  testing::TempDir dir_{"memfleet-report-base"};
  std::string path_;
  std::unique_ptr<SqlStore> store_;
  std::map<std::string, std::string> json_;
};

TEST_F(ReportBaseTest, ADeltasReportIsStoredAgainstItsKeyframesReportAndReadsBack) {
  StoreFour();
  const StoredFrame keyframe = FrameOf("dev-a-0");
  const StoredFrame delta = FrameOf("dev-a-1");
  EXPECT_EQ(keyframe.base_no, std::nullopt);
  EXPECT_EQ(delta.base_no, keyframe.capture_no);
  EXPECT_EQ(FrameOf("dev-a-3").base_no, std::nullopt);
  // Against a report that differs in a few figures, a fraction of the dictionary frame.
  EXPECT_LT(delta.report_zstd.size() * 3, CompressReportJson(json_["dev-a-1"]).size());
  for (const char* id : {"dev-a-0", "dev-a-1", "dev-a-2", "dev-a-3"})
    EXPECT_EQ(ReportJsonOf(*store_, id), json_[id]) << id;
  absl::StatusOr<std::optional<StoredReport>> at = store_->GetReport(kDevice, "2026-11-30T08:02:30.000Z");
  ASSERT_TRUE(at.ok()) << at.status();
  ASSERT_TRUE(at->has_value());
  EXPECT_EQ((*at)->capture_id, "dev-a-2");
  EXPECT_EQ((*at)->report_json, json_["dev-a-2"]);
}

TEST_F(ReportBaseTest, ReaccountingAKeyframeKeepsTheReportsStoredAgainstItReadable) {
  StoreFour();
  report::Report replacement = ReportAt(0);
  replacement.device.total_kb = 42;
  replacement.processes.erase(1001);
  const std::string replacement_json = report::ReportToJson(replacement, -1);
  ASSERT_TRUE(store_->ReplaceReport("dev-a-0", replacement, replacement_json).ok());
  EXPECT_EQ(ReportJsonOf(*store_, "dev-a-0"), replacement_json);
  EXPECT_EQ(ReportJsonOf(*store_, "dev-a-1"), json_["dev-a-1"]);
  EXPECT_EQ(ReportJsonOf(*store_, "dev-a-2"), json_["dev-a-2"]);
  EXPECT_EQ(FrameOf("dev-a-1").base_no, FrameOf("dev-a-0").capture_no);
  // And a delta re-accounted after it is stored against the keyframe's new report.
  report::Report delta = ReportAt(2);
  delta.device.total_kb = 43;
  const std::string delta_json = report::ReportToJson(delta, -1);
  ASSERT_TRUE(store_->ReplaceReport("dev-a-2", delta, delta_json).ok());
  EXPECT_EQ(ReportJsonOf(*store_, "dev-a-2"), delta_json);
  EXPECT_EQ(FrameOf("dev-a-2").base_no, FrameOf("dev-a-0").capture_no);
  // A new connection reads what the writer wrote.
  Open();
  EXPECT_EQ(ReportJsonOf(*store_, "dev-a-1"), json_["dev-a-1"]);
  EXPECT_EQ(ReportJsonOf(*store_, "dev-a-2"), delta_json);
}

TEST_F(ReportBaseTest, AKeyframeStaysWhileAReportStoredAgainstItStays) {
  StoreFour();
  EXPECT_FALSE(store_->DeleteCaptures({"dev-a-0"}).ok());
  EXPECT_FALSE(store_->DeleteCaptures({"dev-a-0", "dev-a-1"}).ok());  // dev-a-2 still needs it
  EXPECT_EQ(ReportJsonOf(*store_, "dev-a-1"), json_["dev-a-1"]);
  absl::StatusOr<size_t> deleted = store_->DeleteCaptures({"dev-a-2", "dev-a-0", "dev-a-1"});
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 3u);
  EXPECT_EQ(ReportJsonOf(*store_, "dev-a-3"), json_["dev-a-3"]);
}

TEST_F(ReportBaseTest, ADamagedOrMissingBaseIsDataLossNamingTheCaptureRead) {
  StoreFour();
  const int64_t keyframe_no = FrameOf("dev-a-0").capture_no;
  ExecOnFile("UPDATE report_blobs SET report_zstd = x'28b52ffd00' WHERE capture_no = " + std::to_string(keyframe_no));
  absl::StatusOr<std::optional<StoredReport>> r = store_->GetReportByCapture("dev-a-1");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("dev-a-1"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("keyframe"), std::string::npos) << r.status();
  // Re-accounting the keyframe then cannot re-encode dev-a-1: it fails rather than store a wrong report.
  EXPECT_EQ(store_->ReplaceReport("dev-a-0", ReportAt(0), json_["dev-a-0"]).code(), absl::StatusCode::kDataLoss);

  ExecOnFile("PRAGMA foreign_keys = OFF; DELETE FROM report_blobs WHERE capture_no = " + std::to_string(keyframe_no));
  r = store_->GetReportByCapture("dev-a-2");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("dev-a-2"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("missing"), std::string::npos) << r.status();
  EXPECT_EQ(ReportJsonOf(*store_, "dev-a-3"), json_["dev-a-3"]);
}

// A file as version 15 wrote it: every report a dictionary frame. After the migration the deltas' reports
// are stored against their keyframe's, and every read answers the JSON version 15 stored.
class ReportBaseMigrationTest : public ReportBaseTest {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    path_ = dir_.path() + "/memfleet.db";
    WriteVersion15File();
    version15_delta_bytes_ = CompressReportJson(json_["dev-a-1"]).size();
    Open();
  }

  void WriteVersion15File() {
    absl::StatusOr<SqliteDb> db = SqliteDb::Open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(RegisterMigrationFunctions(*db).ok());
    ASSERT_TRUE(db->Exec("CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT; "
                         "INSERT INTO schema_version VALUES (15)")
                    .ok());
    for (int v = 0; v < 15; ++v) ASSERT_TRUE(db->Exec(Migrations()[static_cast<size_t>(v)]).ok()) << v;
    // dev-a-1 and dev-a-2 are deltas of dev-a-0; dev-a-2's report was damaged at version 15 already.
    for (int seq = 0; seq < 3; ++seq) {
      const CaptureRecord c = CaptureAt(seq, seq == 0 ? "" : "dev-a-0");
      json_[c.capture_id] = c.report_json;
      absl::StatusOr<Statement> capture = db->Prepare(
          "INSERT INTO captures (capture_id, device_id, captured_at, raw_codec, raw_blob, raw_base) "
          "VALUES (?1, ?2, ?3, 'zstd+proto', x'00', ?4)");
      ASSERT_TRUE(capture.ok()) << capture.status();
      ASSERT_TRUE(capture->BindText(1, c.capture_id).ok());
      ASSERT_TRUE(capture->BindText(2, c.device_id).ok());
      ASSERT_TRUE(capture->BindText(3, c.captured_at).ok());
      ASSERT_TRUE((seq == 0 ? capture->BindNull(4) : capture->BindText(4, "dev-a-0")).ok());
      ASSERT_TRUE(capture->StepDone().ok());
      absl::StatusOr<Statement> report = db->Prepare(
          "INSERT INTO device_reports (capture_id, device_id, captured_at, platform, total_kb) "
          "VALUES (?1, ?2, ?3, 'qcom', ?4) RETURNING capture_no");
      ASSERT_TRUE(report.ok()) << report.status();
      ASSERT_TRUE(report->BindText(1, c.capture_id).ok());
      ASSERT_TRUE(report->BindText(2, c.device_id).ok());
      ASSERT_TRUE(report->BindText(3, c.captured_at).ok());
      ASSERT_TRUE(report->BindInt64(4, *c.report.device.total_kb).ok());
      absl::StatusOr<StepResult> row = report->Step();
      ASSERT_TRUE(row.ok() && *row == StepResult::kRow);
      const int64_t capture_no = report->ColumnInt64(0);
      ASSERT_TRUE(report->StepDone().ok());
      absl::StatusOr<Statement> blob =
          db->Prepare("INSERT INTO report_blobs (capture_no, report_zstd) VALUES (?1, ?2)");
      ASSERT_TRUE(blob.ok()) << blob.status();
      ASSERT_TRUE(blob->BindInt64(1, capture_no).ok());
      ASSERT_TRUE(blob->BindBlob(2, seq == 2 ? std::string("damaged") : CompressReportJson(c.report_json)).ok());
      ASSERT_TRUE(blob->StepDone().ok());
    }
  }

  size_t version15_delta_bytes_ = 0;
};

TEST_F(ReportBaseMigrationTest, DeltasReportsMoveAgainstTheirKeyframesAndAnswerWhatVersion15Stored) {
  const StoredFrame keyframe = FrameOf("dev-a-0");
  const StoredFrame delta = FrameOf("dev-a-1");
  EXPECT_EQ(keyframe.base_no, std::nullopt);
  EXPECT_EQ(delta.base_no, keyframe.capture_no);
  EXPECT_LT(delta.report_zstd.size() * 3, version15_delta_bytes_);
  EXPECT_EQ(ReportJsonOf(*store_, "dev-a-0"), json_["dev-a-0"]);
  EXPECT_EQ(ReportJsonOf(*store_, "dev-a-1"), json_["dev-a-1"]);
  absl::StatusOr<std::optional<StoredReport>> at = store_->GetReport(kDevice, "2026-11-30T08:01:30.000Z");
  ASSERT_TRUE(at.ok()) << at.status();
  ASSERT_TRUE(at->has_value());
  EXPECT_EQ((*at)->capture_id, "dev-a-1");
  EXPECT_EQ((*at)->report_json, json_["dev-a-1"]);
}

TEST_F(ReportBaseMigrationTest, AReportThatDidNotDecompressStaysAsItWasAndStillSaysSo) {
  const StoredFrame damaged = FrameOf("dev-a-2");
  EXPECT_EQ(damaged.base_no, std::nullopt);
  EXPECT_EQ(damaged.report_zstd, "damaged");
  absl::StatusOr<std::optional<StoredReport>> r = store_->GetReportByCapture("dev-a-2");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  // Re-accounting it stores it against its keyframe, readable again.
  ASSERT_TRUE(store_->ReplaceReport("dev-a-2", ReportAt(2), json_["dev-a-2"]).ok());
  EXPECT_EQ(ReportJsonOf(*store_, "dev-a-2"), json_["dev-a-2"]);
  EXPECT_EQ(FrameOf("dev-a-2").base_no, FrameOf("dev-a-0").capture_no);
}

}  // namespace
}  // namespace memfleet::storage
