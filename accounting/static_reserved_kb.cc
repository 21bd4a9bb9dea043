#include "accounting/static_reserved_kb.h"

#include "absl/strings/str_cat.h"
#include "accounting/kb_math.h"

namespace memfleet::accounting {

StaticReservedFigure StaticReservedKb(Kb ddr_kb, Kb mem_total_kb, Kb gcma_kb) {
  StaticReservedFigure figure;
  figure.static_reserved_kb = SubKb(SubKb(ddr_kb, mem_total_kb), gcma_kb);
  if (figure.static_reserved_kb && *figure.static_reserved_kb < 0) {
    figure.warning =
        absl::StrCat("static_reserved_kb: DDR size ", *ddr_kb, " kB is below MemTotal + GCMA: the DDR size is wrong");
    figure.static_reserved_kb = std::nullopt;
  }
  return figure;
}

}  // namespace memfleet::accounting
