// Warnings about many processes made one counted line (accounting/counted_warnings.h).
#include "accounting/counted_warnings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace memfleet::accounting {
namespace {

bool Denied(const std::string& w) { return absl::EndsWith(w, "(EACCES)"); }

TEST(CountedWarningsTest, WarningPidIsThePidOfAProcDirectoryOnly) {
  EXPECT_EQ(WarningPid("proc/3703/smaps: unreadable (EACCES)"), 3703);
  EXPECT_EQ(WarningPid("proc/12: neither cmdline nor status names the process"), 12);
  EXPECT_EQ(WarningPid("proc/meminfo: unreadable (EACCES): device figures unknown"), std::nullopt);
  EXPECT_EQ(WarningPid("proc/mtk_mali/gpu_memory: unreadable (EACCES)"), std::nullopt);
  EXPECT_EQ(WarningPid("proc/3703"), std::nullopt);
  EXPECT_EQ(WarningPid("sys/class/kgsl/kgsl/proc/3703: unreadable (EACCES)"), std::nullopt);
  EXPECT_EQ(WarningPid("proc/99999999999999999999/smaps: unreadable (EACCES)"), std::nullopt);
}

// One warning says more as it is: it stays, and nothing is counted.
TEST(CountedWarningsTest, ALoneWarningIsKept) {
  std::vector<std::string> warnings = {"proc/1/smaps: unreadable (EACCES)", "proc/meminfo: unreadable (EACCES)"};
  const std::vector<std::string> before = warnings;
  EXPECT_TRUE(TakeProcessWarnings(warnings, Denied).empty());
  EXPECT_EQ(warnings, before);
}

// Two or more: every matching one about a process goes, each pid once in ascending order; a matching
// warning about no process and the others stay, in their order.
TEST(CountedWarningsTest, MatchingWarningsAboutProcessesAreTakenOut) {
  std::vector<std::string> warnings = {
      "proc/30/smaps: unreadable (EACCES)", "proc/meminfo: unreadable (EACCES)",
      "proc/10/smaps: unreadable (EACCES)", "proc/10/oom_score_adj: missing: oom_score_adj null, process not cached",
      "proc/10/maps unreadable (EACCES)",   "sys/block/zram0: no zram node captured"};
  EXPECT_EQ(TakeProcessWarnings(warnings, Denied), (std::vector<int>{10, 30}));
  EXPECT_EQ(warnings,
            (std::vector<std::string>{"proc/meminfo: unreadable (EACCES)",
                                      "proc/10/oom_score_adj: missing: oom_score_adj null, process not cached",
                                      "sys/block/zram0: no zram node captured"}));
}

TEST(CountedWarningsTest, NamesTheFirstEightThenSaysThereAreMore) {
  const auto as_dir = [](int pid) { return absl::StrCat("proc/", pid); };
  EXPECT_EQ(NameSomeProcesses({1, 2}, as_dir), "proc/1, proc/2");
  EXPECT_EQ(NameSomeProcesses({1, 2, 3, 4, 5, 6, 7, 8}, as_dir),
            "proc/1, proc/2, proc/3, proc/4, proc/5, proc/6, proc/7, proc/8");
  EXPECT_EQ(NameSomeProcesses({1, 2, 3, 4, 5, 6, 7, 8, 9}, as_dir),
            "proc/1, proc/2, proc/3, proc/4, proc/5, proc/6, proc/7, proc/8, ...");
  EXPECT_EQ(NameSomeProcesses({}, as_dir), "");
}

}  // namespace
}  // namespace memfleet::accounting
