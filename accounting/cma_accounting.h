// CMA figures of the device (docs/accounting.md section 3): gcma_kb, GCMA regions' size, which lies outside
// MemTotal, and kernel_cma_kb, the CMA pages drivers hold, from CMA sysfs and debugfs.
//
//   CmaFigures cma = ComputeCma(capture, page_size, report);   // warnings/sources go into report
#ifndef MEMFLEET_ACCOUNTING_CMA_ACCOUNTING_H_
#define MEMFLEET_ACCOUNTING_CMA_ACCOUNTING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "accounting/model.h"

namespace memfleet::accounting {

inline constexpr char kCmaSysfsRoot[] = "sys/kernel/mm/cma";
inline constexpr char kCmaDebugfsRoot[] = "sys/kernel/debug/cma";

struct CmaFigures {
  Kb gcma_kb;
  Kb kernel_cma_kb;
};

// `meminfo_cma_total_kb`: CmaTotal of proc/meminfo, which decides kernel_cma_kb when no region is captured.
CmaFigures ComputeCma(const Capture& capture, uint64_t page_size, std::optional<uint64_t> meminfo_cma_total_kb,
                      Report& report);

// The debugfs folder of a sysfs region: "<region>" (6.1+) or "cma-<region>" cut to 15 characters
// (5.0-6.0), whichever the capture has; "" when neither.
std::string DebugfsDirOfRegion(const Capture& capture, std::string_view region);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_CMA_ACCOUNTING_H_
