// The two tiers of figures in the fleet's views (docs/accounting.md section 9), with the real binaries:
// memfleet-server on 127.0.0.1 over a SQLite file, one memfleet-agent on a copy of a rooted capture tree
// (qcom-sm8450) and one on a tree recorded as shell (shield-shell: other processes' smaps denied, the
// phone's own dumpsys text), and the memfleet CLI as a lab types it. `devices` shows each device's tier and
// the tier its agent said, `report` heads its table with the capture's, `--where tier=dumpsys` picks the shell phone
// alone (in `devices` and in a sweep, which captures only it), and a misspelt tier is refused with the two names.
// A phone rooted later (its shell agent stopped, an agent of the rooted tree started under its device id) has a
// `trend` that marks the first capture of the new tier, in the table and in --json, and no other.
// Expected figures and tiers are the trees' expected.json values (qcom-sm8450's, written before tiers, is of the kernel
// tier).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/support/load_tree.h"
#include "tests/support/memfleet_cli.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"
#include "tests/support/wait_for.h"

namespace memfleet {
namespace tiers_scenario {
namespace {

using nlohmann::json;
using testing::Bin;
using testing::ProcessRun;
using testing::Subprocess;

constexpr char kRootedTree[] = "captures/qcom-sm8450";
constexpr char kShellTree[] = "captures-shell/shield-shell";

json Expected(const std::string& capture) {
  return json::parse(testing::ReadFileForTest(testing::TestData(capture + "/expected.json")));
}

// A report's tier as its JSON says it: one written before tiers (no field) is of the kernel tier
// (docs/capture-format.md).
std::string ExpectedTier(const std::string& capture) {
  const json expected = Expected(capture);
  return expected["device"].value("tier", "kernel");
}

class TiersIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-tiers-e2e-");
    ASSERT_FALSE(dir_.empty());
    server_ = std::make_unique<testing::ServerProcess>(dir_);
    ASSERT_FALSE(server_->address().empty());
    cli_ = testing::MemfleetCli(dir_, {"--server", server_->address()});
  }
  void TearDown() override {
    agents_.clear();
    server_.reset();
    const std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  // `instance` tells apart two agents of one device id started one after the other (their trees, spools, logs).
  void StartAgent(const std::string& capture, const std::string& device_id, const std::string& instance = "") {
    const std::string name = device_id + instance;
    const std::string root = dir_ + "/tree-" + name;
    const std::string cmd = "cp -r '" + testing::TestData(capture + "/tree") + "' '" + root + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    agents_.push_back(std::make_unique<Subprocess>(
        std::vector<std::string>{Bin("memfleet-agent"), "--server", server_->address(), "--root", root, "--device-id",
                                 device_id, "--interval", "3600", "--spool", dir_ + "/spool-" + name},
        dir_ + "/agent-" + name + ".log"));
  }

  // `devices --json [--where TERM]`, by device id.
  std::map<std::string, json> Devices(const std::string& where = "") {
    std::vector<std::string> args = {"devices", "--json"};
    if (!where.empty()) args.insert(args.end(), {"--where", where});
    std::map<std::string, json> by_id;
    json listed = cli_.Json(args);
    if (listed.is_array()) {
      for (const json& d : listed) by_id[d["device_id"].get<std::string>()] = d;
    }
    return by_id;
  }

  bool WaitOnline(size_t n) {
    return testing::WaitFor(
        [&] {
          size_t online = 0;
          for (const auto& [id, d] : Devices()) online += d.value("online", false) ? 1 : 0;
          return online >= n;
        },
        std::chrono::seconds(60), std::chrono::milliseconds(200));
  }

  std::string dir_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::vector<std::unique_ptr<Subprocess>> agents_;
  testing::MemfleetCli cli_;
};

TEST_F(TiersIntegrationTest, DevicesShowEachTierAndWhereTierSelectsTheShellPhoneAlone) {
  StartAgent(kRootedTree, "rooted-1");
  StartAgent(kShellTree, "shell-1");
  ASSERT_TRUE(WaitOnline(2)) << server_->Log();
  ProcessRun first = cli_.Run({"sweep", "--deadline", "90"});
  ASSERT_EQ(first.exit_code, 0) << first.output << server_->Log();

  std::map<std::string, json> devices = Devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(ExpectedTier(kShellTree), "dumpsys");
  EXPECT_EQ(devices["shell-1"]["tier"], ExpectedTier(kShellTree));
  EXPECT_EQ(devices["rooted-1"]["tier"], ExpectedTier(kRootedTree));
  EXPECT_EQ(devices["shell-1"]["last_total_kb"], Expected(kShellTree)["device"]["total_kb"]);
  EXPECT_EQ(devices["rooted-1"]["last_total_kb"], Expected(kRootedTree)["device"]["total_kb"]);
  // What each agent said in its Hello: the shell tree's header says it was read as shell.
  EXPECT_EQ(devices["shell-1"]["agent_tier"], "dumpsys");
  EXPECT_EQ(devices["rooted-1"]["agent_tier"], "kernel");

  ProcessRun table = cli_.Run({"devices"});
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find(" TIER "), std::string::npos) << table.output;
  const size_t shell_row = table.output.find("\nshell-1 ");
  ASSERT_NE(shell_row, std::string::npos) << table.output;
  const std::string row = table.output.substr(shell_row + 1, table.output.find('\n', shell_row + 1) - shell_row - 1);
  EXPECT_NE(row.find(" dumpsys "), std::string::npos) << table.output;

