// app_summary (docs/accounting.md, "Heaps and the App Summary"): dumpsys' App Summary from the heaps, by
// the formulas of Android's Debug.MemoryInfo without memtrack; the arithmetic is in the comments.
#include "accounting/app_summary.h"

#include <gtest/gtest.h>

namespace memfleet::accounting {
namespace {

using report::HeapFigures;

TEST(AppSummaryTest, FormulasOnEveryKindOfHeap) {
  report::Heaps heaps = {
      // {pss, swap_pss, private_clean, private_dirty}
      {"dalvik", HeapFigures{1000, 100, 50, 900}},
      {"art", HeapFigures{300, 0, 20, 200}},
      {"native", HeapFigures{5000, 500, 10, 4800}},
      {"stack", HeapFigures{40, 0, 0, 40}},
      {"so", HeapFigures{2000, 0, 600, 100}},
      {"dex", HeapFigures{800, 0, 700, 0}},
      {"gfx_dev", HeapFigures{900, 0, 30, 870}},
      {"dalvik_other", HeapFigures{400, 10, 0, 300}},
      {"jit_app_code_cache", HeapFigures{120, 0, 0, 100}},  // inside dalvik_other's 400 / 300
      {"unknown", HeapFigures{60, 0, 0, 60}},
  };
  std::optional<report::AppSummary> s = AppSummaryOf(heaps);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->java_heap_kb, 900 + (20 + 200));    // dalvik private dirty + art private
  EXPECT_EQ(s->native_heap_kb, 4800);              // native private dirty
  EXPECT_EQ(s->code_kb, (600 + 100) + 700 + 100);  // so + dex + the app code cache, private
  EXPECT_EQ(s->stack_kb, 40);
  EXPECT_EQ(s->graphics_kb, 30 + 870);  // gfx_dev private; no memtrack rows
  // Total private over the heaps (the code-cache key is not a heap): 950 + 220 + 4810 + 40 + 700 + 700
  // + 900 + 300 + 60 = 8680.
  EXPECT_EQ(s->private_other_kb, 8680 - 1120 - 4800 - 1500 - 40 - 900);
  // Total PSS: Pss + SwapPss over the heaps = 10500 + 610 = 11110.
  EXPECT_EQ(s->total_pss_kb, 11110);
  EXPECT_EQ(s->total_swap_pss_kb, 610);
  EXPECT_EQ(s->system_kb, 11110 - 8680);
}

TEST(AppSummaryTest, NoHeapsIsAllZero) {
  std::optional<report::AppSummary> s = AppSummaryOf({});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(*s, report::AppSummary{});
}

TEST(AppSummaryTest, ASumBeyond64BitsIsNull) {
  report::Heaps heaps = {{"native", HeapFigures{INT64_MAX, 1, 0, 0}}};
  EXPECT_FALSE(AppSummaryOf(heaps).has_value());
}

}  // namespace
}  // namespace memfleet::accounting
