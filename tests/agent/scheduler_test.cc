// Scheduler with a fake clock, a real capture tree and a fake sink: a capture is stamped with the agent's
// device id and clock, spooled before it is handed on, and --once exits 0 only on its ack.
#include "agent/scheduler.h"

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "agent/reader/capture_tree_fs.h"
#include "gtest/gtest.h"
#include "proto/capture_codec.h"
#include "capture/capture_header.h"
#include "proto/capture_id.h"
#include "tests/support/fake_root_fs.h"
#include "tests/support/load_tree.h"
#include "tests/support/test_paths.h"
#include "tests/support/wait_for.h"

namespace memfleet::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string Tree() { return testing::TestData("captures/qcom-sm8450/tree"); }

class FakeClock : public Clock {
 public:
  std::string NowRfc3339() override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  std::chrono::steady_clock::time_point SteadyNow() override { return std::chrono::steady_clock::now(); }
  void Set(std::string now) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ = std::move(now);
  }

 private:
  std::mutex mu_;
  std::string now_ = "2026-12-02T16:15:00Z";
};

class FakeSink : public CaptureSink {
 public:
  void CaptureSpooled(const std::string& capture_id) override {
    std::function<void(const std::string&)> hook;
    {
      std::lock_guard<std::mutex> lock(mu_);
      spooled_.push_back(capture_id);
      hook = on_spooled_;
    }
    if (hook) hook(capture_id);
  }
  void CommandFailed(const std::string& sweep_id, const std::string& message) override {
    std::lock_guard<std::mutex> lock(mu_);
    failed_.push_back(sweep_id + ": " + message);
  }
  void set_on_spooled(std::function<void(const std::string&)> hook) {
    std::lock_guard<std::mutex> lock(mu_);
    on_spooled_ = std::move(hook);
  }
  std::vector<std::string> spooled() {
    std::lock_guard<std::mutex> lock(mu_);
    return spooled_;
  }
  std::vector<std::string> failed() {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> spooled_, failed_;
  std::function<void(const std::string&)> on_spooled_;
};

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "memfleet-scheduler-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    absl::StatusOr<std::unique_ptr<Spool>> spool = Spool::Open({dir_ + "/spool", 64ull << 20});
    ASSERT_TRUE(spool.ok()) << spool.status();
    spool_ = std::move(*spool);
    options_.device_id = "lab-7";
    options_.capture_instance = "3f9a0c1e";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string dir_;
  std::unique_ptr<Spool> spool_;
  SchedulerOptions options_;
  FakeClock clock_;
  FakeSink sink_;
  boost::asio::io_context io_;
};

TEST_F(SchedulerTest, CaptureIsStampedSpooledThenHandedOn) {
  CaptureTreeFs tree(Tree());
  Scheduler scheduler(io_, tree, clock_, *spool_, options_);
  scheduler.set_sink(&sink_);

  absl::StatusOr<TakenCapture> taken = scheduler.TakeCapture("sweep-1");
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(taken->capture_id, "lab-7-20261202T161500Z-3f9a0c1e-000001");
  EXPECT_EQ(taken->captured_at, "2026-12-02T16:15:00Z");
  EXPECT_GT(taken->node_count, 0u);
  EXPECT_GT(taken->peak_rss_kb, 0);
  EXPECT_EQ(sink_.spooled(), std::vector<std::string>{"lab-7-20261202T161500Z-3f9a0c1e-000001"});

  ASSERT_EQ(spool_->count(), 1u);
  Spool::Entry entry = spool_->List()[0];
  EXPECT_EQ(entry.capture_id, taken->capture_id);
  EXPECT_EQ(entry.captured_at, "2026-12-02T16:15:00Z");
  EXPECT_EQ(entry.sweep_id, "sweep-1");

  absl::StatusOr<Spool::Loaded> loaded = spool_->Load(taken->capture_id);
  ASSERT_TRUE(loaded.ok());
  absl::StatusOr<capture::Capture> capture = wire::DecodeStoredCapture(wire::kStoredCodec, loaded->blob);
  ASSERT_TRUE(capture.ok()) << capture.status();
  // The tree says sim-qcom-101 at 2026-11-30T08:00:00Z; the agent replays it as itself, now.
  absl::StatusOr<capture::CaptureHeader> header = capture::ParseCaptureHeader(*capture->FileContent("capture.json"));
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->device_id, "lab-7");
  EXPECT_EQ(header->captured_at, "2026-12-02T16:15:00Z");
  EXPECT_EQ(header->ddr_size_kb, 16777216u);
  // Node contents are carried verbatim.
  EXPECT_EQ(*capture->FileContent("proc/meminfo"), testing::ReadFileForTest(std::string(Tree()) + "/proc/meminfo"));
  EXPECT_EQ(taken->node_count, capture->size());

  clock_.Set("2026-12-02T16:20:00Z");
  absl::StatusOr<TakenCapture> next = scheduler.TakeCapture("");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->capture_id, "lab-7-20261202T162000Z-3f9a0c1e-000002");
}

