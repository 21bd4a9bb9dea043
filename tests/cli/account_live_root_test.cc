// `memfleet account /` on this Linux machine: a generic report of its real processes, whose PSS adds up
// to what the kernel's own smaps_rollup files say at (nearly) the same moment.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <dirent.h>
#include <sstream>
#include <string>

#include "cli/commands/account_command.h"
#include "nlohmann/json.hpp"
#include "tests/support/load_tree.h"

namespace memfleet::cli {
namespace {

// Σ Pss of /proc/*/smaps_rollup, read directly (the independent reference).
long long RollupPssSum() {
  long long total = 0;
  DIR* d = opendir("/proc");
  if (d == nullptr) return -1;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string text = testing::ReadFileForTest("/proc/" + name + "/smaps_rollup");
    size_t at = text.find("\nPss:");
    if (at == std::string::npos) continue;
    total += std::atoll(text.c_str() + at + 5);
  }
  closedir(d);
  return total;
}

TEST(AccountLiveRootTest, GenericReportOfThisMachine) {
  if (geteuid() != 0) GTEST_SKIP() << "reading every process's smaps needs root";
  long long before = RollupPssSum();
  std::ostringstream out, err;
  AccountArgs args;
  args.root = "/";
  args.json = true;
  ASSERT_EQ(RunAccount(args, out, err), kExitOk) << err.str();
  long long after = RollupPssSum();
  nlohmann::json r = nlohmann::json::parse(out.str());

  EXPECT_EQ(r["platform"], "generic");
  ASSERT_TRUE(r["device"]["mem_total_kb"].is_number());
  EXPECT_GT(r["device"]["mem_total_kb"].get<long long>(), 0);
  EXPECT_TRUE(r["device"]["ddr_estimated"].get<bool>());
  ASSERT_TRUE(r["processes"].contains(std::to_string(getpid()))) << "this test's own process is missing";
  const auto& self = r["processes"][std::to_string(getpid())];
  EXPECT_GT(self["pss_kb"].get<long long>(), 0);
  EXPECT_EQ(self["gl_kb"], 0);

  long long sum = 0;
  for (auto it = r["processes"].begin(); it != r["processes"].end(); ++it) {
    if (it.value()["pss_kb"].is_number()) sum += it.value()["pss_kb"].get<long long>();
  }
  long long reference = (before + after) / 2;
  ASSERT_GT(reference, 0);
  // Processes come and go between the three reads; allow 15% of drift, no more.
  EXPECT_NEAR(static_cast<double>(sum), static_cast<double>(reference), 0.15 * static_cast<double>(reference))
      << "engine " << sum << " kB vs smaps_rollup " << reference << " kB";
}

}  // namespace
}  // namespace memfleet::cli
