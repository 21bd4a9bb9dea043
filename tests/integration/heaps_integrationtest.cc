// Heaps and the App Summary end to end (docs/accounting.md section 8), with the real binaries: a
// memfleet-server over SQLite, a memfleet-agent on this machine's "/" (no GPU: by default only
// smaps_rollup, so no heaps) and agents on copies of the qcom-sm8450 sample tree, three on build A and
// three on build B whose surfaceflinger has 12,698 kB (12.4 MiB) more native heap. `memfleet sweep
// --full-smaps` then has every device read full smaps, and the stored reports, `process`, `trend`,
// `regressions` and `/metrics --metrics-app-summary` show where the memory is. Expected values: the
// sample's expected-heaps.json (the spec's) plus the planted mapping.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/support/http_get.h"
#include "tests/support/load_tree.h"
#include "tests/support/memfleet_cli.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"
#include "tests/support/wait_for.h"

namespace memfleet {
namespace heaps_scenario {
namespace {

using nlohmann::json;
using testing::Bin;
using testing::ProcessRun;
using testing::Subprocess;

constexpr char kSurfaceflinger[] = "/system/bin/surfaceflinger";
constexpr int kSurfaceflingerPid = 6225;
constexpr int64_t kGrowthKb = 12698;  // 12.4 MiB of native heap on build B

// A native heap mapping of kGrowthKb, all of it private dirty, in the kernel's smaps layout.
std::string GrowthMapping() {
  std::string m = "7f00000000-7f00c67000 rw-p 00000000 00:00 0                              [anon:scudo:primary]\n";
  for (const char* key : {"Size:", "Rss:", "Pss:", "Private_Dirty:"}) {
    std::string line = key;
    line.resize(16, ' ');
    std::string value = std::to_string(kGrowthKb);
    m += line + std::string(8 - value.size(), ' ') + value + " kB\n";
  }
  return m + "VmFlags: rd wr mr mw me ac\n";
}

class HeapsIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-heaps-e2e-");
    ASSERT_FALSE(dir_.empty());
    server_ = std::make_unique<testing::ServerProcess>(
        dir_, std::vector<std::string>{"--http-listen", "127.0.0.1:0", "--metrics-app-summary"});
    cli_ = testing::MemfleetCli(dir_, {"--server", server_->address()});
    const std::string line =
        server_->process().WaitForLine("memfleet-server metrics on http", std::chrono::seconds(30));
    ASSERT_NE(line.rfind(':'), std::string::npos) << server_->Log();
    metrics_port_ = std::atoi(line.substr(line.rfind(':') + 1).c_str());
  }
  void TearDown() override {
    agents_.clear();
    server_.reset();
    ASSERT_EQ(std::system(("rm -rf '" + dir_ + "'").c_str()), 0);
  }

  // An agent on a copy of qcom-sm8450 as `device_id`, model REG, on `build`; on build B its
  // surfaceflinger has the growth mapping.
  void StartCopy(const std::string& device_id, const std::string& build) {
    const std::string root = dir_ + "/tree-" + device_id;
    ASSERT_EQ(std::system(("cp -r '" + testing::TestData("captures/qcom-sm8450/tree") + "' '" + root + "'").c_str()),
              0);
    std::ofstream(root + "/capture.json", std::ios::trunc)
        << R"({"format": 1, "device_id": ")" << device_id
        << R"(", "captured_at": "2026-11-30T08:00:00Z", "page_size": 4096, "ddr_size_kb": 16777216, "model": "REG", )"
        << R"("build_fingerprint": ")" << build << "\"}\n";
    if (build == "B") {
      std::ofstream(root + "/proc/" + std::to_string(kSurfaceflingerPid) + "/smaps", std::ios::app) << GrowthMapping();
    }
    StartAgent(device_id, root);
  }
  void StartAgent(const std::string& device_id, const std::string& root) {
    agents_.push_back(std::make_unique<Subprocess>(
        std::vector<std::string>{Bin("memfleet-agent"), "--server", server_->address(), "--root", root, "--device-id",
                                 device_id, "--interval", "3600", "--spool", dir_ + "/spool-" + device_id},
        dir_ + "/agent-" + device_id + ".log"));
  }

  // Polls `memfleet devices --json` until `n` devices are online, each with a stored capture.
  bool WaitReady(size_t n) {
    return testing::WaitFor(
        [&] {
          ProcessRun devices = cli_.Run({"--json", "devices"});
          if (devices.exit_code != 0) return false;
          size_t ready = 0;
          for (const json& d : json::parse(devices.output.substr(devices.output.find('[')))) {
            ready += d["online"] == true && d["last_capture_at"].is_string();
          }
          return ready >= n;
        },
        std::chrono::seconds(180), /*every=*/std::chrono::milliseconds(500));
  }

  std::string dir_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::vector<std::unique_ptr<Subprocess>> agents_;
  int metrics_port_ = 0;
  testing::MemfleetCli cli_;
};

// The processes of a report with heaps, and those whose figures are known at all.
std::pair<size_t, size_t> WithHeaps(const json& report) {
  size_t with = 0, known = 0;
  for (const auto& [pid, p] : report["processes"].items()) {
    known += !p["pss_kb"].is_null();
    with += p["heaps"].is_object();
  }
  return {with, known};
}