  // `report` heads each phone's table with the tier stored with its capture.
  for (const auto& [device, tree] :
       {std::pair<std::string, std::string>{"shell-1", kShellTree}, {"rooted-1", kRootedTree}}) {
    ProcessRun report = cli_.Run({"report", device});
    ASSERT_EQ(report.exit_code, 0) << report.output;
    EXPECT_NE(report.output.find("\ntier " + ExpectedTier(tree) + "\n"), std::string::npos) << report.output;
  }

  // --where tier=dumpsys: the shell phone alone, in devices and in a sweep, which captures it alone.
  std::map<std::string, json> shell_only = Devices("tier=dumpsys");
  ASSERT_EQ(shell_only.size(), 1u);
  EXPECT_EQ(shell_only.begin()->first, "shell-1");
  std::map<std::string, json> rooted_only = Devices("tier=kernel");
  ASSERT_EQ(rooted_only.size(), 1u);
  EXPECT_EQ(rooted_only.begin()->first, "rooted-1");
  const int64_t shell_captures = devices["shell-1"]["capture_count"].get<int64_t>();
  const int64_t rooted_captures = devices["rooted-1"]["capture_count"].get<int64_t>();
  json swept = cli_.Json({"sweep", "--where", "tier=dumpsys", "--deadline", "90", "--json"});
  ASSERT_EQ(swept["devices"].size(), 1u) << swept.dump();
  EXPECT_EQ(swept["devices"][0]["device_id"], "shell-1");
  EXPECT_EQ(swept["devices"][0]["total_kb"], Expected(kShellTree)["device"]["total_kb"]);
  devices = Devices();
  EXPECT_EQ(devices["shell-1"]["capture_count"].get<int64_t>(), shell_captures + 1);
  EXPECT_EQ(devices["rooted-1"]["capture_count"].get<int64_t>(), rooted_captures);

  // A misspelt tier is a usage error (exit 2) naming the two tiers, in every command that takes --where.
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"devices", "--where", "tier=dumsys"},
                                              {"sweep", "--where", "tier=dumsys"},
                                              {"fleet", "--where", "tier=Dumpsys"}}) {
    ProcessRun run = cli_.Run(bad);
    EXPECT_EQ(run.exit_code, 2) << bad[0] << ": " << run.output;
    EXPECT_NE(run.output.find("tier is one of kernel, dumpsys"), std::string::npos) << bad[0] << ": " << run.output;
  }
}

TEST_F(TiersIntegrationTest, TrendMarksThePointWhereAPhoneRootedLaterChangesTier) {
  StartAgent(kShellTree, "phone-1");
  ASSERT_TRUE(WaitOnline(1)) << server_->Log();
  ProcessRun shell_sweep = cli_.Run({"sweep", "--deadline", "90"});
  ASSERT_EQ(shell_sweep.exit_code, 0) << shell_sweep.output << server_->Log();

  // Rooted: the shell agent goes away, and the phone comes back with an agent that reads as root.
  agents_.clear();
  ASSERT_TRUE(testing::WaitFor([&] { return !Devices()["phone-1"].value("online", true); }, std::chrono::seconds(60),
                               std::chrono::milliseconds(200)))
      << server_->Log();
  StartAgent(kRootedTree, "phone-1", "-rooted");
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        const json d = Devices()["phone-1"];
        return d.value("online", false) && d.value("agent_tier", "") == "kernel";
      },
      std::chrono::seconds(60), std::chrono::milliseconds(200)))
      << server_->Log();
  ProcessRun rooted_sweep = cli_.Run({"sweep", "--deadline", "90"});
  ASSERT_EQ(rooted_sweep.exit_code, 0) << rooted_sweep.output << server_->Log();

  const std::string from = ExpectedTier(kShellTree), to = ExpectedTier(kRootedTree);
  ASSERT_EQ(from, "dumpsys");
  ASSERT_EQ(to, "kernel");
  const std::string mark = "tier " + from + " -> " + to + ": figures before and after do not compare";
  const json trend = cli_.Json({"trend", "phone-1", "--json"});
  ASSERT_TRUE(trend["points"].is_array()) << trend.dump();
  ASSERT_GE(trend["points"].size(), 2u) << trend.dump(1);
  size_t first_rooted = trend["points"].size();
  for (size_t i = 0; i < trend["points"].size(); ++i) {
    const json& p = trend["points"][i];
    const bool rooted = p["tier"] == to;
    EXPECT_EQ(p["value_kb"], Expected(rooted ? kRootedTree : kShellTree)["device"]["total_kb"]) << p.dump();
    if (rooted && first_rooted == trend["points"].size()) first_rooted = i;
    if (!rooted) {
      EXPECT_EQ(p["tier"], from) << p.dump();
    }
    if (i == first_rooted) {
      EXPECT_EQ(p["tier_change"], mark) << p.dump();
    } else {
      EXPECT_TRUE(p["tier_change"].is_null()) << p.dump();
    }
  }
  ASSERT_GT(first_rooted, 0u) << "shell points first: " << trend.dump(1);
  ASSERT_LT(first_rooted, trend["points"].size()) << trend.dump(1);

  ProcessRun table = cli_.Run({"trend", "phone-1"});
  ASSERT_EQ(table.exit_code, 0) << table.output;
  const std::string at = trend["points"][first_rooted]["captured_at"].get<std::string>();
  const size_t row = table.output.find(at);
  ASSERT_NE(row, std::string::npos) << table.output;
  EXPECT_NE(table.output.substr(row, table.output.find('\n', row) - row).find(mark), std::string::npos) << table.output;
  EXPECT_EQ(table.output.find(mark), table.output.rfind(mark)) << "marked once: " << table.output;
}

}  // namespace
}  // namespace tiers_scenario
}  // namespace memfleet
