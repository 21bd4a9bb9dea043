#include "storage/sqlite/sqlite_store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "report/report.h"
#include "storage/process_block.h"
#include "storage/sqlite/schema.h"
#include "storage/sqlite/sqlite_db.h"
#include "tests/support/store_backends.h"
#include "tests/support/temp_dir.h"

namespace memfleet::storage {
namespace sqlite_store_test {
namespace {

using report::Platform;
using report::ProcessReport;
using report::Report;

using memfleet::testing::TempDir;

// "2024-05-01T" + hh:mm:00Z
std::string At(int hour, int minute = 0) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "2024-05-01T%02d:%02d:00.000Z", hour, minute);  // the store's form
  return buf;
}

ProcessReport Process(int pid, const std::string& name, std::optional<int64_t> total_kb) {
  ProcessReport p;
  p.pid = pid;
  p.name = name;
  p.total_kb = total_kb;
  return p;
}

// A report with a few figures known and the rest unknown (nullopt), as the engine leaves them when a
// node is missing.
Report MakeReport(const std::string& device_id, const std::string& captured_at, std::optional<int64_t> total_kb) {
  Report r;
  r.platform = Platform::kQcom;
  r.device_id = device_id;
  r.captured_at = captured_at;
  r.device.mem_total_kb = 7'800'000;
  r.device.total_kb = total_kb;
  r.device.ddr_estimated = true;
  r.processes[100] = Process(100, "com.android.systemui", total_kb.has_value() ? *total_kb / 10 : 500);
  r.processes[200] = Process(200, "surfaceflinger", 300);
  return r;
}

CaptureRecord MakeCapture(const std::string& capture_id, const std::string& device_id, const std::string& captured_at,
                          std::optional<int64_t> total_kb = 1'000'000) {
  CaptureRecord c;
  c.capture_id = capture_id;
  c.device_id = device_id;
  c.captured_at = captured_at;
  c.received_at = captured_at;
  c.raw_codec = "gzip+proto";
  c.raw_blob = std::string("\x1f\x8b\x00\xff", 4) + capture_id;
  c.raw_bytes = 4096;
  c.report = MakeReport(device_id, captured_at, total_kb);
  c.report_json = "{\"capture\":\"" + capture_id + "\"}";
  return c;
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    path_ = dir_.path() + "/memfleet.db";
    Reopen();
  }

