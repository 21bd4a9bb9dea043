// A data folder must never make memfleet run programs or write nodes: the real `memfleet account` and
// `memfleet-agent --once` on a folder laid out like a device root — proc/meminfo, a dangling capture.json,
// system/bin/dumpsys and am that would leave a marker file, a proc/dma_heap/rss_pid — refuse it with a
// message, and the marker never appears. With --live-root the same folder is read live (the control that
// shows the marker scripts do run when they are allowed to).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"

namespace memfleet {
namespace hostile_root_scenario {
namespace {

namespace fs = std::filesystem;

using testing::Bin;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class HostileRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-hostile-root-");
    ASSERT_FALSE(dir_.empty());
    root_ = dir_ + "/root";
    marker_ = dir_ + "/marker";
    Write("proc/meminfo", "MemTotal:        1000000 kB\nMemFree:          500000 kB\n");
    Write("proc/dma_heap/rss_pid", "untouched");
    // Both programs the agent may run; either would leave the marker (and its arguments) behind.
    for (const char* program : {"system/bin/dumpsys", "system/bin/am"}) {
      Write(program, "#!/bin/sh\necho \"$0 $*\" >> '" + marker_ + "'\n");
      ASSERT_EQ(chmod((root_ + "/" + program).c_str(), 0755), 0);
    }
    // Relative and inside the folder: before, it read as "no capture.json" and the folder as a live root.
    fs::create_symlink("no-such-header.json", root_ + "/capture.json");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void Write(const std::string& rel, const std::string& content) {
    fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }

  int Run(const std::vector<std::string>& argv, std::string* output) {
    testing::ProcessRun run = testing::RunToExit(argv, dir_ + "/run-" + std::to_string(++runs_) + ".log");
    *output = run.output;
    return run.exit_code;
  }

  std::vector<std::string> Agent(const std::vector<std::string>& extra = {}) {
    // Nothing listens on the port: the agent must stop before it would connect, or fail to deliver.
    std::vector<std::string> argv = {Bin("memfleet-agent"),
                                     "--server",
                                     no_server_.address(),
                                     "--root",
                                     root_,
                                     "--device-id",
                                     "hostile",
                                     "--once",
                                     "--once-timeout",
                                     "1",
                                     "--spool",
                                     dir_ + "/spool"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  void ExpectUntouched() {
    EXPECT_FALSE(fs::exists(marker_)) << "a program of the folder ran: " << ReadFile(marker_);
    EXPECT_EQ(ReadFile(root_ + "/proc/dma_heap/rss_pid"), "untouched");
  }

  testing::LoopbackPortReservation no_server_;
  std::string dir_, root_, marker_;
  int runs_ = 0;
};

TEST_F(HostileRootTest, DanglingCaptureJsonIsRefusedByAccountAndAgent) {
  std::string out;
  EXPECT_EQ(Run({Bin("memfleet"), "account", root_}, &out), 1) << out;
  EXPECT_NE(out.find("capture.json is a symlink to nothing (a dangling link)"), std::string::npos) << out;
  ExpectUntouched();

  EXPECT_EQ(Run(Agent(), &out), 2) << out;
  EXPECT_NE(out.find("capture.json is a symlink to nothing (a dangling link)"), std::string::npos) << out;
  ExpectUntouched();
}

TEST_F(HostileRootTest, FolderWithoutCaptureJsonNeedsLiveRoot) {
  fs::remove(root_ + "/capture.json");
  std::string out;
  EXPECT_EQ(Run({Bin("memfleet"), "account", root_}, &out), 1) << out;
  EXPECT_NE(out.find("pass --live-root"), std::string::npos) << out;
  ExpectUntouched();

  EXPECT_EQ(Run(Agent(), &out), 2) << out;
  EXPECT_NE(out.find("pass --live-root"), std::string::npos) << out;
  ExpectUntouched();

  // Said to be a live system, the folder is read live: its dumpsys runs (the marker scripts work).
  EXPECT_EQ(Run({Bin("memfleet"), "account", "--live-root", root_}, &out), 0) << out;
  EXPECT_NE(ReadFile(marker_).find("dumpsys meminfo"), std::string::npos) << ReadFile(marker_);
  fs::remove(marker_);
  Run(Agent({"--live-root"}), &out);  // no server: it captures, then gives up delivering
  EXPECT_NE(ReadFile(marker_).find("dumpsys meminfo"), std::string::npos) << out;
}

}  // namespace
}  // namespace hostile_root_scenario
}  // namespace memfleet
