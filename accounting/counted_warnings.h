// Warnings that say one thing of many processes, made one counted line: on a live root dozens of processes
// exit during a capture, and as shell every other process's smaps answers EACCES, so a line each would bury
// the warnings that need a reader. The per-process reason stays in the report's `sources`.
//
//   std::vector<int> exited = TakeProcessWarnings(report.warnings, EndsWithExited);
//   if (!exited.empty()) report.warnings.push_back(absl::StrCat(exited.size(), " processes exited: ",
//                                                               NameSomeProcesses(exited, AsProcDir)));
//
// Pure.
#ifndef MEMFLEET_ACCOUNTING_COUNTED_WARNINGS_H_
#define MEMFLEET_ACCOUNTING_COUNTED_WARNINGS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"

namespace memfleet::accounting {

// How many processes a counted line names before it says "...".
inline constexpr size_t kProcessesNamed = 8;

// The pid a warning about one process is about ("proc/<pid>/..." or "proc/<pid>:"), nullopt for any other.
std::optional<int> WarningPid(absl::string_view warning);

// When more than one warning about a process matches, removes every matching one from `warnings` (the
// others keep their order) and returns their pids, each once, in ascending order; otherwise leaves
// `warnings` as it is and returns none: a lone warning says more as it is.
std::vector<int> TakeProcessWarnings(std::vector<std::string>& warnings,
                                     absl::FunctionRef<bool(const std::string&)> matches);

// The first kProcessesNamed of `pids`, each as `name` gives it, joined by ", ", then ", ..." when there are
// more.
std::string NameSomeProcesses(const std::vector<int>& pids, absl::FunctionRef<std::string(int)> name);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_COUNTED_WARNINGS_H_
