// The README's exit-code table is the one the binaries use (common/exit_codes.h): each row's code and
// meaning, in order, and no row missing or extra. The gates that return these codes are asserted through
// the real binaries in tests/integration (cli_integrationtest, baseline_integrationtest).
#include "common/exit_codes.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/test_paths.h"

namespace memfleet {
namespace {

std::string ReadReadme() {
  // tests/data sits two folders below the repository's root.
  std::ifstream in(testing::GetTestPaths().data_dir + "/../../README.md");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ExitCodesTest, TheReadmeTableIsTheHeadersTable) {
  const std::string readme = ReadReadme();
  ASSERT_FALSE(readme.empty());
  const size_t section = readme.find("### Exit codes");
  ASSERT_NE(section, std::string::npos);
  // Rows such as "| `3` | over the limit | ... |", up to the blank line that ends the table.
  std::vector<std::pair<int, std::string>> rows;
  std::istringstream lines(readme.substr(readme.find("| code |", section)));
  for (std::string line; std::getline(lines, line) && !line.empty();) {
    if (line.rfind("| `", 0) != 0) continue;
    const size_t meaning_end = line.find(" |", 8);
    rows.emplace_back(line[3] - '0', line.substr(8, meaning_end - 8));
  }
  const std::vector<std::pair<int, std::string>> expected = {{kExitOk, "done"},
                                                             {kExitFailed, "failed"},
                                                             {kExitUsage, "usage"},
                                                             {kExitOverLimit, "over the limit"},
                                                             {kExitNothingToCheck, "nothing to check"},
                                                             {kExitPartial, "partial"}};
  EXPECT_EQ(rows, expected);
}

TEST(ExitCodesTest, TheParsersOwnCodesBecomeUsage) {
  EXPECT_EQ(UsageExitCode(0), kExitOk);       // --help, --version
  EXPECT_EQ(UsageExitCode(106), kExitUsage);  // CLI11: a bad value
  EXPECT_EQ(UsageExitCode(109), kExitUsage);  // CLI11: an unknown flag
}

}  // namespace
}  // namespace memfleet
