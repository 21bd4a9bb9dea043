// As shell (a retail phone without root) other apps' nodes and debugfs are unreadable. The agent still
// captures everything readable, each unreadable node becomes an error node (EACCES), the header says
// "access": "shell", and the report makes the figures that need those nodes null with a warning naming
// the node, never 0. Run for real: the collector reads a live folder as uid 65534 (a forked child) where
// one app's nodes and the debugfs Mali folder are mode 000; the engine then accounts what it captured.
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/reader/collector.h"
#include "agent/device_facts.h"
#include "agent/reader/device_root_fs.h"
#include "capture/capture_header.h"
#include "gtest/gtest.h"
#include "report/report_json.h"
#include "accounting/account.h"
#include "tests/support/load_tree.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_data.h"

namespace memfleet::agent {
namespace {

constexpr uid_t kNobody = 65534;
constexpr char kRollupHeader[] = "00400000-7ffc0000 ---p 00000000 00:00 0                          [rollup]\n";

bool AnyWarningHas(const nlohmann::json& report, const std::string& a, const std::string& b) {
  for (const auto& w : report["warnings"]) {
    const std::string text = w.get<std::string>();
    if (text.find(a) != std::string::npos && text.find(b) != std::string::npos) return true;
  }
  return false;
}

class ShellAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
    root_ = dir_.path() + "/root";
    out_ = dir_.path() + "/out";
    std::filesystem::create_directories(out_);
    ASSERT_EQ(chmod(out_.c_str(), 0777), 0);
    Write("proc/meminfo", testing::ReadTestData("nodes/meminfo_510.txt"));
    Write("sys/fs/selinux/enforce", "1");
    // Another app's process: its identity is readable (as on Android), its memory nodes are not.
    Write("proc/100/cmdline", std::string("com.other.app\0", 14));
    Write("proc/100/status", "Name:\tcom.other.app\n");
    Write("proc/100/oom_score_adj", "0\n");
    Write("proc/100/smaps_rollup", std::string(kRollupHeader) + "Rss: 80 kB\nPss: 60 kB\nSwapPss: 0 kB\n", 0);
    Write("proc/100/maps", "7f000000-7f001000 rw-s 00000000 00:0a 77 /dmabuf:\n", 0);
    Write("proc/100/fdinfo/4", "pos:\t0\nflags:\t02\nexp_name:\tsystem\nsize:\t4096\nino:\t77\n");
    ASSERT_EQ(chmod((root_ + "/proc/100/fdinfo").c_str(), 0), 0);
    // The shell's own process: everything readable.
    Write("proc/200/cmdline", std::string("sh\0", 3));
    Write("proc/200/status", "Name:\tsh\n");
    Write("proc/200/oom_score_adj", "0\n");
    Write("proc/200/smaps_rollup", std::string(kRollupHeader) + "Rss: 12 kB\nPss: 10 kB\nSwapPss: 0 kB\n");
    Write("proc/200/maps", "00400000-00401000 r-xp 00000000 00:00 0\n");
    std::filesystem::create_directories(root_ + "/proc/200/fdinfo");
    // debugfs mounted but root-only (a userdebug build): the Mali folder cannot be listed.
    Write("sys/kernel/debug/mali0/gpu_memory", "mali0                  4096\n");
    ASSERT_EQ(chmod((root_ + "/sys/kernel/debug/mali0").c_str(), 0), 0);
  }

  void Write(const std::string& rel, const std::string& content, mode_t mode = 0644) {
    std::filesystem::path p = std::filesystem::path(root_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    ASSERT_EQ(chmod(p.c_str(), mode), 0);
  }

  // Collects and accounts the folder as uid 65534; false when the child could not become it.
  bool CaptureAsNobody() {
    pid_t child = fork();
    if (child < 0) return false;
    if (child == 0) {
      if (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(2);
      DeviceRootFs fs(root_);
      DeviceFacts facts = LiveRootFacts(fs, 4096, geteuid());
      CollectOptions options;
      options.device_id = "retail-1";
      options.captured_at = "2026-12-04T10:00:00Z";
      options.run_commands = false;
      options.header_facts = HeaderFactsOf(facts);
      absl::StatusOr<capture::Capture> c = CollectCapture(fs, options);
      if (!c.ok()) _exit(3);
      std::ofstream(out_ + "/capture.json") << *c->FileContent("capture.json");
      for (const auto& [path, node] : c->nodes()) {
        if (node.is_error()) std::ofstream(out_ + "/errors", std::ios::app) << path << " " << node.content << "\n";
      }
      std::ofstream(out_ + "/report.json") << report::ReportToJson(accounting::Account(*c));
      _exit(0);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child) return false;
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 3) << "the capture failed";
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

  testing::TempDir dir_{"memfleet_shell_access"};
  std::string root_, out_;
};

TEST_F(ShellAccessTest, UnreadableNodesAreEaccesAndTheirFiguresNull) {
  if (geteuid() != 0) GTEST_SKIP() << "running a second uid (setuid 65534) needs root";
  ASSERT_TRUE(CaptureAsNobody());

  absl::StatusOr<capture::CaptureHeader> header =
      capture::ParseCaptureHeader(testing::ReadFileForTest(out_ + "/capture.json"));
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->facts["access"], "shell");
  EXPECT_EQ(header->facts["selinux"], "enforcing");

  const std::string errors = testing::ReadFileForTest(out_ + "/errors");
  EXPECT_NE(errors.find("proc/100/smaps_rollup EACCES\n"), std::string::npos) << errors;
  EXPECT_NE(errors.find("proc/100/fdinfo EACCES\n"), std::string::npos) << errors;
  EXPECT_NE(errors.find("sys/kernel/debug/mali0 EACCES\n"), std::string::npos) << errors;

  nlohmann::json report = nlohmann::json::parse(testing::ReadFileForTest(out_ + "/report.json"));
  const nlohmann::json& other = report["processes"]["100"];
  const nlohmann::json& shell = report["processes"]["200"];
  EXPECT_EQ(other["name"], "com.other.app");
  EXPECT_TRUE(other["pss_kb"].is_null()) << other.dump();
  EXPECT_TRUE(other["total_kb"].is_null()) << other.dump();
  EXPECT_TRUE(AnyWarningHas(report, "proc/100/smaps_rollup", "EACCES")) << report["warnings"].dump(1);
  // The shell's own process is measured: Pss 10 kB from its smaps_rollup.
  EXPECT_EQ(shell["pss_kb"], 10);
  // No vendor GPU node was seen, but debugfs was denied: a Mali GPU may be there, so its memory is
  // unknown, not 0, and the device total that sums it too.
  EXPECT_TRUE(shell["gl_kb"].is_null()) << shell.dump();
  EXPECT_TRUE(AnyWarningHas(report, "sys/kernel/debug/mali0", "EACCES")) << report["warnings"].dump(1);
  EXPECT_TRUE(report["device"]["total_kb"].is_null()) << report["device"].dump();
}

}  // namespace
}  // namespace memfleet::agent
