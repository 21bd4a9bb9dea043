// The exit codes of every memfleet binary and command, one table (README "Exit codes"): a script or a CI
// gate reads what happened from the code alone, and a gate that could not check never exits 0.
//
//   if (result.AnyOver()) return kExitOverLimit;
//   if (!result.unchecked.empty() && !args.allow_unchecked) return kExitPartial;
//
// Header-only constants.
#ifndef MEMFLEET_COMMON_EXIT_CODES_H_
#define MEMFLEET_COMMON_EXIT_CODES_H_

namespace memfleet {

// Done: everything asked was done, and a gate found nothing over its limit.
inline constexpr int kExitOk = 0;
// Failed: the server unreachable, timed out or failing; a capture or file that could not be read; a
// service that could not start.
inline constexpr int kExitFailed = 1;
// Usage: a flag, argument or --where term the command does not take (nothing was asked of the server).
inline constexpr int kExitUsage = 2;
// Over the limit: a budget exceeded (baseline check), a regression beyond the noise (regressions).
inline constexpr int kExitOverLimit = 3;
// Nothing to check: no such device, process or baseline, no stored report, no device stored a capture
// in a sweep, one build only where two are compared, no budget that could be checked.
inline constexpr int kExitNothingToCheck = 4;
// Partial: some of what was asked was done and some was not: a sweep where some devices stored no
// capture, budgets that could not be checked (without --allow-unchecked), phones an agents command could
// not serve.
inline constexpr int kExitPartial = 5;

// The exit code of a command line the flag parser refused or answered itself: 0 for --help and
// --version, kExitUsage for the rest (the parser's own codes, such as CLI11's 106 or 109, are not ours).
//   catch (const CLI::ParseError& e) { return UsageExitCode(app.exit(e)); }
inline int UsageExitCode(int parser_exit_code) { return parser_exit_code == 0 ? kExitOk : kExitUsage; }

}  // namespace memfleet

#endif  // MEMFLEET_COMMON_EXIT_CODES_H_
