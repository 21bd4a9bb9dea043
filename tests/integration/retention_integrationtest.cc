// Retention on a farm's history, through the real binaries: `memfleet-server compact` and the background
// thinning of `memfleet-server --retain-full-days 1 --retain-hourly-days 7` (docs/reliability.md, "What
// retention keeps"), on both backends: `--db` an SQLite file, or a database on a real PostgreSQL
// (tests/support/store_backends.h). The history (tests/support/farm_history.h) is two weeks of 5-minute
// captures of four devices, a keyframe every 64, written into the database before the binary opens it:
//   farm-0..2  capturing until two minutes ago;
//   farm-quiet silent for nine days: its last capture is not its day's peak and reports another platform
//              than the ones before, so a deletion of it would move `devices` and `report` back and leave
//              the device row with a fact of a capture that is gone;
//   and farm-2's latest capture is a delta naming one of farm-0's old keyframes (a database written by a
//   bug), so that thinning farm-0 fails part way: the run goes on with the other devices and says so.
// What each device must keep is stated from the policy, independently of the planner: every capture under a
// day old, each hour's (1-7 days) or day's (older) highest total, the latest capture, and nothing else but
// keyframes a kept delta names; no kept delta without its keyframe.
// And what pins a capture beyond that, with a rogue agent on loopback (tests/support/raw_agent.h) against
// the real server with agent tokens: only the answer to a sweep that asked its device (and a sweep's
// labels), never an agent's own labels or a sweep id it merely names.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "capture/node_path.h"
#include "absl/strings/str_cat.h"
#include "common/exit_codes.h"
#include "common/utc_time.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "storage/backends/open_store.h"
#include "tests/support/farm_history.h"
#include "tests/support/load_tree.h"
#include "tests/support/moving_capture.h"
#include "tests/support/raw_agent.h"
#include "tests/support/server_process.h"
#include "tests/support/store_backends.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"

namespace memfleet {
namespace retention_scenario {
namespace {

using testing::FarmCapture;

constexpr int64_t kMinuteMs = 60'000;
constexpr int64_t kHourMs = 60 * kMinuteMs;
constexpr int64_t kDayMs = 24 * kHourMs;
constexpr int kPerDay = 288;
constexpr int64_t kFullMs = 1 * kDayMs;    // --retain-full-days 1
constexpr int64_t kHourlyMs = 7 * kDayMs;  // --retain-hourly-days 7
// The binaries read the clock a little after the test: captures this close to a window's edge may fall on
// either side, so their buckets are not judged.
constexpr int64_t kEdgeSlackMs = 10 * kMinuteMs;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0) ? 1 : 0); }

std::string Utc(int64_t ms) {
  return FormatUtcMillis(std::chrono::system_clock::time_point(std::chrono::milliseconds(ms)));
}

class RetentionIntegrationTest : public ::testing::TestWithParam<testing::StoreBackend> {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-retention-e2e-");
    ASSERT_FALSE(dir_.empty());
    now_ms_ = NowMs();
    const int64_t last_ms = now_ms_ - 2 * kMinuteMs;
    const int live = 14 * kPerDay;
    std::vector<testing::FarmDevice> devices;
    for (const char* id : {"farm-0", "farm-1", "farm-2"}) {
      devices.push_back({id, last_ms - (live - 1) * testing::kFarmIntervalMs, live});
    }
    devices.push_back({"farm-quiet", last_ms - 9 * kDayMs - (5 * kPerDay - 1) * testing::kFarmIntervalMs, 5 * kPerDay});
    plan_ = testing::PlanFarmHistory(devices);

    // farm-quiet's last word: below the capture before it (same day), on another platform.
    FarmCapture* quiet_last = &plan_.back();
    ASSERT_EQ(quiet_last->device_id, "farm-quiet");
    quiet_last->total_kb = (quiet_last - 1)->total_kb - 1000;
    quiet_last->platform = report::Platform::kMtk;
    quiet_last_ = *quiet_last;

