// The two tiers a device's figures come in (docs/accounting.md section 9), named the one way in the report,
// the agent's Hello, the store and every view: "kernel" — the kernel's nodes by the engine's rules, the
// same on every vendor — and "dumpsys" — the phone's own `dumpsys meminfo`, where an agent that runs as
// shell cannot read other processes' smaps (vendor memtrack included, not comparable across vendors).
//
//   const char* tier = TierOfAccess(facts.access);   // "dumpsys" for an agent reading as "shell"
//
// Header-only.
#ifndef MEMFLEET_COMMON_FIGURE_TIER_H_
#define MEMFLEET_COMMON_FIGURE_TIER_H_

#include <string_view>

namespace memfleet {

inline constexpr char kTierKernel[] = "kernel";
inline constexpr char kTierDumpsys[] = "dumpsys";

// The tier of the figures an agent reading with `access` ("root", "shell", "" when it did not say) gives:
// a shell agent sees other processes' smaps denied.
inline const char* TierOfAccess(std::string_view access) { return access == "shell" ? kTierDumpsys : kTierKernel; }

}  // namespace memfleet

#endif  // MEMFLEET_COMMON_FIGURE_TIER_H_