TEST_F(SchedulerTest, TwoAgentsWithTheSameDeviceIdNeverWriteTheSameCaptureId) {
  // Two phones configured with the same --device-id, each with a fresh spool, capture in the same second:
  // same device, time and sequence. Their ids still differ (each agent start draws its own instance), so
  // the server cannot ack the second as "already stored" and let its agent delete it.
  absl::StatusOr<std::unique_ptr<Spool>> other_spool = Spool::Open({dir_ + "/other-spool", 64ull << 20});
  ASSERT_TRUE(other_spool.ok()) << other_spool.status();
  CaptureTreeFs tree(Tree());
  SchedulerOptions unset = options_;
  unset.capture_instance = "";
  Scheduler first(io_, tree, clock_, *spool_, unset);
  Scheduler second(io_, tree, clock_, **other_spool, unset);
  absl::StatusOr<TakenCapture> a = first.TakeCapture("");
  absl::StatusOr<TakenCapture> b = second.TakeCapture("");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE(a->capture_id, b->capture_id);
  for (const std::string& id : {a->capture_id, b->capture_id}) {
    EXPECT_EQ(wire::CaptureIdDevice(id), "lab-7") << id;
    EXPECT_EQ(id.substr(0, 23), "lab-7-20261202T161500Z-") << id;
    EXPECT_EQ(id.substr(id.size() - 7), "-000001") << id;
  }
}

// A phone's live root: dumpsys every --dumpsys-every captures from the first, heap dumps of its GPU
// processes in turn, and the facts of its getprop in every header.
TEST_F(SchedulerTest, LiveRootRunsDumpsysEveryNthCaptureAndHeapDumpsInTurn) {
  testing::FakeRootFs fs;
  fs.AddFile("proc/meminfo", "MemTotal: 100 kB\n");
  for (const char* pid : {"300", "400", "500"}) {
    fs.AddFile(std::string("proc/") + pid + "/smaps_rollup", "Pss: 4 kB\n");
    fs.AddFile(std::string("proc/") + pid + "/maps", "7f100000-7f200000 rw-s 00000000 00:05 12 /dev/kgsl-3d0\n");
  }
  fs.AddFile("cmd/dumpsys_meminfo", "Total RAM: 100K\n");
  options_.dumpsys_every = 3;
  options_.max_heap_dumps = 2;
  options_.header_facts = {{"model", "Pixel 7"}, {"access", "shell"}};
  options_.android_version = 14;
  Scheduler scheduler(io_, fs, clock_, *spool_, options_);

  std::vector<std::vector<std::string>> commands_per_capture;
  for (int i = 0; i < 4; ++i) {
    const size_t before = fs.commands().size();
    ASSERT_TRUE(scheduler.TakeCapture("").ok());
    commands_per_capture.emplace_back(fs.commands().begin() + static_cast<long>(before), fs.commands().end());
  }
  const std::vector<std::string> dumpsys = {"cmd/dumpsys_meminfo", "cmd/dumpsys_gpu_gpumem", "cmd/getprop"};
  auto with_dumpsys = [&](std::vector<std::string> heaps) {
    heaps.insert(heaps.end(), dumpsys.begin(), dumpsys.end());
    return heaps;
  };
  // Captures 1 and 4 run dumpsys; two of the three GPU processes per capture, the next two each time.
  EXPECT_EQ(commands_per_capture[0], with_dumpsys({"cmd/native_heap@300", "cmd/native_heap@400"}));
  EXPECT_EQ(commands_per_capture[1], (std::vector<std::string>{"cmd/native_heap@300", "cmd/native_heap@500"}));
  EXPECT_EQ(commands_per_capture[2], (std::vector<std::string>{"cmd/native_heap@400", "cmd/native_heap@500"}));
  EXPECT_EQ(commands_per_capture[3], with_dumpsys({"cmd/native_heap@300", "cmd/native_heap@400"}));

  std::vector<Spool::Entry> entries = spool_->List();
  ASSERT_EQ(entries.size(), 4u);
  for (size_t i = 0; i < entries.size(); ++i) {
    absl::StatusOr<Spool::Loaded> loaded = spool_->Load(entries[i].capture_id);
    ASSERT_TRUE(loaded.ok());
    absl::StatusOr<capture::Capture> c = wire::DecodeStoredCapture(wire::kStoredCodec, loaded->blob);
    ASSERT_TRUE(c.ok()) << c.status();
    // The captures between have no dumpsys node at all (not an error node).
    EXPECT_EQ(c->Find("cmd/dumpsys_meminfo") != nullptr, i == 0 || i == 3) << i;
    absl::StatusOr<capture::CaptureHeader> header = capture::ParseCaptureHeader(*c->FileContent("capture.json"));
    ASSERT_TRUE(header.ok()) << header.status();
    EXPECT_EQ(header->device_id, "lab-7");
    EXPECT_EQ(header->android_version, 14);
    EXPECT_EQ(header->facts["model"], "Pixel 7");
    EXPECT_EQ(header->facts["access"], "shell");
  }
}