    // One of farm-0's keyframes that thinning deletes (old, no day's peak among its deltas), named by
    // farm-2's latest capture.
    shared_keyframe_ = DoomedKeyframeOf("farm-0");
    ASSERT_FALSE(shared_keyframe_.empty());
    FarmCapture* farm2_last = nullptr;
    for (FarmCapture& c : plan_) {
      if (c.device_id == "farm-2") farm2_last = &c;
    }
    ASSERT_NE(farm2_last, nullptr);
    ASSERT_FALSE(farm2_last->keyframe_id.empty());
    farm2_last->keyframe_id = shared_keyframe_;

    db_ = testing::NewStoreLocation(GetParam(), dir_);
    ASSERT_FALSE(db_.empty());
    absl::StatusOr<std::unique_ptr<storage::SqlStore>> store = storage::OpenStore(db_);
    ASSERT_TRUE(store.ok()) << store.status();
    absl::Status written = testing::WriteFarmHistory(**store, plan_);
    ASSERT_TRUE(written.ok()) << written;
  }

  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A keyframe of `device` older than the hourly window whose group (it and the deltas naming it) holds no
  // day's peak: the plan deletes the whole group.
  std::string DoomedKeyframeOf(const std::string& device) const {
    std::map<int64_t, const FarmCapture*> peak_of_day;
    for (const FarmCapture& c : plan_) {
      if (c.device_id != device) continue;
      const FarmCapture*& peak = peak_of_day[FloorDiv(c.at_ms, kDayMs)];
      if (peak == nullptr || c.total_kb >= peak->total_kb) peak = &c;
    }
    std::set<std::string> needed;
    for (const auto& [day, peak] : peak_of_day) {
      needed.insert(peak->keyframe_id.empty() ? peak->capture_id : peak->keyframe_id);
    }
    for (const FarmCapture& c : plan_) {
      if (c.device_id == device && c.keyframe_id.empty() && now_ms_ - c.at_ms > kHourlyMs + kDayMs &&
          needed.count(c.capture_id) == 0) {
        return c.capture_id;
      }
    }
    return "";
  }

  // The stored captures of `device`: id -> the keyframe it names ("" for a whole one).
  std::map<std::string, std::string> Stored(const std::string& device) {
    absl::StatusOr<std::unique_ptr<storage::SqlStore>> store = storage::OpenStore(db_);
    EXPECT_TRUE(store.ok()) << store.status();
    std::map<std::string, std::string> ids;
    if (!store.ok()) return ids;
    absl::StatusOr<std::vector<storage::RetentionRow>> rows = (*store)->RetentionRows(device);
    EXPECT_TRUE(rows.ok()) << rows.status();
    if (rows.ok()) {
      for (const storage::RetentionRow& r : *rows) ids[r.capture_id] = r.keyframe_id;
    }
    return ids;
  }

  // Checks `device`'s stored captures against the policy (see the file comment); returns how many it kept.
  // `stored`: every device's stored captures (a delta may name another device's keyframe); `also_kept`:
  // captures that may stay beyond the policy.
  size_t ExpectThinned(const std::string& device, const std::map<std::string, std::string>& stored,
                       const std::set<std::string>& also_kept = {}) {
    std::map<std::string, std::string> kept;
    for (const FarmCapture& c : plan_) {
      auto it = stored.find(c.capture_id);
      if (c.device_id == device && it != stored.end()) kept.insert(*it);
    }
    std::map<std::pair<int64_t, int64_t>, const FarmCapture*> peaks;  // (width, index) -> the bucket's peak
    std::set<std::pair<int64_t, int64_t>> unjudged;
    std::vector<const FarmCapture*> mine;
    for (const FarmCapture& c : plan_) {
      if (c.device_id != device) continue;
      mine.push_back(&c);
      const int64_t age = now_ms_ - c.at_ms;
      if (age < kFullMs - kEdgeSlackMs) continue;
      const int64_t width = age < kHourlyMs ? kHourMs : kDayMs;
      const std::pair<int64_t, int64_t> bucket{width, FloorDiv(c.at_ms, width)};
      if (std::abs(age - kFullMs) < kEdgeSlackMs || std::abs(age - kHourlyMs) < kEdgeSlackMs) unjudged.insert(bucket);
      const FarmCapture*& peak = peaks[bucket];
      if (peak == nullptr || c.total_kb >= peak->total_kb) peak = &c;
    }
    std::set<std::string> named;  // keyframes the kept deltas name
    for (const auto& [id, keyframe] : kept) {
      if (!keyframe.empty()) named.insert(keyframe);
    }
    for (const std::string& keyframe : named) {
      EXPECT_EQ(stored.count(keyframe), 1u) << device << ": a kept delta names " << keyframe << ", which is gone";
    }
    EXPECT_EQ(kept.count(mine.back()->capture_id), 1u)
        << device << " lost its latest capture " << mine.back()->capture_id;
    for (const FarmCapture* c : mine) {
      const int64_t age = now_ms_ - c->at_ms;
      if (age < kFullMs - kEdgeSlackMs) {
        EXPECT_EQ(kept.count(c->capture_id), 1u) << device << ": " << c->capture_id << " is under a day old";
        continue;
      }
      const int64_t width = age < kHourlyMs ? kHourMs : kDayMs;
      const std::pair<int64_t, int64_t> bucket{width, FloorDiv(c->at_ms, width)};
      if (unjudged.count(bucket) != 0) continue;
      const bool peak = peaks[bucket] == c;
      if (peak) {
        EXPECT_EQ(kept.count(c->capture_id), 1u)
            << device << ": " << c->capture_id << " is its " << (width == kHourMs ? "hour" : "day") << "'s peak";
      } else if (kept.count(c->capture_id) != 0 && c != mine.back() && also_kept.count(c->capture_id) == 0) {
        EXPECT_TRUE(c->keyframe_id.empty() && named.count(c->capture_id) != 0)
            << device << ": " << c->capture_id << " (" << Utc(c->at_ms) << ") is kept but is neither its bucket's "
            << "peak nor a kept delta's keyframe";
      }
    }
    return kept.size();
  }

  // Every device's stored captures against the policy; farm-0 (whose thinning failed part way) may also
  // keep whole captures whose batch did not commit.
  void ExpectFarmThinned() {
    std::map<std::string, std::string> stored;
    for (const char* device : {"farm-0", "farm-1", "farm-2", "farm-quiet"}) stored.merge(Stored(device));
    for (const char* device : {"farm-1", "farm-2", "farm-quiet"}) {
      const size_t kept = ExpectThinned(device, stored);
      EXPECT_LT(kept, static_cast<size_t>(device == std::string("farm-quiet") ? 5 * kPerDay : 14 * kPerDay) / 4)
          << device << " was not thinned";
    }
    std::set<std::string> farm0_whole;
    for (const FarmCapture& c : plan_) {
      if (c.device_id == "farm-0" && c.keyframe_id.empty()) farm0_whole.insert(c.capture_id);
    }
    ExpectThinned("farm-0", stored, farm0_whole);
    const std::map<std::string, std::string> farm0 = Stored("farm-0");
    EXPECT_EQ(farm0.count(shared_keyframe_), 1u) << "farm-2's latest capture names it";
    size_t farm0_deltas = 0;
    for (const auto& [id, keyframe] : farm0) farm0_deltas += keyframe.empty() ? 0 : 1;
    EXPECT_LT(farm0_deltas, static_cast<size_t>(14 * kPerDay) / 4) << "farm-0's deltas go before any keyframe";
  }

  std::string dir_;
  std::string db_;  // --db: DIR/memfleet.db, or the PostgreSQL database's URI
  int64_t now_ms_ = 0;
  std::vector<FarmCapture> plan_;
  FarmCapture quiet_last_;
  std::string shared_keyframe_;
};

