// The process lines of `dumpsys meminfo` (docs/accounting.md section 9): every form the spec lists, on the
// real text of an NVIDIA Shield (tests/data/nodes/real/dumpsys_shield_pss_by_process_oom.txt) and on the
// other forms written here line by line.
#include "accounting/dumpsys_processes.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/load_tree.h"
#include "tests/support/test_paths.h"

namespace memfleet::accounting {
namespace {

TEST(DumpsysProcessesTest, TheShieldsAndroid13Lines) {
  absl::StatusOr<DumpsysProcesses> d = ParseDumpsysProcesses(
      testing::ReadFileForTest(testing::TestData("nodes/real/dumpsys_shield_pss_by_process_oom.txt")));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->has_process_section);
  EXPECT_TRUE(d->has_oom_section);
  ASSERT_EQ(d->processes.size(), 6u);
  EXPECT_EQ(d->skipped_line_count, 0u);
  const DumpsysProcessLine& system = d->processes[0];
  EXPECT_EQ(system.pid, 3703);
  EXPECT_EQ(system.name, "system");
  EXPECT_EQ(system.total_pss_kb, 183873);
  EXPECT_EQ(system.oom_adj, -900);
  EXPECT_EQ(system.line_number, 2);
  EXPECT_EQ(d->processes[1].name, "com.spocky.projengmenu");  // "state 14 oom 150 / activities"
  EXPECT_EQ(d->processes[1].oom_adj, 150);
  EXPECT_EQ(d->processes[2].name, "vendor.nvidia.hardware.graphics.composer@2.0-service");
  EXPECT_FALSE(d->processes[2].oom_adj.has_value());  // a native process: no oom
  EXPECT_EQ(d->processes[5].pid, 6822);
  EXPECT_EQ(d->processes[5].oom_adj, 955);
  EXPECT_TRUE(d->cached_pids.empty());  // the OOM table is cut after its first group
}

TEST(DumpsysProcessesTest, EveryLineForm) {
  const std::string text =
      "Total PSS by process:\n"
      "    52,345K: com.android.systemui (pid 1234 / activities)\n"             // activities
      "    40,000K: surfaceflinger (pid 600) (   1,234K in swap)\n"             // a trailing note
      "     8,000K: com.example (x) (pid 700 state 19 oom 999 / activities)\n"  // a name with parentheses
      "    183873 kB: system (pid 3703)\n"                                      // Android 4.4
      "     1,000K: a duplicate of pid 600 (pid 600)\n"                         // the first line wins
      "     garbage line\n"                                                     // not a number: ends the section
      "     9,999K: after the section (pid 800)\n"
      "\n"
      "Total PSS by process:\n"
      "    12,000K: no pid here\n"  // skipped, counted
      "    13,000K: bad oom (pid 900 oom x)\n"
      "\n"
      "Total PSS by OOM adjustment:\n"
      "    40,000K: Native\n"
      "        40,000K: surfaceflinger (pid 600)\n"
      "    60,000K: Cached\n"
      "        8,000K: com.example (x) (pid 700)\n"
      "        5,000K: com.cached.old (pid 701)\n"
      "Total RAM: 3,019,740K (status normal)\n";
  absl::StatusOr<DumpsysProcesses> d = ParseDumpsysProcesses(text);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->processes.size(), 4u);
  EXPECT_EQ(d->processes[0].name, "com.android.systemui");
  EXPECT_EQ(d->processes[0].total_pss_kb, 52345);
  EXPECT_EQ(d->processes[1].pid, 600);
  EXPECT_EQ(d->processes[1].total_pss_kb, 40000);
  EXPECT_EQ(d->processes[2].name, "com.example (x)");
  EXPECT_EQ(d->processes[2].oom_adj, 999);
  EXPECT_EQ(d->processes[3].total_pss_kb, 183873);
  EXPECT_EQ(d->processes[3].name, "system");
  EXPECT_EQ(d->skipped_line_count, 2u);
  EXPECT_NE(d->skipped_lines[0].find("line 11:"), std::string::npos) << d->skipped_lines[0];
  EXPECT_EQ(d->cached_pids, (std::set<int>{700, 701}));
}

// Android 14 prints a "Total RSS by process" table before the PSS one, and a "by category" table after: only
// the PSS lines are processes.
TEST(DumpsysProcessesTest, OnlyThePssTableIsRead) {
  const std::string text =
      "Total RSS by process:\n"
      "    300,000K: system (pid 3703 / activities)\n"
      "\n"
      "Total RSS by OOM adjustment:\n"
      "    300,000K: Cached\n"
      "        300,000K: system (pid 3703)\n"
      "\n"
      "Total PSS by process:\n"
      "    183,873K: system (pid 3703 state 0 oom -900)\n"
      "\n"
      "Total PSS by category:\n"
      "    100,000K: Dalvik\n"
      "     50,000K: .so mmap (pid 5)\n";
  absl::StatusOr<DumpsysProcesses> d = ParseDumpsysProcesses(text);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->processes.size(), 1u);
  EXPECT_EQ(d->processes[0].total_pss_kb, 183873);
  EXPECT_TRUE(d->cached_pids.empty());  // the RSS table's Cached group is not the PSS one
  EXPECT_EQ(d->skipped_line_count, 0u);
}

// Garbage, cut lines and numbers past 64 bits are skipped and counted, never a crash or a made-up figure.
TEST(DumpsysProcessesTest, GarbageIsSkippedAndCounted) {
  const std::string text =
      "Total PSS by process:\n"
      "    9,223,372,036,854,775,808K: one past the largest (pid 5)\n"
      "    1K: cut before the pid (pid \n"
      "    1K: zero pid (pid 0)\n"
      "    1K: negative pid (pid -3)\n"
      "    1K: unclosed (pid 7\n"
      "    1K: trailing words (pid 8) and more\n"
      "    1K:  (pid 9)\n"
      "    9,223,372,036,854,775,807K: the largest (pid 10)\n";
  absl::StatusOr<DumpsysProcesses> d = ParseDumpsysProcesses(text);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->processes.size(), 1u);
  EXPECT_EQ(d->processes[0].pid, 10);
  EXPECT_EQ(d->processes[0].total_pss_kb, INT64_MAX);
  EXPECT_EQ(d->skipped_line_count, 7u);
}

TEST(DumpsysProcessesTest, NoSectionIsEmptyNotAnError) {
  absl::StatusOr<DumpsysProcesses> d = ParseDumpsysProcesses("Total RAM: 2004576 kB\n");
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->has_process_section);
  EXPECT_TRUE(d->processes.empty());
  EXPECT_TRUE(ParseDumpsysProcesses("").ok());
}

TEST(DumpsysProcessesTest, MoreLinesThanAnyPhoneIsRefused) {
  std::string text = "Total PSS by process:\n";
  for (size_t pid = 1; pid <= kMaxDumpsysProcesses + 1; ++pid) text += "1K: p (pid " + std::to_string(pid) + ")\n";
  EXPECT_EQ(ParseDumpsysProcesses(text).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace memfleet::accounting
