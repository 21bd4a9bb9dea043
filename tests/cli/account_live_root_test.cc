// `memfleet account /` on this Linux machine: a generic report of its real processes, whose PSS adds up
// to what the kernel's own smaps_rollup files say at (nearly) the same moment, and no static reserved
// figure guessed for a host that is no phone.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <dirent.h>
#include <algorithm>
#include <map>
#include <sstream>
#include <string>

#include "cli/commands/account_command.h"
#include "nlohmann/json.hpp"
#include "tests/support/load_tree.h"

namespace memfleet::cli {
namespace {

// Pss of one process from its smaps_rollup, read directly (the independent reference); -1 if gone.
long long RollupPss(const std::string& pid) {
  std::string text = testing::ReadFileForTest("/proc/" + pid + "/smaps_rollup");
  size_t at = text.find("\nPss:");
  if (at == std::string::npos) return -1;
  return std::atoll(text.c_str() + at + 5);
}

std::map<std::string, long long> AllRollupPss() {
  std::map<std::string, long long> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    long long pss = RollupPss(name);
    if (pss >= 0) out[name] = pss;
  }
  closedir(d);
  return out;
}

TEST(AccountLiveRootTest, GenericReportOfThisMachine) {
  if (geteuid() != 0) GTEST_SKIP() << "reading every process's smaps needs root";
  std::map<std::string, long long> before = AllRollupPss();
  std::ostringstream out, err;
  AccountArgs args;
  args.root = "/";
  args.json = true;
  ASSERT_EQ(RunAccount(args, out, err), kExitOk) << err.str();
  std::map<std::string, long long> after = AllRollupPss();
  nlohmann::json r = nlohmann::json::parse(out.str());

  EXPECT_EQ(r["platform"], "generic");
  ASSERT_TRUE(r["device"]["mem_total_kb"].is_number());
  EXPECT_GT(r["device"]["mem_total_kb"].get<long long>(), 0);
  // This Linux host is no phone: no DDR size guessed from MemTotal, so no static reserved figure and no
  // device total, with the reason in the warnings (docs/accounting.md, "DDR estimate").
  EXPECT_FALSE(r["device"]["ddr_estimated"].get<bool>());
  EXPECT_TRUE(r["device"]["ddr_kb"].is_null()) << r["device"];
  EXPECT_TRUE(r["device"]["static_reserved_kb"].is_null()) << r["device"];
  EXPECT_TRUE(r["device"]["total_kb"].is_null()) << r["device"];
  EXPECT_TRUE(r["device"]["kernel_kb"].is_number()) << r["device"];
  EXPECT_TRUE(std::any_of(r["warnings"].begin(), r["warnings"].end(), [](const nlohmann::json& w) {
    return w.get<std::string>().rfind("ddr_kb: no ddr_size_kb in capture.json, and the capture shows no Android", 0) ==
           0;
  })) << r["warnings"];
  ASSERT_TRUE(r["processes"].contains(std::to_string(getpid()))) << "this test's own process is missing";
  const auto& self = r["processes"][std::to_string(getpid())];
  EXPECT_GT(self["pss_kb"].get<long long>(), 0);
  EXPECT_EQ(self["gl_kb"], 0);

  // Other tests start and stop processes meanwhile, and a process's Pss moves when a co-sharer of its
  // pages exits. So, over the processes alive in both independent reads of smaps_rollup (before and
  // after the engine's), the engine's Pss must lie between the smaller and the larger of the two, with 5%
  // slack for memory that grows during the read.
  long long engine = 0, low = 0, high = 0;
  int matched = 0;
  for (auto it = r["processes"].begin(); it != r["processes"].end(); ++it) {
    if (!it.value()["pss_kb"].is_number()) continue;
    auto b = before.find(it.key());
    auto a = after.find(it.key());
    if (b == before.end() || a == after.end()) continue;
    engine += it.value()["pss_kb"].get<long long>();
    low += std::min(b->second, a->second);
    high += std::max(b->second, a->second);
    ++matched;
  }
  ASSERT_GE(matched, 2) << "too few processes alive through the test to compare";
  ASSERT_GT(low, 0);
  EXPECT_GE(static_cast<double>(engine), 0.95 * static_cast<double>(low))
      << "engine " << engine << " kB vs smaps_rollup " << low << ".." << high << " kB over " << matched;
  EXPECT_LE(static_cast<double>(engine), 1.05 * static_cast<double>(high))
      << "engine " << engine << " kB vs smaps_rollup " << low << ".." << high << " kB over " << matched;
}

}  // namespace
}  // namespace memfleet::cli