TEST_P(RetentionIntegrationTest, CompactThinsEveryDeviceKeepsEachLatestAndNamesTheOneItCouldNotFinish) {
  const size_t before = Stored("farm-1").size();
  testing::Subprocess dry({testing::Bin("memfleet-server"), "--db", db_, "compact", "--retain-full-days", "1",
                           "--retain-hourly-days", "7", "--dry-run"},
                          dir_ + "/dry.log");
  ASSERT_EQ(dry.WaitExit(std::chrono::seconds(240)), 0) << dry.Log();
  EXPECT_NE(dry.Log().find("captures would be deleted"), std::string::npos) << dry.Log();
  EXPECT_EQ(Stored("farm-1").size(), before) << "a dry run deleted captures";

  testing::Subprocess compact(
      {testing::Bin("memfleet-server"), "--db", db_, "compact", "--retain-full-days", "1", "--retain-hourly-days", "7"},
      dir_ + "/compact.log");
  EXPECT_EQ(compact.WaitExit(std::chrono::seconds(240)), kExitPartial) << compact.Log();  // farm-0 failed
  const std::string log = compact.Log();
  EXPECT_NE(log.find("compact: 4 devices, "), std::string::npos) << log;
  EXPECT_NE(log.find(", 1 device failed"), std::string::npos) << log;
  EXPECT_NE(log.find("not thinned: farm-0: "), std::string::npos) << log;
  EXPECT_EQ(log.find("not thinned: farm-1"), std::string::npos) << log;
  ExpectFarmThinned();

  // The quiet device's facts are still those of its last capture.
  absl::StatusOr<std::unique_ptr<storage::SqlStore>> store = storage::OpenStore(db_);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::optional<storage::StoredReport>> report = (*store)->GetReport("farm-quiet", "");
  ASSERT_TRUE(report.ok() && report->has_value()) << report.status();
  EXPECT_EQ((*report)->capture_id, quiet_last_.capture_id);
  absl::StatusOr<std::vector<storage::DeviceSummaryRow>> devices = (*store)->ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  for (const storage::DeviceSummaryRow& row : *devices) {
    if (row.device.device_id != "farm-quiet") continue;
    EXPECT_EQ(row.last_capture_at, Utc(quiet_last_.at_ms));
    EXPECT_EQ(row.last_total_kb, quiet_last_.total_kb);
    EXPECT_EQ(row.device.platform, "mtk");
  }
}

