// docs/deploy.md's table "What the agent can read: shell, su and adb root": the sample Qualcomm and
// MediaTek captures as an agent with each access level would record them (docs/capture-format.md: a node
// it could not read is an error node with its errno; a folder it could not list is one error node, its
// contents never read; debugfs not mounted leaves no node), and the figures the table says are then null
// are null, with a warning naming the node, while every other figure is still the sample's expected value.
// What SELinux and file modes deny on which build comes from AOSP's policy and the nodes' modes, not from
// a phone: this test checks what the engine does with it.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "accounting/account.h"
#include "capture/capture.h"
#include "nlohmann/json.hpp"
#include "report/report_json.h"
#include "tests/support/load_tree.h"
#include "tests/support/test_data.h"

namespace memfleet::accounting {
namespace {

using nlohmann::json;

// How an access level's agent records the nodes of the table's rows.
struct Access {
  bool other_apps_denied = false;      // proc/<pid>/smaps, maps, fdinfo/: EACCES (ptrace access needed)
  bool debugfs_mounted = true;         // sys/kernel/debug/: no node when not mounted (user builds)
  bool kgsl_proc_denied = false;       // sys/class/kgsl/kgsl/proc: EACCES
  bool mtk_gpu_memory_denied = false;  // proc/mtk_mali/gpu_memory: EACCES (a vendor's policy)
  bool heap_dumps_refused = false;     // cmd/native_heap@<pid>: `am dumpheap -n` exits non-zero (EIO)
};

// As shell the agent cannot tell the GPU processes (their maps and KGSL folders are denied), so it asks
// for no heap dump, and it writes rss_pid only for processes whose memory it read: none.
const Access kShellUserBuild{.other_apps_denied = true, .debugfs_mounted = false, .kgsl_proc_denied = true};
const Access kSuUserBuild{.debugfs_mounted = false, .heap_dumps_refused = true};
const Access kAdbRootUserdebug{};

// "proc/<pid>" when the path is in a pid folder, else "".
std::string PidDir(const std::vector<std::string>& parts) {
  if (parts.size() < 2 || parts[0] != "proc" || parts[1].empty() ||
      parts[1].find_first_not_of("0123456789") != std::string::npos) {
    return "";
  }
  return "proc/" + parts[1];
}

void CopyNode(const capture::Node& node, const std::string& path, capture::Capture& c) {
  if (node.is_directory()) {
    c.AddDirectory(path);
  } else if (node.is_error()) {
    c.AddError(path, node.content);
  } else {
    c.AddFile(path, node.content);
  }
}

// The sample capture as an agent with `access` records it.
capture::Capture AsRecordedWith(const std::string& sample, const Access& access) {
  const capture::Capture full = testing::LoadTree(testing::TestData("captures/" + sample + "/tree"));
  capture::Capture c;
  for (const auto& [path, node] : full.nodes()) {
    const std::vector<std::string> parts = absl::StrSplit(path, '/');
    const std::string pid_dir = PidDir(parts);
    if (access.other_apps_denied && !pid_dir.empty()) {
      if (parts.size() == 2) {
        // The pid folder lists; the agent reads maps first and lists fdinfo for every pid: both denied.
        c.AddDirectory(path);
        c.AddError(pid_dir + "/maps", "EACCES");
        c.AddError(pid_dir + "/fdinfo", "EACCES");
      } else if (parts[2] == "smaps" || parts[2] == "smaps_rollup") {
        c.AddError(path, "EACCES");
      } else if (parts[2] != "maps" && parts[2] != "fdinfo") {
        CopyNode(node, path, c);  // cmdline, status, oom_score_adj: readable (readproc)
      }
      continue;
    }
    if (!access.debugfs_mounted && absl::StartsWith(path, "sys/kernel/debug")) continue;
    if (access.kgsl_proc_denied && absl::StartsWith(path, "sys/class/kgsl/kgsl/proc")) {
      if (path == "sys/class/kgsl/kgsl/proc") c.AddError(path, "EACCES");
      continue;
    }
    if (access.mtk_gpu_memory_denied && path == "proc/mtk_mali/gpu_memory") {
      c.AddError(path, "EACCES");
      continue;
    }
    if (absl::StartsWith(path, "cmd/native_heap@") || absl::StartsWith(path, "proc/dma_heap/rss_pid@")) {
      if (access.other_apps_denied) continue;  // never asked for
      if (access.heap_dumps_refused && absl::StartsWith(path, "cmd/")) {
        c.AddError(path, "EIO");
        continue;
      }
    }
    CopyNode(node, path, c);
  }
  return c;
}

json Expected(const std::string& sample) {
  return json::parse(testing::ReadTestData("captures/" + sample + "/expected.json"));
}

json Accounted(const std::string& sample, const Access& access) {
  return json::parse(report::ReportToJson(Account(AsRecordedWith(sample, access))));
}

bool AnyWarningHas(const json& report, const std::string& text) {
  for (const json& w : report["warnings"]) {
    if (absl::StrContains(w.get<std::string>(), text)) return true;
  }
  return false;
}

// Each device figure: null when `nulls` names it, `differs`' value when it names it, else the sample's
// expected value.
void ExpectDevice(const json& got, const json& expected, const std::set<std::string>& nulls,
                  const json& differs = json::object()) {
  for (const auto& [figure, value] : expected["device"].items()) {
    if (differs.contains(figure)) {
      EXPECT_EQ(got["device"][figure], differs[figure]) << figure;
    } else if (nulls.count(figure) > 0) {
      EXPECT_TRUE(got["device"][figure].is_null()) << figure << " = " << got["device"][figure];
    } else {
      EXPECT_EQ(got["device"][figure], value) << figure;
    }
  }
}

const char* const kProcessFigures[] = {"pss_kb",          "swap_pss_kb",     "gfxdev_kb",
                                       "gl_kb",           "dma_kb",          "native_graphics_kb",
                                       "non_graphics_kb", "graphics_dma_kb", "total_kb"};

// Every process of the sample: the figures `nulls` names are null, native_graphics_kb is 0 ("none")
// when `heap_dumps_missing`, every other figure the sample's expected value. A process the sample's
// report does not have (a kernel thread, whose empty smaps a shell agent cannot read either) must have
// every figure null.
void ExpectProcesses(const json& got, const json& expected, const std::set<std::string>& nulls,
                     bool heap_dumps_missing) {
  for (const auto& [pid, process] : got["processes"].items()) {
    if (expected["processes"].contains(pid)) continue;
    EXPECT_FALSE(nulls.empty()) << "process " << pid << " is not in the sample's report";
    EXPECT_TRUE(process["pss_kb"].is_null() && process["total_kb"].is_null()) << pid << " " << process;
  }
  for (const auto& [pid, want] : expected["processes"].items()) {
    ASSERT_TRUE(got["processes"].contains(pid)) << "process " << pid << " went missing";
    const json& p = got["processes"][pid];
    for (const char* figure : kProcessFigures) {
      if (nulls.count(figure) > 0) {
        EXPECT_TRUE(p[figure].is_null()) << pid << " " << figure << " = " << p[figure];
      } else if (heap_dumps_missing && std::string(figure) == "native_graphics_kb") {
        EXPECT_EQ(p[figure], 0) << pid;
        EXPECT_EQ(p["native_graphics_source"], "none") << pid;
      } else if (heap_dumps_missing && std::string(figure) == "non_graphics_kb" && !p[figure].is_null()) {
        // The graphics native heap, no longer measured, stays on the non-graphics side.
        EXPECT_EQ(p[figure], want[figure].get<int64_t>() + want["native_graphics_kb"].get<int64_t>()) << pid;
      } else if (heap_dumps_missing && std::string(figure) == "graphics_dma_kb" && !p[figure].is_null()) {
        EXPECT_EQ(p[figure], want[figure].get<int64_t>() - want["native_graphics_kb"].get<int64_t>()) << pid;
      } else {
        EXPECT_EQ(p[figure], want[figure]) << pid << " " << figure;
      }
    }
    if (nulls.count("dma_kb") > 0) {
      EXPECT_TRUE(p["dma_by_exporter_kb"].is_null()) << pid;
      EXPECT_TRUE(p["heaps"].is_null()) << pid;
    }
  }
}

TEST(AccessLevelTest, AdbRootOnAUserdebugBuildReadsEverything) {
  for (const char* sample : {"qcom-sm8450", "mtk-mt6989"}) {
    const json got = Accounted(sample, kAdbRootUserdebug);
    ExpectDevice(got, Expected(sample), {});
    ExpectProcesses(got, Expected(sample), {}, /*heap_dumps_missing=*/false);
  }
}

// su on a user build: root, but debugfs is not mounted, and `am` refuses heap dumps of apps that are not
// debuggable whoever asks. The CMA folders of debugfs are needed only where sysfs lacks a figure:
// MediaTek's GCMA regions have no sysfs total_pages, so gcma_kb and what is built on it are null.
TEST(AccessLevelTest, SuOnAUserBuildMissesWhatOnlyDebugfsAndHeapDumpsHave) {
  const json qcom = Accounted("qcom-sm8450", kSuUserBuild);
  ExpectDevice(qcom, Expected("qcom-sm8450"), {});
  ExpectProcesses(qcom, Expected("qcom-sm8450"), {}, /*heap_dumps_missing=*/true);
  EXPECT_TRUE(AnyWarningHas(qcom, "heap dump failed (EIO)")) << qcom["warnings"];

  const json mtk = Accounted("mtk-mt6989", kSuUserBuild);
  ExpectDevice(mtk, Expected("mtk-mt6989"), {"gcma_kb", "static_reserved_kb", "total_kb"});
  ExpectProcesses(mtk, Expected("mtk-mt6989"), {}, /*heap_dumps_missing=*/true);
  EXPECT_TRUE(AnyWarningHas(mtk, "GCMA region")) << mtk["warnings"];
}

// shell on a user build: other apps' memory nodes denied, the KGSL per-process folder denied, debugfs
// absent. No process's PSS or DMA-BUF share is known; on Qualcomm no GPU figure either, so the device's
// processes and total are null rather than an undercount. The kernel side is still the sample's.
TEST(AccessLevelTest, ShellOnAUserBuildLeavesTheFiguresOfOtherAppsNull) {
  const json qcom = Accounted("qcom-sm8450", kShellUserBuild);
  ExpectDevice(qcom, Expected("qcom-sm8450"), {"processes_kb", "total_kb"});
  ExpectProcesses(
      qcom, Expected("qcom-sm8450"),
      {"pss_kb", "swap_pss_kb", "gfxdev_kb", "gl_kb", "dma_kb", "non_graphics_kb", "graphics_dma_kb", "total_kb"},
      /*heap_dumps_missing=*/true);
  EXPECT_TRUE(AnyWarningHas(qcom, "sys/class/kgsl/kgsl/proc: unreadable (EACCES)")) << qcom["warnings"];
  // Every process denied: one counted line for their smaps and one for their fdinfo, not a line each.
  // The processes of expected.json and kthreadd (pid 2), whose empty smaps this simulation denies too
  // (31777 has no smaps: an exited process).
  const size_t processes = Expected("qcom-sm8450")["processes"].size() + 1;
  EXPECT_TRUE(AnyWarningHas(
      qcom, absl::StrCat("smaps unreadable for ", processes, " processes (EACCES): their figures are null: ")))
      << qcom["warnings"];
  EXPECT_TRUE(AnyWarningHas(qcom, absl::StrCat("fdinfo or maps unreadable for ", processes,
                                               " processes (EACCES): the dma-bufs they hold cannot be seen")))
      << qcom["warnings"];
  size_t denials = 0;  // those two and the KGSL folder's
  for (const json& w : qcom["warnings"]) denials += absl::StrContains(w.get<std::string>(), "EACCES");
  EXPECT_EQ(denials, 3u) << qcom["warnings"];
}

// MediaTek as shell: its GPU node is readable (0444), so gl_kb is the sample's; the processes' own
// figures are not, so processes_kb counts none of them (0, with a warning saying how many were left out),
// and without debugfs the GCMA regions' size, and so the device total, is unknown.
TEST(AccessLevelTest, ShellOnAUserBuildKeepsMediaTeksGpuFigures) {
  const json mtk = Accounted("mtk-mt6989", kShellUserBuild);
  const json expected = Expected("mtk-mt6989");
  ExpectDevice(mtk, expected, {"gcma_kb", "static_reserved_kb", "total_kb"}, {{"processes_kb", 0}});
  EXPECT_TRUE(AnyWarningHas(mtk, "processes with unknown total_kb left out of processes_kb")) << mtk["warnings"];
  ExpectProcesses(mtk, expected,
                  {"pss_kb", "swap_pss_kb", "gfxdev_kb", "dma_kb", "non_graphics_kb", "graphics_dma_kb", "total_kb"},
                  /*heap_dumps_missing=*/true);
}

// A vendor whose policy also denies MediaTek's GPU node to shell: no process's GPU memory, so no
// processes_kb or device total at all.
TEST(AccessLevelTest, AVendorDenyingTheGpuNodeLeavesNoDeviceTotal) {
  Access access = kShellUserBuild;
  access.mtk_gpu_memory_denied = true;
  const json mtk = Accounted("mtk-mt6989", access);
  ExpectDevice(mtk, Expected("mtk-mt6989"), {"gcma_kb", "static_reserved_kb", "processes_kb", "total_kb"});
  ExpectProcesses(
      mtk, Expected("mtk-mt6989"),
      {"pss_kb", "swap_pss_kb", "gfxdev_kb", "gl_kb", "dma_kb", "non_graphics_kb", "graphics_dma_kb", "total_kb"},
      /*heap_dumps_missing=*/true);
  EXPECT_TRUE(AnyWarningHas(mtk, "proc/mtk_mali/gpu_memory: unreadable (EACCES)")) << mtk["warnings"];
}

}  // namespace
}  // namespace memfleet::accounting
