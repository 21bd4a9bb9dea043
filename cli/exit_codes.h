// The exit codes of every memfleet command: one table, so a script or CI reads them the same everywhere.
//
//   0 done        1 server unreachable or failed     2 usage (bad flags or arguments, a refused request)
//   3 over budget or a regression flagged             4 nothing to check (unknown device, no phone, no match)
//   5 partial: some of the devices or phones asked for were served, others not
//
//   return failed == 0 ? kExitOk : kExitPartial;
#ifndef MEMFLEET_CLI_EXIT_CODES_H_
#define MEMFLEET_CLI_EXIT_CODES_H_

namespace memfleet::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitServerError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitOverBudget = 3;
inline constexpr int kExitNotFound = 4;
inline constexpr int kExitPartial = 5;

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_EXIT_CODES_H_