TEST_P(RetentionIntegrationTest, TheServersBackgroundThinningDoesTheSameWhileTheServerAnswers) {
  testing::ServerProcess server(dir_, {"--retain-full-days", "1", "--retain-hourly-days", "7"}, db_);
  ASSERT_FALSE(server.address().empty());
  // The worker runs at start: its summary, then the device it could not finish.
  ASSERT_FALSE(server.process().WaitForLine("retention: 4 devices, ", std::chrono::seconds(240)).empty())
      << server.Log();
  ASSERT_FALSE(server.process().WaitForLine("retention: not thinned: farm-0: ", std::chrono::seconds(60)).empty())
      << server.Log();
  EXPECT_NE(server.Log().find(", 1 device failed"), std::string::npos) << server.Log();
  EXPECT_EQ(server.Log().find("not thinned: farm-1"), std::string::npos) << server.Log();
  ExpectFarmThinned();

  // `memfleet devices` and `report` still show the quiet device's last capture, and its row agrees with it.
  grpc::ClientContext list_ctx;
  list_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::ListDevicesResponse devices;
  ASSERT_TRUE(server.query().ListDevices(&list_ctx, v1::ListDevicesRequest(), &devices).ok());
  bool seen = false;
  for (const v1::DeviceSummary& d : devices.devices()) {
    if (d.device_id() != "farm-quiet") continue;
    seen = true;
    EXPECT_EQ(d.last_capture_at(), Utc(quiet_last_.at_ms));
    EXPECT_EQ(d.last_total_kb(), quiet_last_.total_kb);
    EXPECT_EQ(d.platform(), "mtk");
  }
  EXPECT_TRUE(seen);
  nlohmann::json report = server.Report("farm-quiet");
  EXPECT_EQ(report.value("captured_at", ""), Utc(quiet_last_.at_ms)) << report.dump().substr(0, 300);
  EXPECT_EQ(report.value("platform", ""), "mtk");
}

INSTANTIATE_TEST_SUITE_P(Backends, RetentionIntegrationTest, testing::kBothBackends, testing::StoreBackendName);