  void Reopen(const SqliteStoreOptions& options = SqliteStoreOptions()) {
    store_.reset();
    absl::StatusOr<std::unique_ptr<SqlStore>> store = OpenSqliteStore(path_, options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  void Put(const CaptureRecord& c) {
    absl::StatusOr<bool> inserted = store_->PutCapture(c);
    ASSERT_TRUE(inserted.ok()) << inserted.status();
    ASSERT_TRUE(*inserted) << c.capture_id;
  }

  // A second connection on the same file, to look at what was really written.
  SqliteDb RawDb() {
    absl::StatusOr<SqliteDb> db = SqliteDb::Open(path_, SQLITE_OPEN_READONLY);
    EXPECT_TRUE(db.ok()) << db.status();
    return db.ok() ? std::move(*db) : SqliteDb();
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<SqlStore> store_;
};

// The Store's behaviour, on both backends (SQLite, PostgreSQL): the same answers from either.
class StoreTest : public testing::StoreOnBackendTest {
 protected:
  void Put(const CaptureRecord& c) {
    absl::StatusOr<bool> inserted = store_->PutCapture(c);
    ASSERT_TRUE(inserted.ok()) << inserted.status();
    ASSERT_TRUE(*inserted) << c.capture_id;
  }

  // The SQLite file, to look at what was really written (SQLite only).
  SqliteDb RawDb() {
    absl::StatusOr<SqliteDb> db = SqliteDb::Open(location_, SQLITE_OPEN_READONLY);
    EXPECT_TRUE(db.ok()) << db.status();
    return db.ok() ? std::move(*db) : SqliteDb();
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, testing::kBothBackends, testing::StoreBackendName);

TEST_F(SqliteStoreTest, CaptureRoundTripKeepsUnknownFiguresNull) {
  CaptureRecord c = MakeCapture("cap-1", "dev-1", At(10));
  ProcessReport& p = c.report.processes[100];
  // Distinct values per column, so a swapped bind index shows up as a wrong column.
  p.oom_score_adj = -800;
  p.cached = true;
  p.pss_kb = 1001;
  p.swap_pss_kb = 1002;
  p.gfxdev_kb = 1003;
  p.gl_kb = std::nullopt;
  p.dma_kb = 1005;
  p.native_graphics_kb = 1006;
  p.native_graphics_source = "heap_dump";
  p.non_graphics_kb = 1007;
  p.graphics_dma_kb = 1008;
  p.total_kb = 1009;
  c.report.device.kernel_kb = 2001;
  c.report.device.gcma_kb = 0;  // a known zero is not unknown
  Put(c);

  SqliteDb db = RawDb();
  absl::StatusOr<Statement> dev = db.Prepare(
      "SELECT device_id, captured_at, platform, ddr_kb IS NULL, ddr_estimated, mem_total_kb, gcma_kb, "
      "static_reserved_kb IS NULL, kernel_cma_kb IS NULL, kernel_kb, processes_kb IS NULL, total_kb "
      "FROM device_reports WHERE capture_id = 'cap-1'");
  ASSERT_TRUE(dev.ok()) << dev.status();
  ASSERT_EQ(*dev->Step(), StepResult::kRow);
  EXPECT_EQ(dev->ColumnText(0), "dev-1");
  EXPECT_EQ(dev->ColumnText(1), At(10));
  EXPECT_EQ(dev->ColumnText(2), "qcom");
  EXPECT_EQ(dev->ColumnInt64(3), 1);
  EXPECT_EQ(dev->ColumnInt64(4), 1);
  EXPECT_EQ(dev->ColumnInt64(5), 7'800'000);
  EXPECT_FALSE(dev->ColumnIsNull(6));
  EXPECT_EQ(dev->ColumnInt64(6), 0);
  EXPECT_EQ(dev->ColumnInt64(7), 1);
  EXPECT_EQ(dev->ColumnInt64(8), 1);
  EXPECT_EQ(dev->ColumnInt64(9), 2001);
  EXPECT_EQ(dev->ColumnInt64(10), 1);
  EXPECT_EQ(dev->ColumnInt64(11), 1'000'000);

  // The process figures (schema version 19): one block in the report row, each process under its
  // name's number, only the figures a query reads (oom_score_adj, cached and native_graphics_source are in
  // the JSON), an unknown one absent rather than 0.
  absl::StatusOr<Statement> block = db.Prepare(
      "SELECT r.process_count, r.processes, n.name_no FROM device_reports AS r, process_names AS n "
      "WHERE r.capture_id = 'cap-1' AND n.name = 'com.android.systemui'");
  ASSERT_TRUE(block.ok()) << block.status();
  ASSERT_EQ(*block->Step(), StepResult::kRow);
  EXPECT_EQ(block->ColumnInt64(0), 2);
  absl::StatusOr<std::vector<ProcessSample>> samples = DecodeProcessBlock(block->ColumnBlob(1));
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 2u);
  const ProcessSample* ui = nullptr;
  const ProcessSample* other = nullptr;
  for (const ProcessSample& s : *samples) (s.pid == 100 ? ui : other) = &s;
  ASSERT_NE(ui, nullptr);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(ui->name_no, block->ColumnInt64(2));
  using Figures = std::array<std::optional<int64_t>, kProcessFigureCount>;
  // total, pss, swap_pss, gfxdev, gl, dma, native_graphics, non_graphics, graphics_dma (kProcessFigureNames).
  EXPECT_EQ(ui->figures, (Figures{1009, 1001, 1002, 1003, std::nullopt, 1005, 1006, 1007, 1008}));
  // The other process: every figure but total unknown.
  EXPECT_EQ(other->pid, 200);
  EXPECT_EQ(other->figures, (Figures{300, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                                     std::nullopt, std::nullopt, std::nullopt}));

  // The same through the Store interface.
  absl::StatusOr<std::vector<HistoryRow>> gl = store_->ProcessHistory("dev-1", "com.android.systemui", "gl_kb", "", 0);
  ASSERT_TRUE(gl.ok()) << gl.status();
  ASSERT_EQ(gl->size(), 1u);
  EXPECT_EQ((*gl)[0].value_kb, std::nullopt);
  EXPECT_EQ((*gl)[0].pid, 100);
  EXPECT_EQ((*gl)[0].capture_id, "cap-1");
  absl::StatusOr<std::vector<FleetValueRow>> ddr = store_->LatestPerDevice("ddr_kb", "");
  ASSERT_TRUE(ddr.ok()) << ddr.status();
  ASSERT_EQ(ddr->size(), 1u);
  EXPECT_EQ((*ddr)[0].value_kb, std::nullopt);

  absl::StatusOr<std::optional<StoredReport>> stored = store_->GetReportByCapture("cap-1");
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_TRUE(stored->has_value());
  EXPECT_EQ((*stored)->report_json, c.report_json);
  EXPECT_EQ((*stored)->device_id, "dev-1");
  EXPECT_EQ((*stored)->captured_at, At(10));

  std::vector<Store::RawCapture> raws;
  ASSERT_TRUE(store_->ForEachRawCapture("", [&](const Store::RawCapture& r) { raws.push_back(r); }).ok());
  ASSERT_EQ(raws.size(), 1u);
  EXPECT_EQ(raws[0].raw_blob, c.raw_blob);  // binary, with a NUL
  EXPECT_EQ(raws[0].raw_codec, "gzip+proto");

  absl::StatusOr<Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->captures, 1u);
  EXPECT_EQ(stats->raw_blob_bytes, c.raw_blob.size());
  EXPECT_EQ(stats->raw_bytes, 4096u);
  EXPECT_EQ(stats->process_rows, 2u);
}

TEST_P(StoreTest, DuplicateCaptureReturnsFalseAndChangesNothing) {
  Put(MakeCapture("cap-1", "dev-1", At(10), 111));
  CaptureRecord again = MakeCapture("cap-1", "dev-1", At(11), 222);
  again.report.processes[300] = Process(300, "extra", 1);
  absl::StatusOr<bool> second = store_->PutCapture(again);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(*second);

  absl::StatusOr<Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->captures, 1u);
  EXPECT_EQ(stats->process_rows, 2u);
  absl::StatusOr<std::optional<StoredReport>> report = store_->GetReport("dev-1", "");
  ASSERT_TRUE(report.ok() && report->has_value());
  EXPECT_EQ((*report)->captured_at, At(10));
  absl::StatusOr<std::vector<FleetValueRow>> total = store_->LatestPerDevice("total_kb", "");
  ASSERT_TRUE(total.ok());
  ASSERT_EQ(total->size(), 1u);
  EXPECT_EQ((*total)[0].value_kb, 111);
  absl::StatusOr<bool> has = store_->HasCapture("cap-1");
  ASSERT_TRUE(has.ok());
  EXPECT_TRUE(*has);
  has = store_->HasCapture("cap-2");
  ASSERT_TRUE(has.ok());
  EXPECT_FALSE(*has);
}

TEST_P(StoreTest, ClockSkewIsTheLatestHellosAndNullWhenUnknown) {
  DeviceRecord d;
  d.device_id = "dev-1";
  d.clock_skew_s = 253402300800 - 1796342400;  // a clock at year 10000 against 2026-12-04
  ASSERT_TRUE(store_->UpsertDevice(d).ok());
  absl::StatusOr<std::optional<DeviceRecord>> got = store_->GetDevice("dev-1");
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status();
  EXPECT_EQ((*got)->clock_skew_s, std::optional<int64_t>(253402300800 - 1796342400));
  d.clock_skew_s = -42;
  ASSERT_TRUE(store_->UpsertDevice(d).ok());
  absl::StatusOr<std::vector<DeviceSummaryRow>> rows = store_->ListDevices();
  ASSERT_TRUE(rows.ok() && rows->size() == 1u) << rows.status();
  EXPECT_EQ((*rows)[0].device.clock_skew_s, std::optional<int64_t>(-42));
  d.clock_skew_s = std::nullopt;  // an agent that sends no time: unknown now, not the old figure
  ASSERT_TRUE(store_->UpsertDevice(d).ok());
  got = store_->GetDevice("dev-1");
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status();
  EXPECT_EQ((*got)->clock_skew_s, std::nullopt);
}

TEST_P(StoreTest, AndroidFactsAreTheLatestHellos) {
  DeviceRecord d;
  d.device_id = "pixel-1";
  d.manufacturer = "Google";
  d.build_type = "userdebug";
  d.abi = "arm64-v8a";
  d.android_sdk = "34";
  d.access = "shell";
  d.selinux = "enforcing";
  ASSERT_TRUE(store_->UpsertDevice(d).ok());
  absl::StatusOr<std::vector<DeviceSummaryRow>> rows = store_->ListDevices();
  ASSERT_TRUE(rows.ok() && rows->size() == 1u) << rows.status();
  const DeviceRecord& listed = (*rows)[0].device;
  EXPECT_EQ(listed.manufacturer, "Google");
  EXPECT_EQ(listed.build_type, "userdebug");
  EXPECT_EQ(listed.abi, "arm64-v8a");
  EXPECT_EQ(listed.android_sdk, "34");
  EXPECT_EQ(listed.access, "shell");
  EXPECT_EQ(listed.selinux, "enforcing");
  // Rooted since (adb root): the next Hello's access replaces the old one.
  d.access = "root";
  d.selinux = "permissive";
  ASSERT_TRUE(store_->UpsertDevice(d).ok());
  absl::StatusOr<std::optional<DeviceRecord>> got = store_->GetDevice("pixel-1");
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status();
  EXPECT_EQ((*got)->access, "root");
  EXPECT_EQ((*got)->selinux, "permissive");
  EXPECT_EQ((*got)->android_sdk, "34");
}

TEST_P(StoreTest, TheSameCaptureIdOfAnotherDeviceIsNotADuplicate) {
  // Deduplication is on (device_id, capture_id): were dev-2's capture "already stored", the server would
  // ack it and its agent delete the only copy.
  Put(MakeCapture("cap-1", "dev-1", At(10), 111));
  absl::StatusOr<bool> other = store_->PutCapture(MakeCapture("cap-1", "dev-2", At(11), 222));
  EXPECT_EQ(other.status().code(), absl::StatusCode::kAlreadyExists) << other.status();
  EXPECT_NE(other.status().message().find("already stored for device \"dev-1\""), std::string::npos) << other.status();

  absl::StatusOr<std::optional<std::string>> owner = store_->CaptureDevice("cap-1");
  ASSERT_TRUE(owner.ok()) << owner.status();
  EXPECT_EQ(*owner, std::optional<std::string>("dev-1"));
  absl::StatusOr<std::optional<StoredReport>> dev2 = store_->GetReport("dev-2", "");
  ASSERT_TRUE(dev2.ok()) << dev2.status();
  EXPECT_FALSE(dev2->has_value());
  // The same device's resend is still the quiet duplicate.
  absl::StatusOr<bool> resend = store_->PutCapture(MakeCapture("cap-1", "dev-1", At(10), 111));
  ASSERT_TRUE(resend.ok()) << resend.status();
  EXPECT_FALSE(*resend);
}

TEST_P(StoreTest, PutCapturesRefusesAnotherDevicesCaptureIdAndStoresNoneOfTheBatch) {
  Put(MakeCapture("cap-1", "dev-1", At(10), 111));
  std::vector<CaptureRecord> batch = {MakeCapture("cap-2", "dev-2", At(12)), MakeCapture("cap-1", "dev-2", At(12))};
  EXPECT_EQ(store_->PutCaptures(batch).status().code(), absl::StatusCode::kAlreadyExists);
  absl::StatusOr<std::optional<std::string>> owner = store_->CaptureDevice("cap-2");  // the batch stored nothing
  ASSERT_TRUE(owner.ok()) << owner.status();
  EXPECT_EQ(*owner, std::nullopt);
}

TEST_P(StoreTest, PutCapturesDeduplicatesEachAndIsAllOrNothing) {
  Put(MakeCapture("old", "dev-1", At(9)));
  std::vector<CaptureRecord> batch = {MakeCapture("old", "dev-1", At(9)), MakeCapture("new-1", "dev-1", At(10)),
                                      MakeCapture("new-1", "dev-1", At(10)), MakeCapture("new-2", "dev-2", At(10))};
  absl::StatusOr<std::vector<bool>> inserted = store_->PutCaptures(batch);
  ASSERT_TRUE(inserted.ok()) << inserted.status();
  // "old" already stored, the second "new-1" a duplicate within the batch.
  EXPECT_EQ(*inserted, (std::vector<bool>{false, true, false, true}));

  std::vector<CaptureRecord> with_bad = {MakeCapture("new-3", "dev-1", At(11)), MakeCapture("new-4", "dev-1", "bad")};
  absl::StatusOr<std::vector<bool>> rejected = store_->PutCaptures(with_bad);
  EXPECT_EQ(rejected.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(rejected.status().message().find("new-4"), std::string::npos) << rejected.status();
  absl::StatusOr<bool> has = store_->HasCapture("new-3");
  ASSERT_TRUE(has.ok());
  EXPECT_FALSE(*has);
  absl::StatusOr<Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->captures, 3u);
  EXPECT_EQ(stats->process_rows, 6u);
}

TEST_P(StoreTest, InvalidCaptureIsRejectedBeforeWriting) {
  CaptureRecord bad_time = MakeCapture("cap-1", "dev-1", "yesterday");
  absl::StatusOr<bool> r = store_->PutCapture(bad_time);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_EQ(store_->PutCapture(MakeCapture("", "dev-1", At(1))).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->PutCapture(MakeCapture("c", "", At(1))).status().code(), absl::StatusCode::kInvalidArgument);
  CaptureRecord huge = MakeCapture("cap-2", "dev-1", At(1));
  huge.raw_bytes = ~uint64_t{0};
  EXPECT_EQ(store_->PutCapture(huge).status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->captures, 0u);
}

TEST_P(StoreTest, GetReportAtTimePicksLatestAtOrBefore) {
  Put(MakeCapture("cap-10", "dev-1", At(10)));
  Put(MakeCapture("cap-12", "dev-1", At(12)));
  Put(MakeCapture("other", "dev-2", At(11)));
  auto at = [&](const std::string& when) -> std::string {
    absl::StatusOr<std::optional<StoredReport>> r = store_->GetReport("dev-1", when);
    if (!r.ok()) return "error";
    return r->has_value() ? (*r)->capture_id : "none";
  };
  EXPECT_EQ(at(At(11)), "cap-10");  // between the two: the earlier
  EXPECT_EQ(at(At(12)), "cap-12");  // inclusive
  EXPECT_EQ(at(At(9)), "none");
  EXPECT_EQ(at(""), "cap-12");
  EXPECT_EQ(at("2024-05-01T13:30:00+02:00"), "cap-10");  // = 11:30Z, normalised before comparing
  EXPECT_EQ(at("2024-05-01T12:00:00.5Z"), "cap-12");     // 12:00:00 after truncation
  EXPECT_EQ(store_->GetReport("dev-1", "noon").status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::optional<StoredReport>> none = store_->GetReport("dev-9", "");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  absl::StatusOr<std::optional<StoredReport>> missing = store_->GetReportByCapture("nope");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TEST_P(StoreTest, CapturedAtWithOffsetIsStoredInUtc) {
  Put(MakeCapture("cap-1", "dev-1", "2024-05-01T12:00:00+02:00"));
  absl::StatusOr<std::optional<StoredReport>> r = store_->GetReport("dev-1", "");
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->captured_at, "2024-05-01T10:00:00.000Z");
}

// A limit keeps the newest points (`trend --limit 3`: the last three), still oldest first.
TEST_P(StoreTest, ProcessHistoryIsOldestFirstWithSinceAndLimit) {
  // Inserted out of order: the order must come from captured_at, not from insertion.
  for (int hour : {12, 10, 14, 11, 13}) {
    Put(MakeCapture("cap-" + std::to_string(hour), "dev-1", At(hour), hour * 10'000));
  }
  Put(MakeCapture("other-device", "dev-2", At(10), 5));
  absl::StatusOr<std::vector<HistoryRow>> rows =
      store_->ProcessHistory("dev-1", "com.android.systemui", "total_kb", "", 0);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 5u);
  for (size_t i = 0; i < rows->size(); ++i) {
    EXPECT_EQ((*rows)[i].captured_at, At(10 + static_cast<int>(i)));
    EXPECT_EQ((*rows)[i].value_kb, (10 + static_cast<int64_t>(i)) * 1'000);  // total / 10
  }
  rows = store_->ProcessHistory("dev-1", "com.android.systemui", "total_kb", At(12), 0);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);  // since is inclusive
  EXPECT_EQ(rows->front().capture_id, "cap-12");
  rows = store_->ProcessHistory("dev-1", "com.android.systemui", "total_kb", At(11), 2);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].capture_id, "cap-13");
  EXPECT_EQ((*rows)[1].capture_id, "cap-14");
  rows = store_->DeviceHistory("dev-1", "total_kb", "", 3);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].capture_id, "cap-12");
  EXPECT_EQ((*rows)[2].capture_id, "cap-14");
  rows = store_->ProcessHistory("dev-1", "no-such-process", "total_kb", "", 0);
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
}

