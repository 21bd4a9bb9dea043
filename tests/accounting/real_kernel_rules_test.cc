// Three rules real kernels need (docs/accounting.md, gfxdev_kb and dma_kb), each on the real text of a
// real phone (tests/data/nodes/real/SOURCES.md) or on a sample capture renamed the way the kernel names it.
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_replace.h"
#include "accounting/account.h"
#include "report/report_json.h"
#include "tests/support/load_tree.h"
#include "tests/support/test_paths.h"

namespace memfleet::accounting {
namespace {

using testing::LoadTreeInto;
using testing::ReadFileForTest;
using testing::TestData;

bool HasWarningWith(const Report& r, const std::string& part) {
  for (const std::string& w : r.warnings) {
    if (w.find(part) != std::string::npos) return true;
  }
  return false;
}

// A generic device with one ordinary process (pid 100, 1000 kB of native heap) and pid 200 whose smaps
// is `smaps_200` after a small native heap (200 kB).
Capture DeviceWith(const std::string& smaps_200) {
  Capture c;
  c.AddFile("capture.json", R"({"format":1,"captured_at":"2026-11-30T08:00:00Z","device_id":"t","page_size":4096})");
  c.AddFile("proc/meminfo", "MemTotal: 3000000 kB\nMemFree: 100000 kB\n");
  for (int pid : {100, 200}) {
    const std::string dir = "proc/" + std::to_string(pid);
    const int pss = pid == 100 ? 1000 : 200;
    c.AddFile(dir + "/cmdline", "app" + std::to_string(pid));
    c.AddFile(dir + "/oom_score_adj", "0\n");
    c.AddFile(dir + "/smaps", "12c00000-12c01000 rw-p 00000000 00:00 0  [anon:libc_malloc]\nPss: " +
                                  std::to_string(pss) + " kB\n" + (pid == 200 ? smaps_200 : ""));
  }
  return c;
}

// A Pixel 3 on Android 12 (kernel 4.9 with the dma-buf naming backport) names its dma-buf mappings
// "/dmabuf (deleted)". With neither sysfs nor fdinfo the buffer's size is its mapping's length:
// 0x787c00b000 - 0x787bffd000 = 0xe000 bytes = 56 kB, held by pid 200 alone.
TEST(RealKernelRulesTest, DmabufDeletedMappingOfAPixel3IsADmaBuf) {
  const std::string smaps = ReadFileForTest(TestData("nodes/real/smaps_pixel3_a12_dmabuf_deleted.txt"));
  ASSERT_NE(smaps.find("/dmabuf (deleted)"), std::string::npos);
  Report r = Account(DeviceWith(smaps));
  EXPECT_EQ(r.processes.at(200).dma_kb, 56);  // 0 before: the mapping was not taken for a dma-buf
  EXPECT_EQ(r.processes.at(200).total_kb, 200 + 56);
  EXPECT_EQ(r.processes.at(100).dma_kb, 0);
  ASSERT_TRUE(r.processes.at(200).dma_by_exporter_kb.has_value());
  EXPECT_EQ(r.processes.at(200).dma_by_exporter_kb->at("unknown"), 56);  // no fdinfo, no sysfs: no exporter
}

// A Snapdragon 765G phone on Android 10 names legacy dma-buf mappings with an index after
// anon_inode:dmabuf ("anon_inode:dmabuf332", "anon_inode:dmabuf330"), all on the one anonymous inode
// 11957: they name no buffer, so dma_kb is null (not 0) with a warning of their number and length,
// 2 x 0x1d000 bytes = 2 x 116 kB = 232 kB.
TEST(RealKernelRulesTest, IndexedAnonInodeDmabufOfASnapdragon765GMakesDmaNull) {
  const std::string smaps = ReadFileForTest(TestData("nodes/real/smaps_sd765g_anon_inode_dmabuf_indexed.txt"));
  ASSERT_NE(smaps.find("anon_inode:dmabuf332"), std::string::npos);
  Report r = Account(DeviceWith(smaps));
  EXPECT_FALSE(r.processes.at(200).dma_kb.has_value());
  EXPECT_FALSE(r.processes.at(200).total_kb.has_value());
  EXPECT_EQ(r.processes.at(200).non_graphics_kb, 200);
  EXPECT_FALSE(r.processes.at(200).dma_by_exporter_kb.has_value());
  // The mappings are "other mmap" in the heaps, as dumpsys files them.
  ASSERT_TRUE(r.processes.at(200).heaps.has_value());
  EXPECT_EQ(r.processes.at(200).heaps->count("other_mmap"), 0u);  // Pss 0, nothing private: no entry
  EXPECT_EQ(r.processes.at(100).dma_kb, 0);
  EXPECT_TRUE(HasWarningWith(r, "proc/200/smaps: 2 anon_inode:dmabuf mappings (232 kB")) << r.warnings.size();
}

// Qualcomm 6.x kernels map KGSL memory from a shmem file named "/kgsl-3d0". The qcom-edge sample with
// every "/dev/kgsl-3d0" mapping renamed that way must give the same report as the sample itself
// (expected.json, the spec's values): the mapped KGSL memory stays out of non_graphics_kb, since gl_kb
// already counts it. Missing the name, its Pss would be counted twice (+ gfxdev_kb on those processes).
TEST(RealKernelRulesTest, KgslShmemFileNamedKgsl3d0IsGfxdev) {
  const std::string dir = TestData("captures/qcom-edge");
  Capture original;
  LoadTreeInto(original, dir + "/tree");
  Capture renamed;
  int renamed_files = 0;
  for (const auto& [path, n] : original.nodes()) {
    if (n.is_directory()) {
      renamed.AddDirectory(path);
    } else if (n.is_error()) {
      renamed.AddError(path, n.content);
    } else {
      std::string text = absl::StrReplaceAll(n.content, {{"/dev/kgsl-3d0", "/kgsl-3d0"}});
      renamed_files += text != n.content;
      renamed.AddFile(path, std::move(text));
    }
  }
  ASSERT_GE(renamed_files, 2);  // pids 17765 and 21216 map /dev/kgsl-3d0
  absl::StatusOr<Report> want = report::ReportFromJson(ReadFileForTest(dir + "/expected.json"));
  ASSERT_TRUE(want.ok()) << want.status();
  Report got = Account(renamed);
  EXPECT_EQ(got.device.total_kb, want->device.total_kb);
  for (int pid : {17765, 21216}) {
    SCOPED_TRACE(pid);
    ASSERT_GT(want->processes.at(pid).gfxdev_kb.value_or(0), 0);
    EXPECT_EQ(got.processes.at(pid).gfxdev_kb, want->processes.at(pid).gfxdev_kb);
    EXPECT_EQ(got.processes.at(pid).non_graphics_kb, want->processes.at(pid).non_graphics_kb);
    EXPECT_EQ(got.processes.at(pid).total_kb, want->processes.at(pid).total_kb);
    ASSERT_TRUE(got.processes.at(pid).heaps.has_value());
    EXPECT_EQ(got.processes.at(pid).heaps, Account(original).processes.at(pid).heaps);  // gfx_dev either way
  }
}

}  // namespace
}  // namespace memfleet::accounting