// `--retain-raw-days 1` alone, through the real binaries on both backends: two devices, three days of
// 5-minute captures (a keyframe every 64) until two minutes ago. `compact --dry-run` counts and drops
// nothing; `compact` drops the raw text of captures over a day old and deletes none; `--reaccount` then
// re-accounts the others and says how many it skipped and why; the server started with the flag does it in
// the background. What goes is checked against the window (the binaries read the clock a little later:
// captures within kEdgeSlackMs of the edge are not judged).
class RawWindowIntegrationTest : public ::testing::TestWithParam<testing::StoreBackend> {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-raw-window-e2e-");
    ASSERT_FALSE(dir_.empty());
    now_ms_ = NowMs();
    const int captures = 3 * kPerDay;
    const int64_t first_ms = now_ms_ - 2 * kMinuteMs - (captures - 1) * testing::kFarmIntervalMs;
    plan_ = testing::PlanFarmHistory({{"farm-0", first_ms, captures}, {"farm-1", first_ms + kMinuteMs, captures}});
    db_ = testing::NewStoreLocation(GetParam(), dir_);
    ASSERT_FALSE(db_.empty());
    absl::StatusOr<std::unique_ptr<storage::SqlStore>> store = storage::OpenStore(db_);
    ASSERT_TRUE(store.ok()) << store.status();
    absl::Status written = testing::WriteFarmHistory(**store, plan_);
    ASSERT_TRUE(written.ok()) << written;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Capture id -> whether its raw text is gone, every device.
  std::map<std::string, bool> RawDropped() {
    std::map<std::string, bool> dropped;
    absl::StatusOr<std::unique_ptr<storage::SqlStore>> store = storage::OpenStore(db_);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return dropped;
    for (const char* device : {"farm-0", "farm-1"}) {
      absl::StatusOr<std::vector<storage::RetentionRow>> rows = (*store)->RetentionRows(device);
      EXPECT_TRUE(rows.ok()) << rows.status();
      if (!rows.ok()) continue;
      for (const storage::RetentionRow& r : *rows) dropped[r.capture_id] = r.raw_dropped;
    }
    return dropped;
  }

  // Every capture is still stored; none under a day old lost its raw text, and most over it did.
  size_t ExpectRawWindowApplied() {
    const std::map<std::string, bool> dropped = RawDropped();
    EXPECT_EQ(dropped.size(), plan_.size()) << "the raw window deleted captures";
    size_t n = 0;
    size_t old = 0;
    for (const FarmCapture& c : plan_) {
      const int64_t age = now_ms_ - c.at_ms;
      const bool gone = dropped.count(c.capture_id) != 0 && dropped.at(c.capture_id);
      n += gone ? 1 : 0;
      if (age < kDayMs - kEdgeSlackMs) {
        EXPECT_FALSE(gone) << c.capture_id << " is under a day old";
      }
      if (age > kDayMs + kEdgeSlackMs) ++old;
    }
    // Beyond the window only the keyframes that deltas inside it or the next captures need keep theirs.
    EXPECT_GE(n + 4, old);
    EXPECT_GT(n, 2u * kPerDay);
    return n;
  }

  std::string dir_;
  std::string db_;
  int64_t now_ms_ = 0;
  std::vector<FarmCapture> plan_;
};

