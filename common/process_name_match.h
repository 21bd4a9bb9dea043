// Process names as people type them: a report names a process by its cmdline verbatim
// ("/root/.pyenv/versions/3.11.7/bin/python3"), a person types "python3". ResolveProcessName picks the
// one name meant — exactly the typed name, else the one name whose base name (after the last '/') is it,
// else the one name ending with it — and otherwise says which names come closest.
//
//   absl::StatusOr<std::string> name = ResolveProcessName("python3", names_on_the_device);
//   // NotFound: nothing matches; InvalidArgument: several do. Both list the closest names (at most 8).
#ifndef MEMFLEET_COMMON_PROCESS_NAME_MATCH_H_
#define MEMFLEET_COMMON_PROCESS_NAME_MATCH_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace memfleet {

// How many names an error lists at most: enough to spot the one meant, bounded for a device with
// thousands of processes.
inline constexpr size_t kMaxSuggestedProcessNames = 8;

// The part after the last '/' ("python3" for "/usr/bin/python3"); the whole name when it has none.
std::string ProcessBaseName(const std::string& name);

// Up to `limit` distinct names closest to `typed`, closest first: names containing it (ignoring case)
// before the others, then by edit distance of their base names, then by name.
std::vector<std::string> ClosestProcessNames(const std::string& typed, const std::vector<std::string>& names,
                                             size_t limit = kMaxSuggestedProcessNames);

// The name `typed` means among `names` (duplicates allowed). `where` completes the error messages
// ("in the latest report of pixel-7"). NotFound when nothing matches; InvalidArgument when several base
// names or suffixes do.
absl::StatusOr<std::string> ResolveProcessName(const std::string& typed, const std::vector<std::string>& names,
                                               const std::string& where);

}  // namespace memfleet

#endif  // MEMFLEET_COMMON_PROCESS_NAME_MATCH_H_