TEST_P(StoreTest, ProcessHistoryListsEachPidOfTheNameInPidOrder) {
  CaptureRecord c = MakeCapture("cap-1", "dev-1", At(10));
  c.report.processes[900] = Process(900, "com.android.systemui", 7);  // restarted: a second pid
  Put(c);
  absl::StatusOr<std::vector<HistoryRow>> rows =
      store_->ProcessHistory("dev-1", "com.android.systemui", "total_kb", "", 0);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].pid, 100);
  EXPECT_EQ((*rows)[1].pid, 900);
  EXPECT_EQ((*rows)[1].value_kb, 7);
}

// The process rows are keyed by Unix milliseconds (schema version 15); the canonical form keeps a leap
// second, which SQLite's date functions do not know. It is stored and sorts between :59.999 and the next
// minute's :00.001.
TEST_P(StoreTest, ALeapSecondCaptureIsStoredInTimeOrder) {
  Put(MakeCapture("cap-a", "dev-1", "2016-12-31T23:59:59.999Z", 10'000));
  Put(MakeCapture("cap-b", "dev-1", "2016-12-31T23:59:60.000Z", 20'000));
  Put(MakeCapture("cap-c", "dev-1", "2017-01-01T00:00:00.001Z", 30'000));
  absl::StatusOr<std::vector<HistoryRow>> rows =
      store_->ProcessHistory("dev-1", "com.android.systemui", "total_kb", "", 0);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].capture_id, "cap-a");
  EXPECT_EQ((*rows)[1].capture_id, "cap-b");
  EXPECT_EQ((*rows)[1].captured_at, "2016-12-31T23:59:60.000Z");
  EXPECT_EQ((*rows)[2].capture_id, "cap-c");
  rows = store_->ProcessHistory("dev-1", "com.android.systemui", "total_kb", "2016-12-31T23:59:60Z", 0);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].capture_id, "cap-b");
}

TEST_P(StoreTest, MetricWhitelistRejectsInjectionAndNonFigures) {
  Put(MakeCapture("cap-1", "dev-1", At(10)));
  for (const char* metric : {"total_kb; DROP TABLE captures", "total_kb FROM captures --", "", "TOTAL_KB",
                             "native_graphics_source", "ddr_kb", "name", "1"}) {
    absl::StatusOr<std::vector<HistoryRow>> rows = store_->ProcessHistory("dev-1", "surfaceflinger", metric, "", 0);
    ASSERT_FALSE(rows.ok()) << metric;
    EXPECT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument) << metric;
    EXPECT_EQ(store_->LatestPerDevice(metric, "surfaceflinger").status().code(), absl::StatusCode::kInvalidArgument);
  }
  // Device figures: process-only names and injection are refused too.
  for (const char* metric : {"pss_kb", "total_kb); DROP TABLE captures; --", "ddr_estimated"}) {
    EXPECT_EQ(store_->LatestPerDevice(metric, "").status().code(), absl::StatusCode::kInvalidArgument) << metric;
  }
  absl::StatusOr<bool> still_there = store_->HasCapture("cap-1");
  ASSERT_TRUE(still_there.ok()) << still_there.status();
  EXPECT_TRUE(*still_there);
  // Every whitelisted process figure works.
  for (const char* metric : {"total_kb", "pss_kb", "swap_pss_kb", "gfxdev_kb", "gl_kb", "dma_kb", "native_graphics_kb",
                             "non_graphics_kb", "graphics_dma_kb"}) {
    EXPECT_TRUE(store_->ProcessHistory("dev-1", "surfaceflinger", metric, "", 0).ok()) << metric;
  }
  for (const char* metric : {"ddr_kb", "mem_total_kb", "gcma_kb", "static_reserved_kb", "kernel_cma_kb", "kernel_kb",
                             "processes_kb", "total_kb"}) {
    EXPECT_TRUE(store_->LatestPerDevice(metric, "").ok()) << metric;
  }
}

TEST_P(StoreTest, LatestPerDevicePicksNewestCaptureOfEachDevice) {
  // dev-a newest is in the middle of insertion order, dev-b newest first, dev-c newest last.
  Put(MakeCapture("a1", "dev-a", At(9), 1));
  Put(MakeCapture("a3", "dev-a", At(11), 3));
  Put(MakeCapture("a2", "dev-a", At(10), 2));
  Put(MakeCapture("b3", "dev-b", At(15), 30));
  Put(MakeCapture("b1", "dev-b", At(8), 10));
  Put(MakeCapture("b2", "dev-b", At(14), 20));
  Put(MakeCapture("c1", "dev-c", At(1), 100));
  Put(MakeCapture("c2", "dev-c", At(2), 200));
  Put(MakeCapture("c3", "dev-c", At(3), std::nullopt));  // newest report without a total
  absl::StatusOr<std::vector<FleetValueRow>> rows = store_->LatestPerDevice("total_kb", "");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].device.device_id, "dev-a");
  EXPECT_EQ((*rows)[0].capture_id, "a3");
  EXPECT_EQ((*rows)[0].captured_at, At(11));
  EXPECT_EQ((*rows)[0].value_kb, 3);
  EXPECT_EQ((*rows)[1].device.device_id, "dev-b");
  EXPECT_EQ((*rows)[1].capture_id, "b3");
  EXPECT_EQ((*rows)[1].value_kb, 30);
  EXPECT_EQ((*rows)[2].device.device_id, "dev-c");
  EXPECT_EQ((*rows)[2].capture_id, "c3");
  EXPECT_EQ((*rows)[2].value_kb, std::nullopt);  // not c2's 200: the latest report, not the latest value
  EXPECT_EQ((*rows)[2].device.platform, "qcom");
}

