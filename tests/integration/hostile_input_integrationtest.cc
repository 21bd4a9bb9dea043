// Hostile capture trees given to the shipped binaries: a capture.json that is valid JSON nested 100,000
// levels deep (600 KB, under the 1 MiB header cap) overflowed the stack of `memfleet account` (exit 139)
// and of memfleet-agent. Now the header is refused with a clear message, and `account` still computes the
// rest of the report.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/load_tree.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace memfleet {
namespace hostile_input_scenario {
namespace {

using testing::Subprocess;

using testing::Bin;

constexpr char kNestedMessage[] = "capture.json: nested more than 64 levels deep (at byte 73)";

// A copy of the qcom-sm8450 capture tree whose capture.json holds a "format" nested 100,000 levels deep.
std::string DeepHeaderTree(const testing::TempDir& dir) {
  const std::string tree = dir.path() + "/tree";
  std::filesystem::copy(testing::TestData("captures/qcom-sm8450/tree"), tree, std::filesystem::copy_options::recursive);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  dir.Write("tree/capture.json",
            R"({"format":)" + deep + R"(,"device_id":"evil","captured_at":"2026-11-30T08:00:00Z"})");
  return tree;
}

nlohmann::json AccountJson(const std::string& tree, const std::string& log, int* exit_code) {
  testing::ProcessRun run = testing::RunToExit({Bin("memfleet"), "account", "--json", tree}, log);
  *exit_code = run.exit_code;
  return nlohmann::json::parse(run.output, nullptr, /*allow_exceptions=*/false);
}

TEST(HostileTreeTest, AccountOnADeeplyNestedHeaderReportsTheRest) {
  testing::TempDir dir("memfleet_hostile");
  ASSERT_FALSE(dir.path().empty());
  const std::string tree = DeepHeaderTree(dir);

  int code = -1;
  const nlohmann::json report = AccountJson(tree, dir.path() + "/deep.log", &code);
  // README: 0 is "report printed (it may carry warnings)"; a malformed node never aborts a report.
  // 139 (128 + SIGSEGV) was the stack overflow.
  ASSERT_EQ(code, 0);
  ASSERT_TRUE(report.is_object()) << "stdout is not a JSON report";
  bool warned = false;
  for (const auto& w : report.at("warnings")) {
    warned |= w.get<std::string>() == std::string(kNestedMessage) + ": page_size 4096 assumed";
  }
  EXPECT_TRUE(warned) << report.at("warnings").dump(1);

  // Everything that does not need the header is as in the intact tree; the DDR size, which only the header
  // gave, is now an estimate.
  int good_code = -1;
  const nlohmann::json good =
      AccountJson(testing::TestData("captures/qcom-sm8450/tree"), dir.path() + "/good.log", &good_code);
  ASSERT_EQ(good_code, 0);
  ASSERT_TRUE(good.is_object());
  EXPECT_EQ(report.at("platform"), good.at("platform"));
  EXPECT_EQ(report.at("processes").size(), good.at("processes").size());
  EXPECT_FALSE(report.at("processes").empty());
  for (const char* figure : {"mem_total_kb", "kernel_kb", "processes_kb", "gcma_kb"}) {
    SCOPED_TRACE(figure);
    EXPECT_FALSE(report.at("device").at(figure).is_null());
    EXPECT_EQ(report.at("device").at(figure), good.at("device").at(figure));
  }
  EXPECT_EQ(report.at("device").at("ddr_estimated"), true);
  EXPECT_EQ(report.at("device_id"), "");  // the header's device id is not trusted from a refused header
}

TEST(HostileTreeTest, AgentRefusesADeeplyNestedHeaderWithoutCrashing) {
  testing::TempDir dir("memfleet_hostile");
  ASSERT_FALSE(dir.path().empty());
  const std::string tree = DeepHeaderTree(dir);
  // The header is read before the first connection: no server is needed to reach it.
  Subprocess agent({Bin("memfleet-agent"), "--server", "127.0.0.1:1", "--root", tree, "--device-id", "lab-1", "--spool",
                    dir.path() + "/spool", "--once", "--once-timeout", "5"},
                   dir.path() + "/agent.log");
  const int code = agent.WaitExit(std::chrono::seconds(60));
  EXPECT_EQ(code, 2) << agent.Log();  // the agent's exit code for a refused start
  EXPECT_NE(agent.Log().find(std::string("its capture.json is not usable (") + kNestedMessage + ")"), std::string::npos)
      << agent.Log();
}

}  // namespace
}  // namespace hostile_input_scenario
}  // namespace memfleet