TEST_P(RawWindowIntegrationTest, CompactDropsOldRawTextOnlyAndReaccountSaysWhatItSkipped) {
  testing::Subprocess none({testing::Bin("memfleet-server"), "--db", db_, "compact"}, dir_ + "/none.log");
  EXPECT_EQ(none.WaitExit(std::chrono::seconds(60)), kExitUsage) << none.Log();
  EXPECT_NE(none.Log().find("--retain-raw-days N"), std::string::npos) << none.Log();

  testing::Subprocess dry(
      {testing::Bin("memfleet-server"), "--db", db_, "compact", "--retain-raw-days", "1", "--dry-run"},
      dir_ + "/dry.log");
  ASSERT_EQ(dry.WaitExit(std::chrono::seconds(240)), 0) << dry.Log();
  EXPECT_NE(dry.Log().find("none deleted, raw text of "), std::string::npos) << dry.Log();
  EXPECT_NE(dry.Log().find("older than 1 day would be dropped"), std::string::npos) << dry.Log();
  for (const auto& [id, gone] : RawDropped()) ASSERT_FALSE(gone) << id << ": a dry run dropped raw text";

  testing::Subprocess compact({testing::Bin("memfleet-server"), "--db", db_, "compact", "--retain-raw-days", "1"},
                              dir_ + "/compact.log");
  ASSERT_EQ(compact.WaitExit(std::chrono::seconds(240)), 0) << compact.Log();
  const size_t dropped = ExpectRawWindowApplied();
  EXPECT_NE(
      compact.Log().find(absl::StrCat("compact: 2 devices, ", plan_.size(), " captures, none deleted, raw text of ",
                                      dropped, " captures older than 1 day dropped")),
      std::string::npos)
      << compact.Log();

  testing::Subprocess reaccount({testing::Bin("memfleet-server"), "--db", db_, "--reaccount"}, dir_ + "/re.log");
  ASSERT_EQ(reaccount.WaitExit(std::chrono::seconds(240)), 0) << reaccount.Log();
  EXPECT_NE(reaccount.Log().find(absl::StrCat("re-accounted ", plan_.size() - dropped, " captures, 0 failed, ", dropped,
                                              " skipped: their raw text is beyond the raw window (1 day, "
                                              "memfleet-server --retain-raw-days)")),
            std::string::npos)
      << reaccount.Log();
}

TEST_P(RawWindowIntegrationTest, TheServerStartedWithTheFlagAloneDropsInTheBackground) {
  testing::ServerProcess server(dir_, {"--retain-raw-days", "1"}, db_);
  ASSERT_FALSE(server.address().empty());
  ASSERT_FALSE(server.process().WaitForLine("retention: 2 devices, ", std::chrono::seconds(240)).empty())
      << server.Log();
  const size_t dropped = ExpectRawWindowApplied();
  EXPECT_NE(server.Log().find(absl::StrCat("raw text of ", dropped, " captures older than 1 day dropped")),
            std::string::npos)
      << server.Log();
}

INSTANTIATE_TEST_SUITE_P(Backends, RawWindowIntegrationTest, testing::kBothBackends, testing::StoreBackendName);