TEST_F(HeapsIntegrationTest, SweepWithFullSmapsStoresHeapsAndEveryViewShowsThem) {
  StartAgent("host", "/");
  for (const char* d : {"reg-a1", "reg-a2", "reg-a3"}) StartCopy(d, "A");
  for (const char* d : {"reg-b1", "reg-b2", "reg-b3"}) StartCopy(d, "B");
  ASSERT_TRUE(WaitReady(7)) << server_->Log();
  // The host's first capture took the default: smaps_rollup for processes that map no GPU, no heaps.
  const json before = server_->Report("host");
  const auto [before_with, before_known] = WithHeaps(before);
  ASSERT_GT(before_known, 5u);
  EXPECT_LT(before_with, before_known) << "a default capture reads full smaps for GPU processes only";

  ProcessRun sweep = cli_.Run({"sweep", "--full-smaps", "--deadline", "120"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.output << "\n--- server ---\n" << server_->Log();
  for (const auto& agent : agents_) {
    EXPECT_FALSE(agent->WaitForLine("full smaps)", std::chrono::seconds(10)).empty()) << agent->Log();
  }
  // Every device of the sweep stored heaps: on the host every process it could read (none left out).
  const json host = server_->Report("host");
  const auto [with, known] = WithHeaps(host);
  EXPECT_EQ(with, known) << "a --full-smaps capture has heaps for every process";
  for (const char* d : {"reg-a1", "reg-b1"}) {
    const json r = server_->Report(d);
    EXPECT_EQ(r["processes"][std::to_string(kSurfaceflingerPid)]["app_summary"]["native_heap_kb"],
              std::string(d) == "reg-a1" ? 30805 : 30805 + kGrowthKb)
        << d;
  }

  // process: the heaps table and the App Summary, and both in --json (the memfleet-server process itself
  // on the host: its TOTAL PSS is its Pss + SwapPss).
  ProcessRun table = cli_.Run({"process", "reg-b1", "surfaceflinger"});
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("Native Heap"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("APP SUMMARY"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("43,503"), std::string::npos) << table.output;  // 30805 + 12698
  ProcessRun own = cli_.Run({"--json", "process", "host", "memfleet-server"});
  ASSERT_EQ(own.exit_code, 0) << own.output;
  const json p = json::parse(own.output.substr(own.output.find('{')))["processes"][0];
  ASSERT_TRUE(p["app_summary"].is_object()) << p.dump();
  EXPECT_EQ(p["app_summary"]["total_pss_kb"], p["pss_kb"].get<int64_t>() + p["swap_pss_kb"].get<int64_t>());
  EXPECT_TRUE(p["heaps"].is_object());

  // trend: an App Summary field and a heap's figure, read from each stored report; the host's first
  // capture (no full smaps) is a known gap, never a 0.
  ProcessRun trend =
      cli_.Run({"--json", "trend", "reg-b1", "--process", "surfaceflinger", "--metric", "app_summary.native_heap_kb"});
  ASSERT_EQ(trend.exit_code, 0) << trend.output;
  const json points = json::parse(trend.output.substr(trend.output.find('{')))["points"];
  ASSERT_EQ(points.size(), 2u) << trend.output;  // the agent's first capture and the sweep's
  for (const json& point : points) EXPECT_EQ(point["value_kb"], 30805 + kGrowthKb) << point.dump();
  ProcessRun dalvik =
      cli_.Run({"--json", "trend", "reg-a1", "--process", "surfaceflinger", "--metric", "heaps.dalvik.pss_kb"});
  ASSERT_EQ(dalvik.exit_code, 0) << dalvik.output;
  EXPECT_EQ(json::parse(dalvik.output.substr(dalvik.output.find('{')))["points"].back()["value_kb"], 21414);
  ProcessRun host_trend =
      cli_.Run({"--json", "trend", "host", "--process", "memfleet-server", "--metric", "app_summary.total_pss_kb"});
  ASSERT_EQ(host_trend.exit_code, 0) << host_trend.output;
  const json host_points = json::parse(host_trend.output.substr(host_trend.output.find('{')))["points"];
  ASSERT_GE(host_points.size(), 2u);
  EXPECT_TRUE(host_points.front()["value_kb"].is_null()) << host_points.dump();
  EXPECT_FALSE(host_points.back()["value_kb"].is_null()) << host_points.dump();
  EXPECT_EQ(cli_.Run({"trend", "reg-a1", "--process", "surfaceflinger", "--metric", "app_summary.heap_kb"}).exit_code,
            2);

  // regressions: which part moved, in words.
  ProcessRun reg =
      cli_.Run({"regressions", "--process", "surfaceflinger", "--build", "A", "--vs", "B", "--model", "REG"});
  EXPECT_EQ(reg.exit_code, 3) << reg.output;
  EXPECT_NE(reg.output.find("native heap +12.4 M"), std::string::npos) << reg.output;
  EXPECT_NE(reg.output.find("on 3 of 3 devices"), std::string::npos) << reg.output;
  EXPECT_EQ(reg.output.find("java heap +"), std::string::npos) << reg.output;

  // /metrics: the App Summary series, asked for with --metrics-app-summary.
  testing::HttpReply metrics = testing::HttpGet("127.0.0.1", metrics_port_, "/metrics", {});
  ASSERT_EQ(metrics.status, 200) << metrics.error;
  EXPECT_NE(metrics.body.find("memfleet_process_app_summary_bytes{device_id=\"reg-b1\",process=\"" +
                              std::string(kSurfaceflinger) + "\",part=\"native_heap\"} " +
                              std::to_string((30805 + kGrowthKb) * 1024)),
            std::string::npos)
      << metrics.body.substr(0, 4000);
}

}  // namespace
}  // namespace heaps_scenario
}  // namespace memfleet
