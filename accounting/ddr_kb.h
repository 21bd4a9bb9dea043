// device.ddr_kb (docs/accounting.md section 3): the phone's physical DDR size — capture.json's
// ddr_size_kb when given, else estimated as the smallest standard size at least MemTotal + GCMA, which
// is what the kernel sees of it. The standard sizes are phones': a capture that shows no Android device
// (android_device.h: a Linux host) gets no estimate, null with a warning. An implausible header size is
// null, never replaced by an estimate.
//
//   DdrFigure ddr = DdrKb(header, /*mem_total_kb=*/11'000'000, /*gcma_kb=*/0, android);  // 12 GiB, estimated
#ifndef MEMFLEET_ACCOUNTING_DDR_KB_H_
#define MEMFLEET_ACCOUNTING_DDR_KB_H_

#include <optional>
#include <string>

#include "accounting/android_device.h"
#include "accounting/model.h"

namespace memfleet::accounting {

struct DdrFigure {
  Kb ddr_kb;
  bool estimated = false;
  std::string source;
  std::optional<std::string> warning;  // why ddr_kb is null
};

DdrFigure DdrKb(const CaptureHeader& header, Kb mem_total_kb, Kb gcma_kb, const AndroidEvidence& android);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_DDR_KB_H_
