#include "report/tier_mix.h"

#include "absl/strings/str_cat.h"
#include "common/figure_tier.h"

namespace memfleet::report {

void TierCounts::Add(absl::string_view tier, uint64_t devices) {
  if (tier == kTierKernel) {
    kernel += devices;
  } else if (tier == kTierDumpsys) {
    dumpsys += devices;
  } else {
    unknown += devices;
  }
}

std::string MixedTiersSentence(absl::string_view group, const TierCounts& counts) {
  if (!counts.Mixed()) return "";
  std::string mix = absl::StrCat(kTierKernel, " ", counts.kernel, ", ", kTierDumpsys, " ", counts.dumpsys);
  if (counts.unknown > 0) absl::StrAppend(&mix, ", unknown ", counts.unknown);
  return absl::StrCat(group, " mixes tiers (", mix, "): its figures do not compare");
}

std::string UnknownTiersSentence(absl::string_view group, const TierCounts& counts) {
  if (!counts.PartlyUnknown()) return "";
  const bool one = counts.unknown == 1;
  return absl::StrCat(group, " has ", counts.unknown, one ? " device" : " devices",
                      " of unknown tier (stored before tiers): ", one ? "its" : "their", " figures may not compare");
}

std::string TierChangeText(absl::string_view from, absl::string_view to) {
  return absl::StrCat("tier ", from, " -> ", to, ": figures before and after do not compare");
}

}  // namespace memfleet::report
