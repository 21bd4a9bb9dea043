// heaps (docs/accounting.md, "Heaps and the App Summary"): each mapping to one heap by its name, in
// dumpsys' order, and the sums AOSP's own tests assert on its smaps fixtures.
#include "accounting/heaps.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "accounting/app_summary.h"
#include "accounting/smaps_parser.h"
#include "tests/support/load_tree.h"
#include "tests/support/test_paths.h"

namespace memfleet::accounting {
namespace {

std::string Libmeminfo(std::string_view relative) {
  return testing::ReadFileForTest(testing::TestData("aosp/system/memory/libmeminfo/" + std::string(relative)));
}

Heap HeapOf(std::string_view name) { return HeapOfMapping(name, /*follows_library=*/false).heap; }

TEST(HeapOfMappingTest, EachRowOfTheTable) {
  EXPECT_EQ(HeapOf("[heap]"), Heap::kNative);
  EXPECT_EQ(HeapOf("[anon:libc_malloc]"), Heap::kNative);
  EXPECT_EQ(HeapOf("[anon:scudo:primary]"), Heap::kNative);
  EXPECT_EQ(HeapOf("[anon:GWP-ASan Guard Page]"), Heap::kNative);
  EXPECT_EQ(HeapOf("[stack]"), Heap::kStack);
  EXPECT_EQ(HeapOf("[anon:stack_and_tls:1234]"), Heap::kStack);
  EXPECT_EQ(HeapOf("/system/lib64/libc.so"), Heap::kSo);
  EXPECT_EQ(HeapOf("/system/framework/framework.jar"), Heap::kJar);
  EXPECT_EQ(HeapOf("/data/app/x/base.apk"), Heap::kApk);
  EXPECT_EQ(HeapOf("/system/fonts/Roboto.ttf"), Heap::kTtf);
  EXPECT_EQ(HeapOf("/data/app/x/oat/arm64/base.odex"), Heap::kDex);
  EXPECT_EQ(HeapOf("/data/app/x/oat/arm64/base.vdex"), Heap::kDex);
  EXPECT_EQ(HeapOf("/data/dalvik-cache/arm64/system@framework@boot.dex"), Heap::kDex);
  EXPECT_EQ(HeapOf("/system/framework/arm64/boot.oat"), Heap::kOat);
  EXPECT_EQ(HeapOf("/system/framework/arm64/boot.art"), Heap::kArt);
  EXPECT_EQ(HeapOf("[anon:dalvik-/system/framework/boot.art]"), Heap::kArt);
  EXPECT_EQ(HeapOf("/dev/kgsl-3d0"), Heap::kGfxDev);
  EXPECT_EQ(HeapOf("/kgsl-3d0"), Heap::kGfxDev);
  EXPECT_EQ(HeapOf("/dev/ashmem/CursorWindow: x (deleted)"), Heap::kCursor);
  EXPECT_EQ(HeapOf("/dev/ashmem/some region (deleted)"), Heap::kAshmem);
  EXPECT_EQ(HeapOf("/dev/mali0"), Heap::kOtherDev);
  EXPECT_EQ(HeapOf("[anon:dalvik-main space (region space)]"), Heap::kDalvik);
  EXPECT_EQ(HeapOf("[anon:dalvik-large object space allocation]"), Heap::kDalvik);
  EXPECT_EQ(HeapOf("[anon:dalvik-zygote space]"), Heap::kDalvik);
  EXPECT_EQ(HeapOf("[anon:dalvik-non moving space]"), Heap::kDalvik);
  EXPECT_EQ(HeapOf("[anon:dalvik-LinearAlloc]"), Heap::kDalvikOther);
  EXPECT_EQ(HeapOf("[anon:dalvik-indirect ref table]"), Heap::kDalvikOther);
  EXPECT_EQ(HeapOf("[anon:linker_alloc]"), Heap::kUnknown);
  EXPECT_EQ(HeapOf("anon_inode:dmabuf"), Heap::kOtherMmap);
  EXPECT_EQ(HeapOf("/dmabuf:qcom,system"), Heap::kOtherMmap);
  EXPECT_EQ(HeapOf("/data/misc/x.db"), Heap::kOtherMmap);
  EXPECT_EQ(HeapOf("[vsyscall]"), Heap::kOtherMmap);  // a bracketed name that is not [anon:
  EXPECT_EQ(HeapOf(""), Heap::kUnknown);
}

// The code caches go to dalvik_other and to their own key beside it.
TEST(HeapOfMappingTest, CodeCachesAreDalvikOtherWithTheirKey) {
  for (std::string_view app :
       {"/memfd:jit-cache (deleted)", "[anon:dalvik-jit-code-cache]", "[anon:dalvik-data-code-cache]"}) {
    MappingHeap m = HeapOfMapping(app, false);
    EXPECT_EQ(m.heap, Heap::kDalvikOther) << app;
    EXPECT_EQ(m.code_cache, Heap::kJitAppCodeCache) << app;
  }
  for (std::string_view zygote : {"/memfd:jit-zygote-cache (deleted)", "/dev/ashmem/jit-zygote-cache"}) {
    MappingHeap m = HeapOfMapping(zygote, false);
    EXPECT_EQ(m.heap, Heap::kDalvikOther) << zygote;
    EXPECT_EQ(m.code_cache, Heap::kJitZygoteCodeCache) << zygote;
  }
  // [anon:dalvik-zygote-jit-code-cache] is neither prefix: plain dalvik_other (AOSP's smaps_short VMA 0).
  EXPECT_FALSE(HeapOfMapping("[anon:dalvik-zygote-jit-code-cache]", false).code_cache.has_value());
}

// The rules run top to bottom, as AOSP orders them: an extension before kgsl-3d0, /dev/ before [anon:.
TEST(HeapOfMappingTest, FirstRuleThatMatchesWins) {
  EXPECT_EQ(HeapOf("/vendor/lib64/libkgsl-3d0.so"), Heap::kSo);
  EXPECT_EQ(HeapOf("/dev/ashmem/kgsl-3d0"), Heap::kGfxDev);
  EXPECT_EQ(HeapOf("/dev/ashmem/base.apk"), Heap::kApk);
  EXPECT_EQ(HeapOf("[anon:libc_malloc] x.so"), Heap::kNative);
  EXPECT_EQ(HeapOf("/data/x.dexfoo"), Heap::kDex);                  // longer than 4 characters and contains .dex
  EXPECT_EQ(HeapOf(".dex"), Heap::kOtherMmap);                      // 4 characters: not
  EXPECT_EQ(HeapOf("/system/lib64/libc.so (deleted)"), Heap::kSo);  // " (deleted)" is read without
}

// An unnamed mapping right after a library's is its bss.
TEST(HeapTallyTest, UnnamedMappingAfterALibraryIsItsBss) {
  HeapTally t;
  t.Add(0x1000, 0x2000, "/system/lib64/libc.so", 4, 0, 4, 0);
  t.Add(0x2000, 0x3000, "", 8, 0, 0, 8);    // starts where libc.so ended: so
  t.Add(0x4000, 0x5000, "", 16, 0, 0, 16);  // a gap: unknown
  t.Add(0x5000, 0x6000, "", 32, 0, 0, 32);  // after an unknown: unknown
  std::optional<report::Heaps> h = t.Figures();
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->at("so").pss_kb, 4 + 8);
  EXPECT_EQ(h->at("so").private_dirty_kb, 8);
  EXPECT_EQ(h->at("unknown").pss_kb, 16 + 32);
  EXPECT_EQ(h->count("native"), 0u);  // only heaps with a non-zero figure
}

TEST(HeapTallyTest, SumBeyondTheJsonRangeIsNull) {
  HeapTally t;
  t.Add(0, 1, "[heap]", UINT64_MAX, 0, 0, 0);
  t.Add(1, 2, "[heap]", 1, 0, 0, 0);
  EXPECT_TRUE(t.overflowed());
  EXPECT_FALSE(t.Figures().has_value());
  HeapTally big;
  big.Add(0, 1, "[heap]", uint64_t{1} << 63, 0, 0, 0);  // fits 64 bits, not int64
  EXPECT_FALSE(big.Figures().has_value());
}

// AOSP's AndroidProcHeaps.ExtractAndroidHeapStatsFromFileTest asserts, for its one-VMA smaps
// ([anon:dalvik-main space (region space)]): pss 2652, privateDirty 2652, privateClean 84, swappedOutPss 70.
TEST(HeapsOnAospTest, ExtractAndroidHeapStatsFromFileVma) {
  absl::StatusOr<SmapsSummary> s = ParseSmapsSummary(
      Libmeminfo("_inline/libmeminfo_test/AndroidProcHeaps.ExtractAndroidHeapStatsFromFileTest/smaps"),
      GpuDeviceNaming::kNone);
  ASSERT_TRUE(s.ok()) << s.status();
  std::optional<report::Heaps> h = s->heaps.Figures();
  ASSERT_TRUE(h.has_value());
  ASSERT_EQ(h->size(), 1u);
  EXPECT_EQ(h->at("dalvik"), (report::HeapFigures{2652, 70, 84, 2652}));
  std::optional<report::AppSummary> a = AppSummaryOf(*h);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->java_heap_kb, 2652);  // dalvik private dirty + art private (0)
  EXPECT_EQ(a->total_pss_kb, 2722);  // 2652 Pss + 70 SwapPss
  EXPECT_EQ(a->total_swap_pss_kb, 70);
  EXPECT_EQ(a->private_other_kb, 84);  // 84 + 2652 private - 2652 Java heap
  EXPECT_EQ(a->system_kb, -14);        // 2722 - 2736: AOSP's synthetic VMA has more private than Pss
}