// Two devices with agent tokens, one hour of captures each three days back (the moving sample: each
// capture's total above the one before, so the hour's peak is its last) and one capture now. sim-a answers
// a real sweep labelled run=R1 with one of them and writes run=R1 into another's header; the rogue sim-b
// names sim-a's sweep and a sweep that never was, with run=R1 in its header. Then the real `compact`.
TEST(RetentionPinsIntegrationTest, OnlyASweepsAnswerOutlivesThinningNotAnAgentsLabelsOrSweepIds) {
  const std::string dir = testing::MakeTempDir("memfleet-retention-pins-");
  ASSERT_FALSE(dir.empty());
  const std::string token_a = testing::AddServerToken(dir, "agent", "a", "sim-a");
  const std::string token_b = testing::AddServerToken(dir, "agent", "b", "sim-b");
  const std::string admin = testing::AddServerToken(dir, "admin", "lab");
  std::map<std::string, std::map<int, std::string>> ids;  // device -> minute -> capture id
  {
    testing::ServerProcess server(dir);
    ASSERT_FALSE(server.address().empty());
    testing::RawAgent a(server.address(), grpc::InsecureChannelCredentials(), token_a);
    testing::RawAgent b(server.address(), grpc::InsecureChannelCredentials(), token_b);
    ASSERT_TRUE(a.Hello("sim-a"));
    ASSERT_TRUE(b.Hello("sim-b"));

    // The sweep, as `memfleet sweep --where device_id=sim-a --label run=R1` starts it.
    bool finished = false;
    std::thread sweeper([&] {
      grpc::ClientContext ctx;
      ctx.AddMetadata("authorization", "Bearer " + admin);
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
      v1::SweepRequest request;
      request.mutable_selector()->add_where("device_id=sim-a");
      request.set_deadline_s(90);
      v1::Label* label = request.add_labels();
      label->set_key("run");
      label->set_value("R1");
      auto reader = server.query().StartSweep(&ctx, request);
      for (v1::SweepProgress p; reader->Read(&p);) finished = finished || p.finished();
      reader->Finish();
    });
    std::optional<v1::ServerMessage> command = a.Read();
    ASSERT_TRUE(command.has_value() && command->has_capture_now()) << server.Log();
    const std::string sweep = command->capture_now().sweep_id();

    const capture::Capture sample = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree"));
    const int64_t hour_ms = FloorDiv(NowMs() - 3 * kDayMs, kHourMs) * kHourMs;
    int seq = 0;
    const auto send = [&](testing::RawAgent& agent, const std::string& device, int minute, const std::string& sweep_id,
                          const nlohmann::json& labels) {
      capture::Capture c = testing::Later(sample, minute < 0 ? 100 : minute);
      nlohmann::json header = nlohmann::json::parse(*c.FileContent(capture::kHeaderNode));
      header["device_id"] = device;
      if (!labels.is_null()) header["labels"] = labels;
      c.AddFile(capture::kHeaderNode, header.dump());
      const std::string id = testing::CaptureId(device, ++seq);
      const int64_t at_ms = minute < 0 ? NowMs() - kMinuteMs : hour_ms + minute * kMinuteMs;
      std::optional<v1::ServerMessage> answer = agent.SendCapture(c, id, Utc(at_ms), sweep_id);
      EXPECT_TRUE(answer.has_value() && answer->has_ack())
          << device << " " << minute << ": " << (answer ? answer->DebugString() : server.Log());
      ids[device][minute] = id;
    };
    const nlohmann::json run_r1 = {{"run", "R1"}};
    for (int minute = 5; minute <= 55; minute += 5) {
      send(a, "sim-a", minute, minute == 20 ? sweep : "", minute == 25 ? run_r1 : nlohmann::json());
      send(b, "sim-b", minute,
           minute == 20   ? sweep
           : minute == 30 ? "sweep-20261201T000000Z-000001"
                          : "",
           minute == 20 ? run_r1 : nlohmann::json());
    }
    send(a, "sim-a", -1, "", nullptr);  // each device's latest, now
    send(b, "sim-b", -1, "", nullptr);
    sweeper.join();
    EXPECT_TRUE(finished) << server.Log();
  }

  testing::Subprocess compact({testing::Bin("memfleet-server"), "--db", dir + "/memfleet.db", "compact",
                               "--retain-full-days", "1", "--retain-hourly-days", "2"},
                              dir + "/compact.log");
  ASSERT_EQ(compact.WaitExit(std::chrono::seconds(120)), 0) << compact.Log();
  absl::StatusOr<std::unique_ptr<storage::SqlStore>> store = storage::OpenStore(dir + "/memfleet.db");
  ASSERT_TRUE(store.ok()) << store.status();
  std::map<std::string, std::set<std::string>> kept;
  for (const char* device : {"sim-a", "sim-b"}) {
    absl::StatusOr<std::vector<storage::RetentionRow>> rows = (*store)->RetentionRows(device);
    ASSERT_TRUE(rows.ok()) << rows.status();
    for (const storage::RetentionRow& r : *rows) kept[device].insert(r.capture_id);
  }
  // sim-a: its first capture (every other one's keyframe), its sweep answer, the hour's peak, its latest.
  EXPECT_EQ(kept["sim-a"],
            (std::set<std::string>{ids["sim-a"][5], ids["sim-a"][20], ids["sim-a"][55], ids["sim-a"][-1]}))
      << "sim-a's own run=R1 label (minute 25) pins nothing; its sweep answer (minute 20) stays";
  // sim-b: the same without any pin: neither the sweep it named, nor a sweep id that never was, nor the label.
  EXPECT_EQ(kept["sim-b"], (std::set<std::string>{ids["sim-b"][5], ids["sim-b"][55], ids["sim-b"][-1]}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace retention_scenario
}  // namespace memfleet
