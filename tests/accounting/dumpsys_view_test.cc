// The dumpsys-compatible summary against the worked example of docs/node-formats.md section 10.5: meminfo
// from AOSP's SysMemInfo.TestSysMemInfoFile fixture, zram 30504 (testdata1/mm_stat), and the example's
// hypothetical PSS/memtrack/dmabuf/GPU inputs. Every expected number is the reference's own.
#include "accounting/dumpsys_view.h"

#include <gtest/gtest.h>

#include "accounting/meminfo_parser.h"
#include "tests/support/load_tree.h"

namespace memfleet::accounting {
namespace {

class DumpsysViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<Meminfo> m = ParseMeminfo(testing::ReadFileForTest(testing::TestData(
        "aosp/system/memory/libmeminfo/_inline/libmeminfo_test/SysMemInfo.TestSysMemInfoFile/meminfo")));
    ASSERT_TRUE(m.ok()) << m.status();
    meminfo_ = *m;
    in_.meminfo = &meminfo_;
    in_.vmap_stack = true;
    in_.total_pss_kb = 190000;
    in_.total_swap_pss_kb = 10000;
    in_.cached_pss_kb = 40000;
    in_.memtrack_graphics_kb = 20000;
    in_.memtrack_gl_kb = 10000;
    in_.dmabuf_total_exported_kb = 30000;
    in_.dmabuf_mapped_kb = 12000;
    in_.gpu_private_kb = 8000;
    in_.zram_kb = 30504;
  }
  Meminfo meminfo_;
  DumpsysInputs in_;
};

TEST_F(DumpsysViewTest, WorkedExampleAndroid14) {
  DumpsysView v = ComputeDumpsysSummary(in_);
  EXPECT_EQ(v.cached_kernel_kb, 855488);  // 54736 + 87324 + 776052 - 62624
  EXPECT_EQ(v.kernel_used_kb, 140488);    // 114488 + 18000 unmapped dma-buf + 8000 GPU private
  EXPECT_EQ(v.dmabuf_unmapped_kb, 18000);
  EXPECT_EQ(v.free_ram_kb, 2705216);
  EXPECT_EQ(v.used_ram_kb, 272488);
  EXPECT_EQ(v.used_pss_kb, 132000);  // adjusted TOTAL_PSS 172000 - cached 40000
  EXPECT_EQ(v.lost_ram_kb, 21532);
  EXPECT_EQ(v.total_ram_kb, 3019740);
  ASSERT_TRUE(v.identity_holds.has_value());
  EXPECT_TRUE(*v.identity_holds);  // 2705216 + 272488 + 21532 + 30504 - 10000 = 3019740
}

TEST_F(DumpsysViewTest, KernelStackCountsWithoutVmapStack) {
  in_.vmap_stack = false;
  DumpsysView v = ComputeDumpsysSummary(in_);
  // kernelUsed base 119368 when CONFIG_VMAP_STACK is unset (reference 5.3), + 18000 + 8000.
  EXPECT_EQ(v.kernel_used_kb, 119368 + 18000 + 8000);
  EXPECT_TRUE(v.identity_holds.value_or(false));
}

TEST_F(DumpsysViewTest, NoGpuPrivateSkipsTheGpuBranch) {
  in_.gpu_private_kb = std::nullopt;
  DumpsysView v = ComputeDumpsysSummary(in_);
  // TOTAL_PSS is not reduced by GL mtrack and kernelUsed gets no GPU private.
  EXPECT_EQ(v.kernel_used_kb, 114488 + 18000);
  EXPECT_EQ(v.used_ram_kb, (190000 - 20000 + 12000) - 40000 + 114488 + 18000);
  EXPECT_FALSE(v.gpu_private_kb.has_value());
  EXPECT_TRUE(v.identity_holds.value_or(false));
}

TEST_F(DumpsysViewTest, NoDmabufSysfsSkipsTheDmabufBranch) {
  in_.dmabuf_total_exported_kb = std::nullopt;
  DumpsysView v = ComputeDumpsysSummary(in_);
  EXPECT_EQ(v.kernel_used_kb, 114488 + 8000);
  EXPECT_FALSE(v.dmabuf_total_kb.has_value());
  // TOTAL_PSS keeps memtrack graphics: 190000 - 10000 GL.
  EXPECT_EQ(v.used_pss_kb, 190000 - 10000 - 40000);
}

TEST_F(DumpsysViewTest, Android16DeltasAreASwitchNotABlend) {
  in_.android_version = 16;
  in_.kernel_cma_kb = 5000;
  DumpsysView v = ComputeDumpsysSummary(in_);
  // Kernel CMA joins kernelUsed (the fixture has no SecPageTables/Percpu lines: 0), SwapCached (0 here)
  // joins cached, and Lost RAM gets + Shmem (4020).
  EXPECT_EQ(v.kernel_used_kb, 140488 + 5000);
  EXPECT_EQ(v.kernel_cma_kb, 5000);
  EXPECT_EQ(v.cached_kernel_kb, 855488);
  EXPECT_EQ(v.lost_ram_kb, 21532 - 5000 + 4020);
  EXPECT_TRUE(v.identity_holds.value_or(false));
  // The same inputs on Android 14 ignore the CMA figure entirely.
  in_.android_version = 14;
  EXPECT_EQ(ComputeDumpsysSummary(in_).kernel_used_kb, 140488);
}

TEST_F(DumpsysViewTest, IonKernelsUseIonHeaps) {
  in_.ion_heaps_kb = 98480;  // AOSP SysMemInfo.TestReadIonHeapsSizeKb
  in_.ion_pools_kb = 416;    // AOSP SysMemInfo.TestReadIonPoolsSizeKb
  DumpsysView v = ComputeDumpsysSummary(in_);
  EXPECT_EQ(v.dmabuf_unmapped_kb, 98480 - 12000);
  EXPECT_EQ(v.kernel_used_kb, 114488 + (98480 - 12000) + 8000);
}

TEST_F(DumpsysViewTest, NoMeminfoGivesNullsNotZeros) {
  in_.meminfo = nullptr;
  DumpsysView v = ComputeDumpsysSummary(in_);
  EXPECT_FALSE(v.total_ram_kb.has_value());
  EXPECT_FALSE(v.used_ram_kb.has_value());
  EXPECT_FALSE(v.lost_ram_kb.has_value());
  EXPECT_FALSE(v.identity_holds.has_value());
}

}  // namespace
}  // namespace memfleet::accounting
