// device.static_reserved_kb (docs/accounting.md section 3): memory the kernel never manages — firmware,
// modem, carve-outs — as ddr_kb − MemTotal − GCMA. Negative means the DDR size is wrong: null with a
// warning, not a negative figure in a total.
#ifndef MEMFLEET_ACCOUNTING_STATIC_RESERVED_KB_H_
#define MEMFLEET_ACCOUNTING_STATIC_RESERVED_KB_H_

#include <optional>
#include <string>

#include "accounting/model.h"

namespace memfleet::accounting {

struct StaticReservedFigure {
  Kb static_reserved_kb;
  std::optional<std::string> warning;  // why it is null although its inputs are known
};

StaticReservedFigure StaticReservedKb(Kb ddr_kb, Kb mem_total_kb, Kb gcma_kb);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_STATIC_RESERVED_KB_H_
