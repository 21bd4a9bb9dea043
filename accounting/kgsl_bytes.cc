#include "accounting/kgsl_bytes.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "accounting/sysfs_value.h"
#include "accounting/text_util.h"

namespace memfleet::accounting {

absl::StatusOr<uint64_t> ParseKgslBytes(std::string_view text) {
  const std::string_view value = StripWhitespace(text);
  if (!value.empty() && value.front() == '-') {
    return absl::OutOfRangeError(absl::StrCat("negative byte count \"", Snippet(value, 40),
                                              "\" (the driver prints it with %lld: its counter went below zero)"));
  }
  return ParseLeadingUint(text);
}

}  // namespace memfleet::accounting