TEST_P(StoreTest, LatestPerDeviceBreaksTimeTiesByGreaterCaptureId) {
  // Two reports of one time: the greater capture id is the latest, whichever was stored last (as GetReport).
  Put(MakeCapture("a-2", "dev-a", At(10), 20'000));
  Put(MakeCapture("a-1", "dev-a", At(10), 10'000));
  Put(MakeCapture("a-0", "dev-a", At(9), 90'000));
  Put(MakeCapture("b-1", "dev-b", At(12), 10'000));
  Put(MakeCapture("b-3", "dev-b", At(12), 30'000));
  absl::StatusOr<std::vector<FleetValueRow>> rows = store_->LatestPerDevice("total_kb", "");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].capture_id, "a-2");
  EXPECT_EQ((*rows)[0].value_kb, 20'000);
  EXPECT_EQ((*rows)[1].capture_id, "b-3");
  EXPECT_EQ((*rows)[1].value_kb, 30'000);
  absl::StatusOr<std::vector<FleetValueRow>> process = store_->LatestPerDevice("total_kb", "com.android.systemui");
  ASSERT_TRUE(process.ok()) << process.status();
  ASSERT_EQ(process->size(), 2u);
  EXPECT_EQ((*process)[0].capture_id, "a-2");
  EXPECT_EQ((*process)[0].value_kb, 2'000);
  EXPECT_EQ((*process)[1].capture_id, "b-3");
  EXPECT_EQ((*process)[1].value_kb, 3'000);
}

TEST_P(StoreTest, LatestPerDeviceWithProcessFigure) {
  Put(MakeCapture("a1", "dev-a", At(9), 10'000));
  Put(MakeCapture("a2", "dev-a", At(10), 20'000));
  CaptureRecord b = MakeCapture("b1", "dev-b", At(10));
  b.report.processes.erase(100);  // systemui not running in dev-b's latest capture
  Put(b);
  absl::StatusOr<std::vector<FleetValueRow>> rows = store_->LatestPerDevice("total_kb", "com.android.systemui");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].capture_id, "a2");
  EXPECT_EQ((*rows)[0].value_kb, 2'000);
  EXPECT_EQ((*rows)[1].capture_id, "b1");
  EXPECT_EQ((*rows)[1].value_kb, std::nullopt);
}

TEST_P(StoreTest, ReplaceReportSwapsReportAndProcessRows) {
  Put(MakeCapture("cap-1", "dev-1", At(10), 1'000));
  Report replacement = MakeReport("ignored-device", At(23), 4'000);
  replacement.platform = Platform::kMtk;
  replacement.processes.erase(200);
  replacement.processes[300] = Process(300, "new_process", 33);
  ASSERT_TRUE(store_->ReplaceReport("cap-1", replacement, "{\"v\":2}").ok());

  absl::StatusOr<std::optional<StoredReport>> r = store_->GetReportByCapture("cap-1");
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->report_json, "{\"v\":2}");
  EXPECT_EQ((*r)->device_id, "dev-1");  // the capture's identity, not the report's
  EXPECT_EQ((*r)->captured_at, At(10));
  absl::StatusOr<std::vector<FleetValueRow>> total = store_->LatestPerDevice("total_kb", "");
  ASSERT_TRUE(total.ok());
  ASSERT_EQ(total->size(), 1u);
  EXPECT_EQ((*total)[0].value_kb, 4'000);
  EXPECT_EQ((*total)[0].device.platform, "mtk");
  absl::StatusOr<std::vector<HistoryRow>> gone = store_->ProcessHistory("dev-1", "surfaceflinger", "total_kb", "", 0);
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(gone->empty());
  absl::StatusOr<std::vector<HistoryRow>> added = store_->ProcessHistory("dev-1", "new_process", "total_kb", "", 0);
  ASSERT_TRUE(added.ok());
  ASSERT_EQ(added->size(), 1u);
  EXPECT_EQ((*added)[0].captured_at, At(10));
  absl::StatusOr<Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->process_rows, 2u);
  EXPECT_EQ(store_->ReplaceReport("nope", replacement, "{}").code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreTest, ForEachRawCaptureIsOldestFirstAndMayReplaceReports) {
  Put(MakeCapture("late", "dev-1", At(12)));
  Put(MakeCapture("early", "dev-1", At(8)));
  Put(MakeCapture("middle", "dev-2", At(10)));
  std::vector<std::string> seen;
  // Re-accounting calls back into the store from the callback; that must not deadlock.
  absl::Status s = store_->ForEachRawCapture("", [&](const Store::RawCapture& raw) {
    seen.push_back(raw.capture_id);
    EXPECT_EQ(raw.raw_blob, std::string("\x1f\x8b\x00\xff", 4) + raw.capture_id);
    EXPECT_TRUE(
        store_->ReplaceReport(raw.capture_id, MakeReport(raw.device_id, raw.captured_at, 7), "{\"re\":1}").ok());
  });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(seen, (std::vector<std::string>{"early", "middle", "late"}));
  seen.clear();
  ASSERT_TRUE(
      store_->ForEachRawCapture("dev-1", [&](const Store::RawCapture& raw) { seen.push_back(raw.capture_id); }).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"early", "late"}));
  absl::StatusOr<std::optional<StoredReport>> r = store_->GetReportByCapture("middle");
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->report_json, "{\"re\":1}");
}

TEST_P(StoreTest, DevicesUpsertListAndPlatformFromLatestReport) {
  DeviceRecord d;
  d.device_id = "dev-1";
  d.model = "Pixel 8";
  d.soc = "gs301";
  d.build_fingerprint = "google/shiba/shiba:14/AP1A/1:user/release-keys";
  d.kernel = "6.1.25";
  d.agent_version = "0.1.0";
  d.page_size = 16384;
  d.last_seen_at = At(9);
  ASSERT_TRUE(store_->UpsertDevice(d).ok());
  Put(MakeCapture("cap-1", "dev-1", At(10), 5'000));
  Put(MakeCapture("cap-0", "dev-1", At(8), 6'000));  // older capture arriving later
  Put(MakeCapture("unregistered", "dev-2", At(11)));

  absl::StatusOr<std::optional<DeviceRecord>> got = store_->GetDevice("dev-1");
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status();
  EXPECT_EQ((*got)->model, "Pixel 8");
  EXPECT_EQ((*got)->soc, "gs301");
  EXPECT_EQ((*got)->build_fingerprint, d.build_fingerprint);
  EXPECT_EQ((*got)->kernel, "6.1.25");
  EXPECT_EQ((*got)->agent_version, "0.1.0");
  EXPECT_EQ((*got)->page_size, 16384u);
  EXPECT_EQ((*got)->platform, "qcom");
  EXPECT_EQ((*got)->last_seen_at, At(10));  // never moves back to 08:00

  // An agent update re-registers without platform/last_seen: the stored ones stay.
  d.agent_version = "0.2.0";
  d.last_seen_at = "";
  ASSERT_TRUE(store_->UpsertDevice(d).ok());
  absl::StatusOr<std::vector<DeviceSummaryRow>> list = store_->ListDevices();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].device.device_id, "dev-1");
  EXPECT_EQ((*list)[0].device.agent_version, "0.2.0");
  EXPECT_EQ((*list)[0].device.platform, "qcom");
  EXPECT_EQ((*list)[0].device.last_seen_at, At(10));
  EXPECT_EQ((*list)[0].capture_count, 2u);
  EXPECT_EQ((*list)[0].last_capture_at, At(10));
  EXPECT_EQ((*list)[0].last_total_kb, 5'000);
  EXPECT_EQ((*list)[1].device.device_id, "dev-2");  // known from its capture alone
  EXPECT_EQ((*list)[1].capture_count, 1u);

  absl::StatusOr<std::optional<DeviceRecord>> none = store_->GetDevice("dev-9");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  DeviceRecord empty;
  EXPECT_EQ(store_->UpsertDevice(empty).code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(StoreTest, SweepRoundTripAndUpdate) {
  SweepRecord s;
  s.sweep_id = "sweep-1";
  s.started_at = At(10);
  s.selector = "soc=sm8450 model=Pixel*";
  s.states = {{"dev-1", "sent"}, {"dev-2", "capturing"}, {"dev-3", "offline"}};
  ASSERT_TRUE(store_->PutSweep(s).ok());
  absl::StatusOr<std::optional<SweepRecord>> got = store_->GetSweep("sweep-1");
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status();
  EXPECT_EQ((*got)->started_at, At(10));
  EXPECT_EQ((*got)->selector, s.selector);
  EXPECT_EQ((*got)->states, s.states);
  EXPECT_EQ((*got)->finished_at, "");

  s.states = {{"dev-1", "stored"}, {"dev-2", "timed_out"}};
  s.finished_at = At(10, 5);
  ASSERT_TRUE(store_->PutSweep(s).ok());
  got = store_->GetSweep("sweep-1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->states, s.states);  // dev-3 dropped: the record is the whole state
  EXPECT_EQ((*got)->finished_at, At(10, 5));

  absl::StatusOr<std::optional<SweepRecord>> none = store_->GetSweep("sweep-2");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  SweepRecord bad = s;
  bad.finished_at = "soon";
  EXPECT_EQ(store_->PutSweep(bad).code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(StoreTest, ReopeningKeepsEverythingAndFileIsIntact) {
  DeviceRecord d;
  d.device_id = "dev-1";
  d.model = "Pixel 8";
  ASSERT_TRUE(store_->UpsertDevice(d).ok());
  Put(MakeCapture("cap-1", "dev-1", At(10)));
  Put(MakeCapture("cap-2", "dev-1", At(11)));
  SweepRecord s;
  s.sweep_id = "sweep-1";
  s.states = {{"dev-1", "stored"}};
  ASSERT_TRUE(store_->PutSweep(s).ok());
  store_.reset();

  if (GetParam() == testing::StoreBackend::kSqlite) {
    SqliteDb db = RawDb();
    absl::StatusOr<Statement> check = db.Prepare("PRAGMA integrity_check");
    ASSERT_TRUE(check.ok()) << check.status();
    ASSERT_EQ(*check->Step(), StepResult::kRow);
    EXPECT_EQ(check->ColumnText(0), "ok");
    absl::StatusOr<Statement> fk = db.Prepare("PRAGMA foreign_key_check");
    ASSERT_TRUE(fk.ok());
    EXPECT_EQ(*fk->Step(), StepResult::kDone);  // no orphan report rows
    absl::StatusOr<Statement> mode = db.Prepare("PRAGMA journal_mode");
    ASSERT_TRUE(mode.ok());
    ASSERT_EQ(*mode->Step(), StepResult::kRow);
    EXPECT_EQ(mode->ColumnText(0), "wal");  // persistent in the file
  }

  Reopen();
  absl::StatusOr<std::optional<DeviceRecord>> got = store_->GetDevice("dev-1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->model, "Pixel 8");
  absl::StatusOr<std::optional<StoredReport>> r = store_->GetReport("dev-1", "");
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->capture_id, "cap-2");
  absl::StatusOr<std::optional<SweepRecord>> sweep = store_->GetSweep("sweep-1");
  ASSERT_TRUE(sweep.ok() && sweep->has_value());
  EXPECT_EQ((*sweep)->states, s.states);
  absl::StatusOr<Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->captures, 2u);
  EXPECT_EQ(stats->process_rows, 4u);
  // Still deduplicates after a restart.
  absl::StatusOr<bool> again = store_->PutCapture(MakeCapture("cap-1", "dev-1", At(10)));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

TEST_F(SqliteStoreTest, ReadOnlyDatabaseReadsButWritesFailWithStatus) {
  Put(MakeCapture("cap-1", "dev-1", At(10)));
  SqliteStoreOptions ro;
  ro.read_only = true;
  Reopen(ro);
  absl::StatusOr<std::optional<StoredReport>> r = store_->GetReport("dev-1", "");
  ASSERT_TRUE(r.ok() && r->has_value()) << r.status();
  absl::StatusOr<bool> put = store_->PutCapture(MakeCapture("cap-2", "dev-1", At(11)));
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.status().code(), absl::StatusCode::kFailedPrecondition) << put.status();
  EXPECT_NE(put.status().message().find("readonly"), std::string::npos) << put.status();
  DeviceRecord d;
  d.device_id = "dev-1";
  EXPECT_FALSE(store_->UpsertDevice(d).ok());
  SweepRecord s;
  s.sweep_id = "s";
  EXPECT_FALSE(store_->PutSweep(s).ok());
  EXPECT_FALSE(store_->ReplaceReport("cap-1", MakeReport("dev-1", At(10), 1), "{}").ok());
  absl::StatusOr<bool> has = store_->HasCapture("cap-2");
  ASSERT_TRUE(has.ok());
  EXPECT_FALSE(*has);
}

TEST_F(SqliteStoreTest, ChmodReadOnlyFileWritesFailWithStatus) {
  if (geteuid() == 0) GTEST_SKIP() << "root ignores file permissions; covered by ReadOnlyDatabase... with read_only";
  Put(MakeCapture("cap-1", "dev-1", At(10)));
  store_.reset();
  ASSERT_EQ(chmod(path_.c_str(), 0444), 0);
  ASSERT_EQ(chmod(dir_.path().c_str(), 0555), 0);  // nor can SQLite recreate the WAL next to it
  absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore(path_);
  if (store.ok()) {
    absl::StatusOr<bool> put = (*store)->PutCapture(MakeCapture("cap-2", "dev-1", At(11)));
    EXPECT_FALSE(put.ok());
  }  // failing to open at all is an equally acceptable error Status
  store = absl::InternalError("closed");
  chmod(dir_.path().c_str(), 0755);
  chmod(path_.c_str(), 0644);
}

TEST_F(SqliteStoreTest, FullDatabaseIsResourceExhaustedAndStoresNothing) {
  Put(MakeCapture("cap-1", "dev-1", At(10)));
  int64_t pages = 0;
  {
    SqliteDb db = RawDb();
    absl::StatusOr<Statement> st = db.Prepare("PRAGMA page_count");
    ASSERT_TRUE(st.ok());
    ASSERT_EQ(*st->Step(), StepResult::kRow);
    pages = st->ColumnInt64(0);
  }
  SqliteStoreOptions quota;
  quota.max_page_count = pages + 2;  // a "disk" with two free pages
  Reopen(quota);
  CaptureRecord big = MakeCapture("cap-big", "dev-1", At(11));
  big.raw_blob = std::string(1 << 20, '\x42');
  absl::StatusOr<bool> put = store_->PutCapture(big);
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.status().code(), absl::StatusCode::kResourceExhausted) << put.status();
  // Nothing half-written, and the store keeps working.
  absl::StatusOr<Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->captures, 1u);
  EXPECT_EQ(stats->process_rows, 2u);
  Reopen();
  Put(big);
}

TEST_P(StoreTest, ConcurrentWritersAndReaders) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 15;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        absl::StatusOr<bool> ok = store_->PutCapture(MakeCapture("t" + std::to_string(t) + "-" + std::to_string(i),
                                                                 "dev-" + std::to_string(t), At(i / 60, i % 60)));
        if (!ok.ok() || !*ok) ++failures;
        if (!store_->LatestPerDevice("total_kb", "").ok()) ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  absl::StatusOr<Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->captures, static_cast<uint64_t>(kThreads * kPerThread));
  absl::StatusOr<std::vector<FleetValueRow>> latest = store_->LatestPerDevice("total_kb", "");
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->size(), static_cast<size_t>(kThreads));
}

TEST(SqliteStoreMemoryTest, InMemoryDatabaseWorks) {
  absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore(":memory:");
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<bool> put = (*store)->PutCapture(MakeCapture("cap-1", "dev-1", At(10)));
  ASSERT_TRUE(put.ok() && *put) << put.status();
  absl::StatusOr<std::optional<StoredReport>> r = (*store)->GetReport("dev-1", At(11));
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->capture_id, "cap-1");
  // Reads share the writer's connection here; the callback still may write.
  EXPECT_TRUE((*store)
                  ->ForEachRawCapture(
                      "",
                      [&](const Store::RawCapture& raw) {
                        EXPECT_TRUE((*store)->ReplaceReport(raw.capture_id, MakeReport("dev-1", At(10), 1), "{}").ok());
                      })
                  .ok());
  EXPECT_EQ(OpenSqliteStore("").status().code(), absl::StatusCode::kInvalidArgument);
}

// ---- the hot queries are served by their indexes ----

bool Mentions(const std::vector<std::string>& plan, const std::string& text) {
  return std::any_of(plan.begin(), plan.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

std::string Join(const std::vector<std::string>& plan) {
  std::string out;
  for (const std::string& l : plan) out += l + "\n";
  return out;
}

bool UsesIndex(const std::vector<std::string>& plan, const std::string& index) {
  return Mentions(plan, "USING INDEX " + index) || Mentions(plan, "USING COVERING INDEX " + index);
}

// The only full scan allowed is of `devices` (alias d): one row per device, not per report.
bool OnlyScansDevices(const std::vector<std::string>& plan) {
  return std::all_of(plan.begin(), plan.end(),
                     [](const std::string& l) { return l.rfind("SCAN", 0) != 0 || l.rfind("SCAN d ", 0) == 0; });
}

class QueryPlanTest : public SqliteStoreTest {
 protected:
  void SetUp() override {
    SqliteStoreTest::SetUp();
    // 6 devices x 40 captures x 2 processes: 240 captures/device reports and 480 process rows.
    std::vector<CaptureRecord> batch;
    for (int d = 0; d < 6; ++d) {
      for (int i = 0; i < 40; ++i) {
        batch.push_back(MakeCapture("c" + std::to_string(d) + "-" + std::to_string(i), "dev-" + std::to_string(d),
                                    At(i / 4, (i % 4) * 15), i));
      }
    }
    absl::StatusOr<std::vector<bool>> inserted = store_->PutCaptures(batch);
    ASSERT_TRUE(inserted.ok()) << inserted.status();
    ASSERT_EQ(std::count(inserted->begin(), inserted->end(), true), 240);
  }
};

TEST_F(QueryPlanTest, ProcessTrendIsTheDevicesRangeOfReportsInTimeOrder) {
  absl::StatusOr<std::vector<std::string>> plan = store_->ExplainHotQuery(HotQuery::kProcessTrend);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(
      Mentions(*plan, "USING INDEX device_reports_by_device_time (device_id=? AND captured_at>? AND captured_at<?)"))
      << Join(*plan);
  EXPECT_FALSE(Mentions(*plan, "SCAN")) << Join(*plan);
  // In captured_at order already: only the rows of one time are sorted by capture_id.
  EXPECT_FALSE(Mentions(*plan, "USE TEMP B-TREE FOR ORDER BY")) << Join(*plan);
}

TEST_F(QueryPlanTest, LatestDeviceFigureProbesIndexPerDevice) {
  absl::StatusOr<std::vector<std::string>> plan = store_->ExplainHotQuery(HotQuery::kLatestDeviceFigure);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(UsesIndex(*plan, kDeviceReportsLatestIndex)) << Join(*plan);
  EXPECT_TRUE(OnlyScansDevices(*plan)) << Join(*plan);
  // The index ends at captured_at (schema version 16): only the last time's rows are sorted by capture_id.
  EXPECT_FALSE(Mentions(*plan, "USE TEMP B-TREE FOR ORDER BY")) << Join(*plan);
}

TEST_F(QueryPlanTest, LatestProcessFigureScansNoReportTable) {
  absl::StatusOr<std::vector<std::string>> plan = store_->ExplainHotQuery(HotQuery::kLatestProcessFigure);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(UsesIndex(*plan, kDeviceReportsLatestIndex)) << Join(*plan);
  EXPECT_TRUE(OnlyScansDevices(*plan)) << Join(*plan);
}

TEST_F(QueryPlanTest, ReportAtTimeUsesCapturesIndex) {
  absl::StatusOr<std::vector<std::string>> plan = store_->ExplainHotQuery(HotQuery::kReportAt);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(UsesIndex(*plan, kCapturesLatestIndex)) << Join(*plan);
  EXPECT_FALSE(Mentions(*plan, "SCAN captures")) << Join(*plan);
}

TEST_F(QueryPlanTest, HotQueriesAnswerCorrectlyOnTheLargerDatabase) {
  absl::StatusOr<std::vector<FleetValueRow>> latest = store_->LatestPerDevice("total_kb", "");
  ASSERT_TRUE(latest.ok());
  ASSERT_EQ(latest->size(), 6u);
  for (const FleetValueRow& row : *latest) {
    EXPECT_EQ(row.captured_at, At(9, 45));  // capture 39
    EXPECT_EQ(row.value_kb, 39);
  }
  absl::StatusOr<std::vector<HistoryRow>> trend = store_->ProcessHistory("dev-3", "surfaceflinger", "total_kb", "", 0);
  ASSERT_TRUE(trend.ok());
  ASSERT_EQ(trend->size(), 40u);
  EXPECT_TRUE(std::is_sorted(trend->begin(), trend->end(),
                             [](const HistoryRow& a, const HistoryRow& b) { return a.captured_at < b.captured_at; }));
}

// Process names are text from the device, numbered in process_names: names that SQL or a parser gives a
// meaning to (quotes, backslashes, commas, braces, the word NULL, nothing) come back exactly as written, each
// with its own figures, unknown ones unknown.
TEST_P(StoreTest, ProcessNamesComeBackAsWrittenWhateverTheyHold) {
  CaptureRecord c = MakeCapture("cap-names", "dev-1", At(1));
  c.report.processes.clear();
  const std::vector<std::string> names = {"say \"hi\"", "back\\slash", "a,b", "{braces}", "NULL", "", "com.app:remote"};
  for (size_t i = 0; i < names.size(); ++i) {
    ProcessReport& p = c.report.processes[static_cast<int>(100 + i)];
    p.pid = static_cast<int>(100 + i);
    p.name = names[i];
    if (i != 3) p.pss_kb = 1000 * static_cast<int64_t>(i + 1);  // one unknown PSS
  }
  absl::StatusOr<bool> stored = store_->PutCapture(c);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_TRUE(*stored);
  for (size_t i = 0; i < names.size(); ++i) {
    SCOPED_TRACE(names[i]);
    absl::StatusOr<std::vector<HistoryRow>> trend = store_->ProcessHistory("dev-1", names[i], "pss_kb", "", 0);
    ASSERT_TRUE(trend.ok()) << trend.status();
    ASSERT_EQ(trend->size(), 1u);
    EXPECT_EQ((*trend)[0].pid, static_cast<int>(100 + i));
    EXPECT_EQ((*trend)[0].value_kb, i != 3 ? std::optional<int64_t>(1000 * (i + 1)) : std::nullopt);
    if (names[i].empty()) continue;  // CaptureFigure's "" names a device figure
    absl::StatusOr<std::optional<int64_t>> figure = store_->CaptureFigure("cap-names", "pss_kb", names[i]);
    ASSERT_TRUE(figure.ok()) << figure.status();
    EXPECT_EQ(*figure, i != 3 ? std::optional<int64_t>(1000 * (i + 1)) : std::nullopt);
  }
  absl::StatusOr<Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->process_rows, names.size());
}

// Concurrent writers (the server's workers): each capture stored once, and exactly one caller told it is new.
TEST_P(StoreTest, ConcurrentPutsOfTheSameCapturesStoreEachOnceAndSayNewOnce) {
  constexpr int kThreads = 4, kCaptures = 40;
  std::vector<std::vector<int>> answers(kThreads, std::vector<int>(kCaptures, -1));  // 1 new, 0 duplicate, 2 error
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kCaptures; ++k) {
        const int id = (k + t * 7) % kCaptures;  // each thread in another order
        absl::StatusOr<bool> r = store_->PutCapture(MakeCapture("cap-" + std::to_string(id), "dev-1", At(id % 24)));
        answers[static_cast<size_t>(t)][static_cast<size_t>(id)] = r.ok() ? (*r ? 1 : 0) : 2;
        if (!r.ok()) ADD_FAILURE() << r.status();
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int id = 0; id < kCaptures; ++id) {
    int news = 0, duplicates = 0;
    for (int t = 0; t < kThreads; ++t) {
      news += answers[static_cast<size_t>(t)][static_cast<size_t>(id)] == 1;
      duplicates += answers[static_cast<size_t>(t)][static_cast<size_t>(id)] == 0;
    }
    EXPECT_EQ(news, 1) << "cap-" << id;
    EXPECT_EQ(duplicates, kThreads - 1) << "cap-" << id;
  }
  absl::StatusOr<Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->captures, static_cast<uint64_t>(kCaptures));
  EXPECT_EQ(stats->process_rows, static_cast<uint64_t>(2 * kCaptures));  // MakeReport has two processes
}

// A record the database refuses (here a delta naming a keyframe that is not stored: the foreign key)
// fails alone; the captures written beside it, at the same time, are stored.
TEST_P(StoreTest, ARefusedCaptureFailsAloneInItsGroup) {
  constexpr int kGood = 60, kBad = 20;
  std::atomic<int> good_stored{0}, bad_refused{0};
  std::thread good([&] {
    for (int k = 0; k < kGood; ++k) {
      absl::StatusOr<bool> r = store_->PutCapture(MakeCapture("good-" + std::to_string(k), "dev-1", At(k % 24)));
      good_stored += r.ok() && *r;
    }
  });
  std::thread good2([&] {
    for (int k = 0; k < kGood; ++k) {
      absl::StatusOr<bool> r = store_->PutCapture(MakeCapture("good2-" + std::to_string(k), "dev-2", At(k % 24)));
      good_stored += r.ok() && *r;
    }
  });
  std::thread bad([&] {
    for (int k = 0; k < kBad; ++k) {
      CaptureRecord c = MakeCapture("bad-" + std::to_string(k), "dev-3", At(k % 24));
      c.raw_codec = "zstd-delta+proto";
      c.raw_base = "no-such-keyframe";
      absl::StatusOr<bool> r = store_->PutCapture(c);
      bad_refused += !r.ok();
    }
  });
  good.join();
  good2.join();
  bad.join();
  EXPECT_EQ(good_stored.load(), 2 * kGood);
  EXPECT_EQ(bad_refused.load(), kBad);
  absl::StatusOr<Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->captures, static_cast<uint64_t>(2 * kGood));
  absl::StatusOr<bool> has = store_->HasCapture("bad-0");
  ASSERT_TRUE(has.ok());
  EXPECT_FALSE(*has);
}

}  // namespace
}  // namespace sqlite_store_test
}  // namespace memfleet::storage
