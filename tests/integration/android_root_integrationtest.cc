// A phone's live root, stood in for by a folder read with --live-root: its system/bin/getprop prints a
// Pixel's properties, its dumpsys the sample `dumpsys meminfo` text, and its `am` hangs. The real
// memfleet-agent --once delivers to the real memfleet-server within the heap-dump budget; the device
// row and `memfleet devices` show the model, build and access level from getprop and the agent's uid;
// the report's dumpsys view uses the Android 14 formulas and says the heap dump timed out.
// What this does not cover: a real phone's getprop, am and dumpsys (docs/reliability.md).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "memfleet/v1/query_service.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"

namespace memfleet {
namespace android_root_scenario {
namespace {

using nlohmann::json;
using testing::Subprocess;

using testing::Bin;
using testing::TestData;

constexpr char kFingerprint[] = "google/panther/panther:14/UQ1A.240205.004/11269751:user/release-keys";

class AndroidRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-android-root-");
    ASSERT_FALSE(dir_.empty());
    root_ = dir_ + "/root";
    std::ifstream meminfo(TestData("nodes/meminfo_510.txt"));
    Write("proc/meminfo", std::string(std::istreambuf_iterator<char>(meminfo), {}));
    // Two GPU processes (they map the Mali device), so two heap dumps are asked for.
    for (const char* pid : {"300", "400"}) {
      const std::string p = std::string("proc/") + pid;
      Write(p + "/cmdline", std::string("com.game\0", 9));
      Write(p + "/status", "Name:\tcom.game\n");
      Write(p + "/oom_score_adj", "0\n");
      Write(p + "/smaps_rollup", "00400000-7ffc0000 ---p 00000000 00:00 0    [rollup]\nRss: 12 kB\nPss: 10 kB\n");
      Write(p + "/maps", "7f100000-7f200000 rw-s 00000000 00:05 12 /dev/mali0\n");
    }
    Program("system/bin/getprop", "cat '" + TestData("nodes/getprop/pixel7_a14.txt") + "'\n");
    Program("system/bin/dumpsys",
            "[ \"$1\" = meminfo ] && exec cat '" + TestData("dumpsys/meminfo_summary_a14.txt") + "'\nexit 3\n");
    // Hangs like an `am` whose target process never answers; its child shares its process group.
    Program("system/bin/am", "sleep 600 &\nwait\n");
  }
  void TearDown() override {
    server_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void Write(const std::string& rel, const std::string& content) {
    std::filesystem::path p = std::filesystem::path(root_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }
  void Program(const std::string& rel, const std::string& body) {
    Write(rel, "#!/bin/sh\n" + body);
    ASSERT_EQ(chmod((root_ + "/" + rel).c_str(), 0755), 0);
  }

  std::string dir_, root_;
  std::unique_ptr<testing::ServerProcess> server_;
};

TEST_F(AndroidRootTest, FactsFromGetpropAndAHungHeapDumpWithinItsBudget) {
  server_ = std::make_unique<testing::ServerProcess>(dir_);
  ASSERT_FALSE(server_->address().empty());
  const auto start = std::chrono::steady_clock::now();
  Subprocess agent(
      {Bin("memfleet-agent"), "--server", server_->address(), "--root", root_, "--live-root", "--device-id", "pixel-1",
       "--once", "--spool", dir_ + "/spool", "--heap-dump-timeout-ms", "500", "--heap-dumps-per-capture", "2"},
      dir_ + "/agent.log");
  ASSERT_EQ(agent.WaitExit(std::chrono::seconds(120)), 0) << agent.Log() << "\n--- server ---\n" << server_->Log();
  // Two dumps of 0.5 s each, not the 600 s `am` would take.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30)) << agent.Log();

  grpc::ClientContext ctx;
  v1::ListDevicesRequest request;
  v1::ListDevicesResponse devices;
  ASSERT_TRUE(server_->query().ListDevices(&ctx, request, &devices).ok());
  ASSERT_EQ(devices.devices_size(), 1);
  const v1::DeviceSummary& d = devices.devices(0);
  EXPECT_EQ(d.model(), "Pixel 7");
  EXPECT_EQ(d.manufacturer(), "Google");
  EXPECT_EQ(d.soc(), "GS201");
  EXPECT_EQ(d.build_fingerprint(), kFingerprint);
  EXPECT_EQ(d.build_type(), "user");
  EXPECT_EQ(d.abi(), "arm64-v8a");
  EXPECT_EQ(d.android_sdk(), "34");
  EXPECT_EQ(d.access(), geteuid() == 0 ? "root" : "shell");
  EXPECT_EQ(d.selinux(), "none");  // the folder has no sys/fs/selinux

  json report = server_->Report("pixel-1");
  ASSERT_TRUE(report.is_object());
  // ro.build.version.sdk 34 is Android 14: the header's android_version picks its formulas.
  EXPECT_EQ(report["dumpsys"]["android_version"], 14);
  // The device's own dumpsys text (Total RAM 3,019,740K) is there to compare with.
  EXPECT_EQ(report["dumpsys"]["device_text"]["total_ram_kb"], 3019740);
  bool timed_out = false;
  for (const auto& w : report["warnings"]) {
    const std::string text = w.get<std::string>();
    if (text.find("cmd/native_heap@300") != std::string::npos && text.find("ETIMEDOUT") != std::string::npos) {
      timed_out = true;
    }
  }
  EXPECT_TRUE(timed_out) << report["warnings"].dump(1);

  // `memfleet devices`: model, build (without its brand/product/device head) and access in the table.
  Subprocess table({Bin("memfleet"), "--server", server_->address(), "devices"}, dir_ + "/devices.log");
  ASSERT_EQ(table.WaitExit(std::chrono::seconds(60)), 0) << table.Log();
  const std::string out = table.Log();
  EXPECT_NE(out.find("ACCESS"), std::string::npos) << out;
  EXPECT_NE(out.find("Pixel 7"), std::string::npos) << out;
  EXPECT_NE(out.find("14/UQ1A.240205.004/11269751:user/release-keys"), std::string::npos) << out;
  Subprocess as_json({Bin("memfleet"), "--server", server_->address(), "devices", "--json"}, dir_ + "/devices.json");
  ASSERT_EQ(as_json.WaitExit(std::chrono::seconds(60)), 0) << as_json.Log();
  json listed = json::parse(as_json.Log());
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["build_fingerprint"], kFingerprint);
  EXPECT_EQ(listed[0]["android_sdk"], "34");
  EXPECT_EQ(listed[0]["access"], geteuid() == 0 ? "root" : "shell");
}

}  // namespace
}  // namespace android_root_scenario
}  // namespace memfleet
