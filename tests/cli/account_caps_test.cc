// `memfleet account` on a hostile tree of sparse smaps (each reads as 60 MB of NULs): it holds the capture
// to the agent's default cap, and the report names each node the cap left out.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "agent/reader/collector.h"
#include "cli/commands/account_command.h"
#include "nlohmann/json.hpp"
#include "tests/support/sparse_tree.h"
#include "tests/support/temp_dir.h"

namespace memfleet::cli {
namespace {

TEST(AccountCapsTest, NodesBeyondTheCaptureCapAreWarnedAboutNotHeld) {
  testing::TempDir dir("account_caps");
  ASSERT_FALSE(dir.path().empty());
  // Four fit under the default 256 MiB cap; 105 and 106 do not. Before, all six (360 MB) were held.
  ASSERT_TRUE(testing::WriteSparseSmapsTree(dir, {101, 102, 103, 104, 105, 106}, 60'000'000));
  AccountArgs args;
  args.root = dir.path();
  args.json = true;
  std::ostringstream out, err;
  ASSERT_EQ(RunAccount(args, out, err), kExitOk) << err.str();
  nlohmann::json report = nlohmann::json::parse(out.str());
  std::string warnings = report["warnings"].dump();
  for (const char* pid : {"105", "106"}) {
    EXPECT_NE(warnings.find(std::string("proc/") + pid + "/smaps: unreadable (" + agent::kCaptureFullErrno + ")"),
              std::string::npos)
        << pid << ": " << warnings;
  }
  EXPECT_EQ(warnings.find("proc/104/smaps: unreadable"), std::string::npos) << warnings;
}

}  // namespace
}  // namespace memfleet::cli
