// What every view says when figures of the two tiers (docs/accounting.md section 9) meet: a group of
// devices whose figures mix them (`memfleet fleet`, the dashboard's per-model summary), a group with
// devices of unknown tier beside known ones (stored before the server kept tiers), and a device's
// history that crosses a change of tier (`memfleet trend`, the dashboard's device page). One wording, so
// the CLI and the dashboard say it alike:
//
//   TierCounts counts;
//   for (const std::string& tier : {"kernel", "dumpsys", ""}) counts.Add(tier);
//   MixedTiersSentence("Pixel 8", counts);   // "Pixel 8 mixes tiers (kernel 1, dumpsys 1, unknown 1): ..."
//   TierChangeText("dumpsys", "kernel");      // "tier dumpsys -> kernel: figures before and after ..."
//
// The text is not escaped: the caller escapes it for its medium (HTML, a terminal). Pure; thread-safe.
#ifndef MEMFLEET_REPORT_TIER_MIX_H_
#define MEMFLEET_REPORT_TIER_MIX_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace memfleet::report {

// A group's devices by the tier of their figures.
struct TierCounts {
  uint64_t kernel = 0;
  uint64_t dumpsys = 0;
  uint64_t unknown = 0;  // stored before the server kept tiers ("" or any name not a tier's)

  // One device of `tier` as stored: "kernel", "dumpsys", "" (unknown).
  void Add(absl::string_view tier, uint64_t devices = 1);
  // Both known tiers: two populations whose figures do not compare.
  bool Mixed() const { return kernel > 0 && dumpsys > 0; }
  // One known tier and devices of unknown tier beside it: they may be of the other.
  bool PartlyUnknown() const { return !Mixed() && unknown > 0 && kernel + dumpsys > 0; }
};

// "GROUP mixes tiers (kernel 2, dumpsys 1[, unknown 1]): its figures do not compare"; "" when not Mixed().
std::string MixedTiersSentence(absl::string_view group, const TierCounts& counts);

// "GROUP has 2 devices of unknown tier (stored before tiers): their figures may not compare" ("1 device",
// "its figures"); "" when not PartlyUnknown().
std::string UnknownTiersSentence(absl::string_view group, const TierCounts& counts);

// "tier dumpsys -> kernel: figures before and after do not compare": the mark of a history's point
// whose tier is not that of the points before it.
std::string TierChangeText(absl::string_view from, absl::string_view to);

}  // namespace memfleet::report

#endif  // MEMFLEET_REPORT_TIER_MIX_H_
