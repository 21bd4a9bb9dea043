// The store's baseline methods, on both backends (SQLite, PostgreSQL): versions in import order with the file kept
// verbatim, and the report lists a baseline check reads (a sweep's newest capture per device; the latest per device
// since a time; the latest per device and build of its captures).
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "storage/store.h"
#include "tests/support/store_backends.h"

namespace memfleet::storage {
namespace {

class BaselineStoreTest : public testing::StoreOnBackendTest {
 protected:
  void Put(const std::string& capture_id, const std::string& device_id, const std::string& at,
           const std::string& sweep_id, const std::string& build = "") {
    DeviceRecord d;
    d.device_id = device_id;
    d.last_seen_at = at;
    ASSERT_TRUE(store_->UpsertDevice(d).ok());
    CaptureRecord c;
    c.capture_id = capture_id;
    c.device_id = device_id;
    c.captured_at = at;
    c.received_at = at;
    c.sweep_id = sweep_id;
    c.build_fingerprint = build;
    c.raw_codec = "zstd+proto";
    c.raw_blob = "x";
    c.report.device_id = device_id;
    c.report.captured_at = at;
    c.report_json = "{\"capture\":\"" + capture_id + "\"}";
    absl::StatusOr<bool> inserted = store_->PutCapture(c);
    ASSERT_TRUE(inserted.ok()) << inserted.status();
  }
  static std::vector<std::string> Ids(const std::vector<StoredReport>& reports) {
    std::vector<std::string> ids;
    for (const StoredReport& r : reports) ids.push_back(r.capture_id);
    return ids;
  }
};

TEST_P(BaselineStoreTest, ImportsAreNewVersionsKeptVerbatim) {
  EXPECT_FALSE(store_->GetBaseline(0)->has_value());
  const std::string first = "{\n  \"name\": \"a\"  // as written\n}";
  absl::StatusOr<int64_t> v1 = store_->PutBaseline("a", "2026-12-01T10:00:00+02:00", first);
  ASSERT_TRUE(v1.ok()) << v1.status();
  EXPECT_EQ(*v1, 1);
  EXPECT_EQ(*store_->PutBaseline("b", "2026-12-02T08:00:00Z", "second"), 2);
  Reopen();  // survives a restart
  absl::StatusOr<std::optional<BaselineRecord>> latest = store_->GetBaseline(0);
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->version, 2);
  EXPECT_EQ((*latest)->name, "b");
  absl::StatusOr<std::optional<BaselineRecord>> one = store_->GetBaseline(1);
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ((*one)->raw_text, first);
  EXPECT_EQ((*one)->imported_at, "2026-12-01T08:00:00.000Z");  // normalized to UTC
  EXPECT_FALSE(store_->GetBaseline(3)->has_value());
  EXPECT_EQ(store_->GetBaseline(-1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->PutBaseline("", "2026-12-02T08:00:00Z", "x").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(BaselineStoreTest, SweepReportsAreTheNewestPerDeviceOfThatSweep) {
  Put("a-1", "dev-a", "2026-12-01T08:00:00Z", "sweep-1");
  Put("a-2", "dev-a", "2026-12-01T08:05:00Z", "sweep-1");  // captured twice in the sweep: the newer
  Put("b-1", "dev-b", "2026-12-01T08:01:00Z", "sweep-1");
  Put("b-2", "dev-b", "2026-12-01T09:00:00Z", "sweep-2");  // another sweep
  Put("c-1", "dev-c", "2026-12-01T08:02:00Z", "");         // periodic
  absl::StatusOr<std::vector<StoredReport>> r = store_->LatestReportsOfSweep("sweep-1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Ids(*r), (std::vector<std::string>{"a-2", "b-1"}));
  EXPECT_EQ((*r)[0].report_json, "{\"capture\":\"a-2\"}");
  EXPECT_TRUE(store_->LatestReportsOfSweep("nope")->empty());
  EXPECT_EQ(store_->LatestReportsOfSweep("").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(BaselineStoreTest, LatestReportsSinceATime) {
  Put("a-1", "dev-a", "2026-12-01T08:00:00Z", "");
  Put("a-2", "dev-a", "2026-12-02T08:00:00Z", "");
  Put("b-1", "dev-b", "2026-11-20T08:00:00Z", "");
  EXPECT_EQ(Ids(*store_->LatestReportsSince("")), (std::vector<std::string>{"a-2", "b-1"}));
  // dev-b's latest is older than the bound: left out (not replaced by an older capture of dev-a).
  EXPECT_EQ(Ids(*store_->LatestReportsSince("2026-12-01T00:00:00Z")), (std::vector<std::string>{"a-2"}));
  EXPECT_TRUE(store_->LatestReportsSince("2026-12-03T00:00:00Z")->empty());
  EXPECT_EQ(store_->LatestReportsSince("yesterday").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(BaselineStoreTest, LatestReportPerDeviceAndBuildOfItsCaptures) {
  // dev-a was upgraded A -> B (two captures on each); dev-b is still on A; dev-c has one capture stored
  // without a build (as every capture before schema 8).
  Put("a-1", "dev-a", "2026-12-01T08:00:00Z", "", "A");
  Put("a-2", "dev-a", "2026-12-01T09:00:00Z", "", "A");
  Put("a-3", "dev-a", "2026-12-02T08:00:00Z", "", "B");
  Put("a-4", "dev-a", "2026-12-02T09:00:00Z", "", "B");
  Put("b-1", "dev-b", "2026-12-01T10:00:00Z", "", "A");
  Put("c-1", "dev-c", "2026-12-01T11:00:00Z", "", "");
  Reopen();  // the build is stored with the capture, not held in memory
  absl::StatusOr<std::vector<StoredReport>> r = store_->LatestReportsPerBuild("");
  ASSERT_TRUE(r.ok()) << r.status();
  // By device, then build: one report per (device, build), the newest of that pair.
  EXPECT_EQ(Ids(*r), (std::vector<std::string>{"a-2", "a-4", "b-1", "c-1"}));
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ((*r)[0].build_fingerprint, "A");
  EXPECT_EQ((*r)[1].build_fingerprint, "B");
  EXPECT_EQ((*r)[2].build_fingerprint, "A");
  EXPECT_EQ((*r)[3].build_fingerprint, "");  // NULL: the caller falls back to the device's build
  EXPECT_EQ((*r)[1].report_json, "{\"capture\":\"a-4\"}");
  EXPECT_EQ((*r)[1].captured_at, "2026-12-02T09:00:00.000Z");
  // Since a time: a pair whose newest report is older is left out, not replaced by nothing newer.
  EXPECT_EQ(Ids(*store_->LatestReportsPerBuild("2026-12-01T10:00:00Z")),
            (std::vector<std::string>{"a-4", "b-1", "c-1"}));
  EXPECT_EQ(store_->LatestReportsPerBuild("soon").status().code(), absl::StatusCode::kInvalidArgument);
  // The other lists are unchanged: per device, the latest whatever its build, no build filled in.
  absl::StatusOr<std::vector<StoredReport>> latest = store_->LatestReportsSince("");
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(Ids(*latest), (std::vector<std::string>{"a-4", "b-1", "c-1"}));
  EXPECT_EQ((*latest)[0].build_fingerprint, "");
}

INSTANTIATE_TEST_SUITE_P(Backends, BaselineStoreTest, testing::kBothBackends, testing::StoreBackendName);

}  // namespace
}  // namespace memfleet::storage
