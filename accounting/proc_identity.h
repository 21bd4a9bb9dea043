// Parses what names a process and ranks it: /proc/<pid>/cmdline, status (Name:) and oom_score_adj.
//
//   std::string name = ParseCmdlineName(cmdline);   // "" for a kernel thread
//   absl::StatusOr<int> adj = ParseOomScoreAdj("900\n");
#ifndef MEMFLEET_ACCOUNTING_PROC_IDENTITY_H_
#define MEMFLEET_ACCOUNTING_PROC_IDENTITY_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace memfleet::accounting {

// First NUL-separated field of cmdline, verbatim ("/system/bin/surfaceflinger" stays a full path).
// Empty when cmdline is empty or starts with NUL.
std::string ParseCmdlineName(std::string_view cmdline);

// The value of the "Name:" line of /proc/<pid>/status (tab or spaces after the colon). NotFound when
// there is no Name: line.
absl::StatusOr<std::string> ParseStatusName(std::string_view status);

// oom_score_adj: one integer in [-1000, 1000] with optional surrounding whitespace. InvalidArgument for
// empty text, garbage or an out-of-range value.
absl::StatusOr<int> ParseOomScoreAdj(std::string_view text);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_PROC_IDENTITY_H_
