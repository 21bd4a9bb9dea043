#include "proto/capture_limits.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/untrusted_text.h"

namespace memfleet::wire {
namespace {}  // namespace

absl::Status CheckEntryShape(const v1::NodeEntry& entry) {
  const std::string& path = entry.path();
  if (path.size() > kMaxPathBytes) {
    return absl::InvalidArgumentError(absl::StrCat("node path \"", Snippet(path, 60), "\" is ", path.size(),
                                                   " bytes long (at most ", kMaxPathBytes, ")"));
  }
  const size_t depth = static_cast<size_t>(std::count(path.begin(), path.end(), '/')) + 1;
  if (depth > kMaxPathDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("node path \"", Snippet(path, 60), "\" has ", depth, " segments (at most ", kMaxPathDepth, ")"));
  }
  if (entry.value_case() == v1::NodeEntry::kErrnoName && !IsErrnoName(entry.errno_name())) {
    return absl::InvalidArgumentError(absl::StrCat("node ", Snippet(path, 60), ": error value \"",
                                                   Snippet(entry.errno_name(), 60), "\" (", entry.errno_name().size(),
                                                   " bytes) is not an errno name like EACCES"));
  }
  return absl::OkStatus();
}

}  // namespace memfleet::wire
