#include "proto/capture_limits.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"

namespace memfleet::wire {
namespace {

// A bounded, printable piece of an untrusted value for a message.
std::string Snippet(std::string_view value) {
  std::string out;
  for (char c : value.substr(0, 60)) {
    unsigned char u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u >= 0x7f) ? '?' : c;
  }
  if (value.size() > 60) out += "...";
  return out;
}

bool IsErrnoName(std::string_view name) {
  if (name.size() < 2 || name.size() > kMaxErrnoNameBytes || name[0] != 'E') return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; });
}

}  // namespace

absl::Status CheckEntryShape(const v1::NodeEntry& entry) {
  const std::string& path = entry.path();
  if (path.size() > kMaxPathBytes) {
    return absl::InvalidArgumentError(absl::StrCat("node path \"", Snippet(path), "\" is ", path.size(),
                                                   " bytes long (at most ", kMaxPathBytes, ")"));
  }
  const size_t depth = static_cast<size_t>(std::count(path.begin(), path.end(), '/')) + 1;
  if (depth > kMaxPathDepth) {
    return absl::InvalidArgumentError(absl::StrCat("node path \"", Snippet(path), "\" has ", depth,
                                                   " segments (at most ", kMaxPathDepth, ")"));
  }
  if (entry.value_case() == v1::NodeEntry::kErrnoName && !IsErrnoName(entry.errno_name())) {
    return absl::InvalidArgumentError(absl::StrCat("node ", Snippet(path), ": error value \"",
                                                   Snippet(entry.errno_name()), "\" (", entry.errno_name().size(),
                                                   " bytes) is not an errno name like EACCES"));
  }
  return absl::OkStatus();
}

}  // namespace memfleet::wire
