// The dumpsys tier (docs/accounting.md section 9) on a capture made as shell: every other process's
// smaps, smaps_rollup and maps answer EACCES, and cmd/dumpsys_meminfo is the real text of an NVIDIA
// Shield (tests/data/captures-shell/shield-shell: its expected.json works the figures out by hand).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "accounting/account.h"
#include "accounting/dumpsys_tier.h"
#include "nlohmann/json.hpp"
#include "report/report_json.h"
#include "tests/support/load_tree.h"
#include "tests/support/test_paths.h"

namespace memfleet::accounting {
namespace {

using nlohmann::json;

const std::string kDir = testing::TestData("captures-shell/shield-shell");

bool HasWarningContaining(const Report& r, const std::string& part) {
  for (const std::string& w : r.warnings) {
    if (w.find(part) != std::string::npos) return true;
  }
  return false;
}

// The capture without its dumpsys text, and with `text` in its place when given.
Capture WithDumpsysText(const std::string* text) {
  const Capture c = testing::LoadTree(kDir + "/tree");
  Capture out;
  for (const auto& [path, node] : c.nodes()) {
    if (path.rfind("cmd", 0) == 0) continue;
    if (node.is_directory()) out.AddDirectory(path);
    if (node.is_error()) out.AddError(path, node.content);
    if (node.is_file()) out.AddFile(path, node.content);
  }
  if (text != nullptr) out.AddFile("cmd/dumpsys_meminfo", *text);
  return out;
}

TEST(DumpsysTierTest, ShellCaptureGivesEveryFigureOfExpectedJson) {
  const json expected = json::parse(testing::ReadFileForTest(kDir + "/expected.json"));
  const Report r = Account(testing::LoadTree(kDir + "/tree"));
  const json got = json::parse(report::ReportToJson(r));
  EXPECT_EQ(got["platform"], expected["platform"]);
  for (const auto& [key, value] : expected["device"].items()) EXPECT_EQ(got["device"][key], value) << "device." << key;
  ASSERT_EQ(got["processes"].size(), expected["processes"].size()) << got["processes"].dump();
  for (const auto& [pid, p] : expected["processes"].items()) {
    for (const auto& [key, value] : p.items()) {
      EXPECT_EQ(got["processes"][pid][key], value) << "pid " << pid << " " << key;
    }
  }
  const std::string warnings = got["warnings"].dump();
  for (const json& part : expected["warnings_contain"]) {
    EXPECT_NE(warnings.find(part.get<std::string>()), std::string::npos) << part << " in " << warnings;
  }
  // Where each figure came from: the dumpsys line, named.
  EXPECT_EQ(r.sources.at("processes.3703.total_kb").rfind("cmd/dumpsys_meminfo line 2 ", 0), 0u)
      << r.sources.at("processes.3703.total_kb");
  EXPECT_EQ(r.sources.at("processes.3703.pss_kb"), "unavailable: smaps unreadable (dumpsys tier)");
  // dumpsys' own view of those processes is the line.
  EXPECT_EQ(r.processes.at(3703).dumpsys_total_pss_kb, 183873);
  // The JSON reads back with its tiers.
  absl::StatusOr<Report> back = report::ReportFromJson(report::ReportToJson(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->device.tier, "dumpsys");
  EXPECT_EQ(back->processes.at(6822).tier, "dumpsys");
  EXPECT_EQ(back->processes.at(9999).tier, "kernel");
}

// Without the dumpsys text (or without its process section) nothing is made up: the unreadable processes
// stay with null figures, the device total counts only what it knows, and the tier stays kernel.
TEST(DumpsysTierTest, WithoutTheTextTheFiguresStayNull) {
  const Report r = Account(WithDumpsysText(nullptr));
  EXPECT_EQ(r.device.tier, "kernel");
  EXPECT_FALSE(r.processes.at(3703).total_kb.has_value());
  EXPECT_EQ(r.processes.at(3703).tier, "kernel");
  EXPECT_EQ(r.device.processes_kb, 2020);  // the agent's own process only
  const std::string summary_only = "Total RAM: 3,016,708K (status normal)\n";
  EXPECT_EQ(Account(WithDumpsysText(&summary_only)).device.tier, "kernel");
}

// Garbage in place of the text: no process is made up, nothing crashes, the rest is computed.
TEST(DumpsysTierTest, GarbageTextGivesNullsAndAWarning) {
  const std::string garbage = "Total PSS by process:\n12,3x4K: cut (pid\n1K: \x01\x02 (pid x)\n";
  const Report r = Account(WithDumpsysText(&garbage));
  EXPECT_EQ(r.device.tier, "kernel");
  EXPECT_FALSE(r.processes.at(3703).total_kb.has_value());
  EXPECT_TRUE(HasWarningContaining(r, "lines of Total PSS by process are none of its forms, skipped (line 2: "));
  EXPECT_EQ(r.device.kernel_kb, 140000);
}

// Older releases give no "oom A" per line: cached is membership of the OOM table's Cached group.
TEST(DumpsysTierTest, OlderTextTakesCachedFromTheOomTable) {
  const std::string text =
      "Total PSS by process:\n"
      "    183,873K: system (pid 3703)\n"
      "     38,580K: com.android.vending:background (pid 6822)\n"
      "\n"
      "Total PSS by OOM adjustment:\n"
      "    183,873K: System\n"
      "        183,873K: system (pid 3703)\n"
      "     38,580K: Cached\n"
      "         38,580K: com.android.vending:background (pid 6822)\n";
  const Report r = Account(WithDumpsysText(&text));
  EXPECT_EQ(r.processes.at(6822).tier, "dumpsys");
  EXPECT_TRUE(r.processes.at(6822).cached);
  EXPECT_FALSE(r.processes.at(3703).cached);
  EXPECT_EQ(r.processes.at(6822).oom_score_adj, 955);  // not in the line: proc/6822/oom_score_adj
  // 3703 (183873) and the agent (2020); 6822 is cached; 3387 and friends are not in this text: unknown.
  EXPECT_EQ(r.device.processes_kb, 185893);
  EXPECT_FALSE(r.processes.at(3387).total_kb.has_value());
  EXPECT_EQ(r.processes.at(3387).tier, "kernel");
}

// The warnings of a shell capture whose text names `part`, how many.
size_t WarningsContaining(const Report& r, const std::string& part) {
  size_t n = 0;
  for (const std::string& w : r.warnings) n += w.find(part) != std::string::npos;
  return n;
}

// As shell every other process answers EACCES (hundreds on a phone): the report says so in one counted
// line for smaps and one for fdinfo or maps, naming a few, where their figures come from; never a line
// each. The six denied pids are the tree's (their smaps.err), the names those expected.json gives.
TEST(DumpsysTierTest, DeniedProcessesMakeOneCountedWarningEach) {
  const json expected = json::parse(testing::ReadFileForTest(kDir + "/expected.json"));
  const Capture tree = testing::LoadTree(kDir + "/tree");
  std::string named;  // "3387 vendor.nvidia..., 3407 surfaceflinger, ...": the denied pids, in pid order
  std::set<int> denied;
  for (const std::string& child : tree.Children("proc")) {
    int pid = 0;
    const Node* smaps = tree.Find("proc/" + child + "/smaps");
    if (absl::SimpleAtoi(child, &pid) && smaps != nullptr && smaps->is_error() && smaps->content == "EACCES") {
      denied.insert(pid);
    }
  }
  ASSERT_EQ(denied.size(), 6u);
  for (int pid : denied) {
    absl::StrAppend(&named, named.empty() ? "" : ", ", pid, " ",
                    expected["processes"][std::to_string(pid)]["name"].get<std::string>());
  }
  const Report r = Account(tree);
  EXPECT_EQ(WarningsContaining(r, "EACCES"), 2u) << json(r.warnings).dump(1);
  EXPECT_TRUE(
      HasWarningContaining(r, "smaps unreadable for 6 processes (EACCES): their figures come from dumpsys: " + named))
      << json(r.warnings).dump(1);
  EXPECT_TRUE(HasWarningContaining(r,
                                   "fdinfo or maps unreadable for 6 processes (EACCES): the dma-bufs they hold "
                                   "cannot be seen; their dma_kb null: " +
                                       named))
      << json(r.warnings).dump(1);

  // Without the text their figures are null, and the line says so.
  const Report without = Account(WithDumpsysText(nullptr));
  EXPECT_EQ(WarningsContaining(without, "EACCES"), 2u) << json(without.warnings).dump(1);
  EXPECT_TRUE(HasWarningContaining(without, "smaps unreadable for 6 processes (EACCES): their figures are null: 3387 "))
      << json(without.warnings).dump(1);
  // The per-process reason is still in sources.
  EXPECT_EQ(without.sources.at("processes.3703.dma_kb"), "unavailable: proc/3703/maps unreadable (EACCES)");

  // A text naming only two of them: the line counts both kinds and names those left null.
  const std::string text =
      "Total PSS by process:\n"
      "    183,873K: system (pid 3703 state 0 oom -900)\n"
      "     38,580K: com.android.vending:background (pid 6822 state 19 oom 955)\n";
  const Report some = Account(WithDumpsysText(&text));
  EXPECT_TRUE(HasWarningContaining(
      some, "smaps unreadable for 6 processes (EACCES): 2 take their figures from dumpsys, 4 have them null: 3387 "))
      << json(some.warnings).dump(1);
  EXPECT_EQ(WarningsContaining(some, ", 3703 "), 1u) << json(some.warnings).dump(1);  // the maps line only
}

// A pid the kernel tier can read keeps its rules even when dumpsys lists it too.
TEST(DumpsysTierTest, AReadablePidKeepsTheKernelTier) {
  Capture c = testing::LoadTree(kDir + "/tree");
  c.AddFile("cmd/dumpsys_meminfo", *c.FileContent("cmd/dumpsys_meminfo") +
                                       "\nTotal PSS by process:\n    99,999K: memfleet-agent (pid 9999)\n");
  const Report r = Account(c);
  EXPECT_EQ(r.processes.at(9999).tier, "kernel");
  EXPECT_EQ(r.processes.at(9999).total_kb, 2020);
}

// A pid that exited during the capture (smaps ENOENT) is not brought back by the text; a pid the capture
// does not hold at all is taken from the text on a shell capture, but not when the agent read as root
// (its walk saw every process: that one was born after it).
TEST(DumpsysTierTest, WhichPidsTheTierStandsInFor) {
  DumpsysProcesses text;
  for (int pid : {10, 11, 12, 13}) text.processes.push_back({pid, "p", 1000, std::nullopt, pid});
  DumpsysTierScope scope;
  scope.unreadable_pids = {10};
  scope.captured_pids = {10, 11, 12};  // 11 read by the kernel tier, 12 exited; 13 not captured
  Report report;
  std::vector<ProcessReport> shell = DumpsysTierProcesses(text, scope, report);
  ASSERT_EQ(shell.size(), 2u);
  EXPECT_EQ(shell[0].pid, 10);
  EXPECT_EQ(shell[1].pid, 13);
  scope.walk_saw_every_process = true;
  std::vector<ProcessReport> root = DumpsysTierProcesses(text, scope, report);
  ASSERT_EQ(root.size(), 1u);
  EXPECT_EQ(root[0].pid, 10);

  Capture c = testing::LoadTree(kDir + "/tree");
  c.AddError("proc/6970/smaps", "ENOENT");
  c.AddError("proc/6970/smaps_rollup", "ENOENT");
  const Report r = Account(c);
  EXPECT_EQ(r.processes.count(6970), 0u);
  EXPECT_EQ(r.device.processes_kb, 696991 - 128382);
}

}  // namespace
}  // namespace memfleet::accounting
