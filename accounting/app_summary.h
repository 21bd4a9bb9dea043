// app_summary (docs/accounting.md, "Heaps and the App Summary"): dumpsys' App Summary of one process —
// Java heap, native heap, code, stack, graphics, private other, system, TOTAL PSS — computed from its
// heaps by the formulas of Android's Debug.MemoryInfo, without the vendor's memtrack rows (memfleet's
// gl_kb and dma_kb stand beside it instead).
//
//   report::AppSummary s = AppSummaryOf(*process.heaps);   // s.native_heap_kb, s.total_pss_kb, ...
//
// Pure.
#ifndef MEMFLEET_ACCOUNTING_APP_SUMMARY_H_
#define MEMFLEET_ACCOUNTING_APP_SUMMARY_H_

#include <optional>

#include "accounting/model.h"

namespace memfleet::accounting {

// nullopt when a sum does not fit 64 bits (only a corrupt smaps gets there).
std::optional<report::AppSummary> AppSummaryOf(const report::Heaps& heaps);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_APP_SUMMARY_H_
