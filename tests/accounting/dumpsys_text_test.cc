#include "accounting/dumpsys_text.h"

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/support/test_data.h"

namespace memfleet::accounting {
namespace {

using memfleet::testing::ReadTestData;

// The worked example of docs/node-formats.md section 10.5, rendered in the Android 14 text layout.
TEST(DumpsysTextTest, WorkedExampleSummary) {
  absl::StatusOr<DumpsysSummary> s = ParseDumpsysMeminfo(ReadTestData("dumpsys/meminfo_summary_a14.txt"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->total_ram_kb, 3019740);
  EXPECT_EQ(s->free_ram_kb, 2705216);
  EXPECT_EQ(s->free_cached_pss_kb, 40000);
  EXPECT_EQ(s->free_cached_kernel_kb, 855488);  // 54736 + 87324 + 776052 - 62624
  EXPECT_EQ(s->free_free_kb, 1809728);
  EXPECT_EQ(s->dmabuf_total_kb, 30000);  // not the "DMA-BUF Heaps:" line that follows
  EXPECT_EQ(s->dmabuf_mapped_kb, 12000);
  EXPECT_EQ(s->dmabuf_unmapped_kb, 18000);
  EXPECT_EQ(s->gpu_total_kb, 25000);
  EXPECT_EQ(s->gpu_private_kb, 8000);
  EXPECT_EQ(s->used_ram_kb, 272488);
  EXPECT_EQ(s->used_pss_kb, 132000);     // adjusted TOTAL_PSS 172000 - cachedPss 40000
  EXPECT_EQ(s->used_kernel_kb, 140488);  // 114488 + 18000 + 8000
  EXPECT_EQ(s->lost_ram_kb, 21532);
  EXPECT_EQ(s->zram_physical_kb, 30504);
  EXPECT_EQ(s->zram_swap_used_kb, 32768 - 4096);
  EXPECT_EQ(s->zram_swap_total_kb, 32768);
  EXPECT_FALSE(s->ion_total_kb.has_value());
  EXPECT_FALSE(s->kernel_cma_kb.has_value());
  // The identity of 5.3: MemTotal = Free + Used + Lost + ZRAM - TOTAL_SWAP_PSS (10000).
  EXPECT_EQ(*s->free_ram_kb + *s->used_ram_kb + *s->lost_ram_kb + *s->zram_physical_kb - 10000, *s->total_ram_kb);
}

TEST(DumpsysTextTest, IonAndKernelCmaAndNegativeLostRam) {
  // Legacy ION kernels and the Android 16 Kernel CMA line; "%,9dK" of a negative number.
  const std::string text =
      "Total RAM: 8,092,276K (status normal)\n"
      " Free RAM: 2,063,497K (  397,169K cached pss +   649,736K cached kernel + 1,016,592K free)\n"
      "      ION:    50,628K (   28,880K mapped +         0K unmapped +    21,748K pools)\n"
      "      Kernel CMA:     4,096K\n"
      " Used RAM:   854,710K (  668,598K used pss +   186,112K kernel)\n"
      " Lost RAM:  -979,823K\n"
      "     ZRAM:         4K physical used for         0K in swap (2,275,948K total swap)\n";
  absl::StatusOr<DumpsysSummary> s = ParseDumpsysMeminfo(text);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->total_ram_kb, 8092276);
  EXPECT_EQ(s->ion_total_kb, 50628);
  EXPECT_EQ(s->ion_mapped_kb, 28880);
  EXPECT_EQ(s->ion_unmapped_kb, 0);
  EXPECT_EQ(s->ion_pools_kb, 21748);
  EXPECT_FALSE(s->dmabuf_total_kb.has_value());
  EXPECT_EQ(s->kernel_cma_kb, 4096);
  EXPECT_EQ(s->lost_ram_kb, -979823);
  EXPECT_EQ(s->zram_physical_kb, 4);
  EXPECT_EQ(s->zram_swap_used_kb, 0);
  EXPECT_EQ(s->zram_swap_total_kb, 2275948);
  EXPECT_EQ(s->free_free_kb, 1016592);
}

TEST(DumpsysTextTest, OemExtraPartsAndOldKbFormat) {
  // An OEM "cached ion" part is kept apart; pre-stringifyKBSize builds print "%d kB" and bare parts.
  absl::StatusOr<DumpsysSummary> s = ParseDumpsysMeminfo(
      "Total RAM: 2857032 kB (status moderate)\n"
      "Free RAM: 3,711,324K (  692,588K cached pss + 2,428,616K cached kernel +   117,492K cached "
      "ion +"
      "   472,628K free)\n"
      " Used RAM: 1280552 kB (970140 used pss + 310412 kernel)\n"
      "     ZRAM: 4 kB physical used for 0 kB in swap (524284 kB total swap)\n");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->total_ram_kb, 2857032);
  EXPECT_EQ(s->free_ram_kb, 3711324);
  EXPECT_EQ(s->free_cached_pss_kb, 692588);
  EXPECT_EQ(s->free_cached_kernel_kb, 2428616);
  EXPECT_EQ(s->free_free_kb, 472628);
  EXPECT_EQ(s->free_cached_ion_kb, 117492);
  EXPECT_EQ(s->used_ram_kb, 1280552);
  EXPECT_EQ(s->used_pss_kb, 970140);
  EXPECT_EQ(s->used_kernel_kb, 310412);
  EXPECT_EQ(s->zram_swap_total_kb, 524284);
}

// ---- Real device texts (tests/data/nodes/real, sources in SOURCES.md there) ----

// Amlogic Google TV, Android 11-era: ION with a negative unmapped part, and a GPU line.
TEST(DumpsysTextTest, RealAmlogicIonLine) {
  absl::StatusOr<DumpsysSummary> s = ParseDumpsysMeminfo(ReadTestData("nodes/real/dumpsys_amlogic_gtv_summary.txt"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->total_ram_kb, 2036984);
  EXPECT_EQ(s->ion_total_kb, 57896);
  EXPECT_EQ(s->ion_mapped_kb, 57932);
  EXPECT_EQ(s->ion_unmapped_kb, -36);
  EXPECT_EQ(s->ion_pools_kb, 0);
  EXPECT_EQ(s->gpu_total_kb, 53544);
  EXPECT_EQ(s->gpu_private_kb, 1268);
  EXPECT_EQ(s->used_kernel_kb, 271236);
  EXPECT_EQ(s->lost_ram_kb, 111523);
  EXPECT_EQ(s->zram_physical_kb, 70036);
}

// MIUI: "+ 34,616K cached ion +" inside Free RAM, and a negative Lost RAM.
TEST(DumpsysTextTest, RealXiaomiCachedIonTerm) {
  absl::StatusOr<DumpsysSummary> s =
      ParseDumpsysMeminfo(ReadTestData("nodes/real/dumpsys_xiaomi_cached_ion_negative_lost.txt"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->free_ram_kb, 3141292);
  EXPECT_EQ(s->free_cached_pss_kb, 1041888);
  EXPECT_EQ(s->free_cached_kernel_kb, 1975308);
  EXPECT_EQ(s->free_cached_ion_kb, 34616);
  EXPECT_EQ(s->free_free_kb, 89480);
  // The parts add up to the total only with the OEM term.
  EXPECT_EQ(*s->free_cached_pss_kb + *s->free_cached_kernel_kb + *s->free_cached_ion_kb + *s->free_free_kb,
            *s->free_ram_kb);
  EXPECT_EQ(s->lost_ram_kb, -177955);
  EXPECT_EQ(s->zram_swap_total_kb, 2621436);
}

// Android 13: DMA-BUF with its Heaps and Heaps pool lines (which are not DMA-BUF: lines).
TEST(DumpsysTextTest, RealAndroid13DmaBufHeaps) {
  absl::StatusOr<DumpsysSummary> s = ParseDumpsysMeminfo(ReadTestData("nodes/real/dumpsys_a13_dmabuf_heaps.txt"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->dmabuf_total_kb, 455268);
  EXPECT_EQ(s->dmabuf_mapped_kb, 0);
  EXPECT_EQ(s->dmabuf_unmapped_kb, 455268);
  EXPECT_EQ(s->lost_ram_kb, -479062);
  EXPECT_EQ(s->used_pss_kb, 1393609);
}

// Android 4.4: "%d kB" and bare parts of another vocabulary ("cached", "buffers", "shmem", "slab").
TEST(DumpsysTextTest, RealAndroid44KbForm) {
  absl::StatusOr<DumpsysSummary> s = ParseDumpsysMeminfo(ReadTestData("nodes/real/dumpsys_android44_kB.txt"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->total_ram_kb, 2004576);
  EXPECT_EQ(s->free_ram_kb, 962859);
  EXPECT_EQ(s->free_cached_pss_kb, 28123);
  EXPECT_EQ(s->free_free_kb, 783312);
  EXPECT_FALSE(s->free_cached_kernel_kb.has_value());
  EXPECT_EQ(s->used_ram_kb, 832478);
  EXPECT_EQ(s->used_pss_kb, 791862);
}

TEST(DumpsysTextTest, NoSummaryIsInvalid) {
  EXPECT_EQ(ParseDumpsysMeminfo("").status().code(), absl::StatusCode::kInvalidArgument);
  // The per-app form has "TOTAL PSS:" but no device summary.
  EXPECT_EQ(ParseDumpsysMeminfo("Applications Memory Usage (in Kilobytes):\n"
                                "** MEMINFO in pid 1234 [com.foo] **\n"
                                "           TOTAL PSS:    12,345            TOTAL RSS:    45,678\n")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseDumpsysMeminfo(std::string("\x00\x01\xfe", 3)).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DumpsysTextTest, BadNumbersNameTheLine) {
  for (const char* line :
       {" Used RAM: 272,48xK (132,000K used pss + 140,488K kernel)",
        " Used RAM: 272,488K (132,000K used pss + 140,488K ker",  // cut
        " Lost RAM: ,21,532K", " Lost RAM: 21,,532K", " Lost RAM: 21532", " Lost RAM: 99,999,999,999,999,999,999K",
        "     ZRAM:    30,504K physical used for    28,672K in swap (", "Total RAM: K"}) {
    SCOPED_TRACE(line);
    absl::StatusOr<DumpsysSummary> s =
        ParseDumpsysMeminfo(std::string("Total RAM: 3,019,740K (status normal)\n") + line + "\n");
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(s.status().message()).find("line 2"), std::string::npos) << s.status();
  }
}

TEST(DumpsysTextTest, Int64Extremes) {
  absl::StatusOr<DumpsysSummary> s =
      ParseDumpsysMeminfo(" Lost RAM: -9,223,372,036,854,775,808K\nTotal RAM: 9,223,372,036,854,775,807K\n");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->lost_ram_kb, INT64_MIN);
  EXPECT_EQ(s->total_ram_kb, INT64_MAX);
  EXPECT_EQ(ParseDumpsysMeminfo("Total RAM: 9,223,372,036,854,775,808K\n").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace memfleet::accounting
