#include "accounting/ddr_kb.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "accounting/kb_math.h"

namespace memfleet::accounting {
namespace {

constexpr int64_t kGiBInKb = 1048576;
// The DDR sizes phones ship with, in GiB: the estimate rounds up to one of them.
constexpr int64_t kStandardDdrGiB[] = {2, 3, 4, 6, 8, 12, 16, 18, 24, 32, 48, 64};

DdrFigure Estimated(Kb mem_total_kb, Kb gcma_kb) {
  DdrFigure ddr;
  ddr.estimated = true;
  const Kb seen = AddKb(mem_total_kb, gcma_kb);
  if (!seen) {
    ddr.source = "unavailable: MemTotal or GCMA unknown";
    return ddr;
  }
  for (int64_t gib : kStandardDdrGiB) {
    if (gib * kGiBInKb >= *seen) {
      ddr.ddr_kb = gib * kGiBInKb;
      ddr.source = "estimated: smallest standard DDR size >= MemTotal + GCMA";
      return ddr;
    }
  }
  ddr.source = "unavailable: MemTotal + GCMA above 64 GiB";
  ddr.warning = "ddr_kb: MemTotal + GCMA above 64 GiB and no ddr_size_kb in capture.json";
  return ddr;
}

}  // namespace

DdrFigure DdrKb(const CaptureHeader& header, Kb mem_total_kb, Kb gcma_kb, const AndroidEvidence& android) {
  if (header.ddr_size_kb_problem) {
    // The header gave a size, and a wrong one: an estimate would hide that.
    DdrFigure ddr;
    ddr.source = "unavailable: capture.json ddr_size_kb implausible";
    ddr.warning = absl::StrCat(*header.ddr_size_kb_problem, ": ddr_kb null");
    return ddr;
  }
  if (header.ddr_size_kb) {
    DdrFigure ddr;
    ddr.ddr_kb = ToKb(*header.ddr_size_kb);
    ddr.source = "capture.json ddr_size_kb";
    return ddr;
  }
  if (!android.android) {
    // A PC's memory comes in any size, and MemTotal says nothing of its firmware's share: a guess would
    // show a static reserved figure the host does not have.
    DdrFigure ddr;
    ddr.source = "unavailable: no ddr_size_kb in capture.json and not an Android device";
    ddr.warning =
        "ddr_kb: no ddr_size_kb in capture.json, and the capture shows no Android device (no build properties, "
        "no getprop, no system_server): a host's DDR size is not estimated, so static_reserved_kb and total_kb "
        "are null";
    return ddr;
  }
  return Estimated(mem_total_kb, gcma_kb);
}

}  // namespace memfleet::accounting