// AOSP's libmeminfo benchmarks assert pss 108384 for testdata1/smaps (BM_SmapsRollup CHECK_EQ): the App
// Summary's TOTAL PSS is that sum (no SwapPss there), whichever heap each mapping went to.
TEST(HeapsOnAospTest, Testdata1TotalPssIs108384) {
  for (auto* parse : {&ParseSmapsSummary, &ParseSmapsSummaryGenericPath}) {
    absl::StatusOr<SmapsSummary> s = parse(Libmeminfo("testdata1/smaps"), GpuDeviceNaming::kKgsl);
    ASSERT_TRUE(s.ok()) << s.status();
    std::optional<report::Heaps> h = s->heaps.Figures();
    ASSERT_TRUE(h.has_value());
    std::optional<report::AppSummary> a = AppSummaryOf(*h);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->total_pss_kb, 108384);
    EXPECT_EQ(a->total_swap_pss_kb, 0);
    // Every mapping went to a heap: the heaps' Pss adds up to the file's.
    int64_t pss = 0;
    for (const auto& [name, f] : *h) {
      if (name != "jit_zygote_code_cache" && name != "jit_app_code_cache") pss += f.pss_kb;
    }
    EXPECT_EQ(pss, 108384);
  }
}

}  // namespace
}  // namespace memfleet::accounting