TEST_F(SchedulerTest, FailedCaptureForASweepIsReported) {
  fs::create_directories(dir_ + "/empty-root");
  CaptureTreeFs empty(dir_ + "/empty-root");  // neither a capture tree nor a device root
  Scheduler scheduler(io_, empty, clock_, *spool_, options_);
  scheduler.set_sink(&sink_);
  EXPECT_EQ(scheduler.TakeCapture("").status().code(), absl::StatusCode::kFailedPrecondition);

  std::thread loop([&] { scheduler.Run(); });
  scheduler.OnCaptureNow("sweep-3", false);
  EXPECT_TRUE(testing::WaitFor([&] { return !sink_.failed().empty(); }, 5s));
  scheduler.RequestStop();
  loop.join();
  ASSERT_EQ(sink_.failed().size(), 1u);
  EXPECT_EQ(sink_.failed()[0].rfind("sweep-3: ", 0), 0u) << sink_.failed()[0];
  EXPECT_EQ(spool_->count(), 0u);
}

TEST_F(SchedulerTest, OnceExitsZeroWhenItsCaptureIsAcked) {
  CaptureTreeFs tree(Tree());
  options_.once = true;
  options_.once_timeout = 20s;
  Scheduler scheduler(io_, tree, clock_, *spool_, options_);
  scheduler.set_sink(&sink_);
  bool stopped = false;
  scheduler.set_on_stop([&] { stopped = true; });
  // The "server" acks an unrelated capture first: that must not end the run.
  sink_.set_on_spooled([&](const std::string& id) {
    scheduler.OnAcked("someone-else", false);
    scheduler.OnAcked(id, false);
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(scheduler.Run(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_TRUE(stopped);
  EXPECT_EQ(sink_.spooled().size(), 1u);
}

TEST_F(SchedulerTest, OnceFailsWhenNotDeliveredInTimeAndKeepsTheCapture) {
  CaptureTreeFs tree(Tree());
  options_.once = true;
  options_.once_timeout = 1s;
  Scheduler scheduler(io_, tree, clock_, *spool_, options_);
  scheduler.set_sink(&sink_);
  EXPECT_EQ(scheduler.Run(), 1);
  ASSERT_EQ(spool_->count(), 1u);
  EXPECT_EQ(spool_->List()[0].capture_id, sink_.spooled().at(0));
}

TEST_F(SchedulerTest, OnceFailsWhenTheServerRejectsForGood) {
  CaptureTreeFs tree(Tree());
  options_.once = true;
  options_.once_timeout = 20s;
  Scheduler scheduler(io_, tree, clock_, *spool_, options_);
  scheduler.set_sink(&sink_);
  sink_.set_on_spooled([&](const std::string& id) {
    scheduler.OnRejected(id, /*retry=*/true, "disk full");  // not final: keeps waiting
    scheduler.OnRejected(id, /*retry=*/false, "another device");
  });
  EXPECT_EQ(scheduler.Run(), 1);
}

TEST_F(SchedulerTest, DaemonTakesACaptureAtStartAndOnCaptureNow) {
  CaptureTreeFs tree(Tree());
  options_.interval = 3600s;
  Scheduler scheduler(io_, tree, clock_, *spool_, options_);
  scheduler.set_sink(&sink_);
  std::promise<int> exit_code;
  std::thread loop([&] { exit_code.set_value(scheduler.Run()); });
  auto wait_for = [&](size_t n) { return testing::WaitFor([&] { return sink_.spooled().size() >= n; }, 5s); };
  ASSERT_TRUE(wait_for(1));  // at start, without waiting an interval
  clock_.Set("2026-12-02T16:16:00Z");
  scheduler.OnCaptureNow("sweep-5", false);
  ASSERT_TRUE(wait_for(2));
  scheduler.OnSetInterval(60);
  scheduler.RequestStop();
  loop.join();
  EXPECT_EQ(exit_code.get_future().get(), 0);
  std::vector<Spool::Entry> entries = spool_->List();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].sweep_id, "");
  EXPECT_EQ(entries[1].sweep_id, "sweep-5");
  EXPECT_EQ(entries[1].capture_id, "lab-7-20261202T161600Z-3f9a0c1e-000002");
  EXPECT_EQ(scheduler.interval(), 60s);
}

}  // namespace
}  // namespace memfleet::agent
