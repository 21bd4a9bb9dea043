#include "accounting/sysfs_value.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

#include "common/decimal.h"
#include "accounting/text_util.h"

namespace memfleet::accounting {

namespace {

absl::Status ValueError(std::string_view value, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("sysfs value \"", Snippet(value, 40), "\" ", ToAbsl(what)));
}

// The decimal that starts `value`, *digit_count its length; `no_digits` says what a value that does not
// start with a digit is not.
absl::Status ReadLeadingDecimal(std::string_view value, std::string_view no_digits, uint64_t* out,
                                size_t* digit_count) {
  switch (ReadDecimalPrefix(value, out, digit_count)) {
    case DecimalResult::kOk:
      return absl::OkStatus();
    case DecimalResult::kOverflow:
      return ValueError(value, "does not fit 64 bits");
    case DecimalResult::kNoDigits:
      break;
  }
  return ValueError(value, no_digits);
}

}  // namespace

absl::StatusOr<uint64_t> ParseSysfsUint(std::string_view text) {
  const std::string_view value = StripWhitespace(text);
  if (value.empty()) return absl::InvalidArgumentError("sysfs value is empty");
  uint64_t v = 0;
  size_t digit_count = 0;
  if (absl::Status s = ReadLeadingDecimal(value, "is not an unsigned decimal", &v, &digit_count); !s.ok()) return s;
  if (digit_count != value.size()) return ValueError(value, "is not a single unsigned decimal");
  return v;
}

absl::StatusOr<uint64_t> ParseLeadingUint(std::string_view text) {
  const std::string_view value = StripLeadingWhitespace(text);
  if (value.empty()) return absl::InvalidArgumentError("sysfs value is empty");
  if (value.front() == '-') return ValueError(value, "is negative");
  uint64_t v = 0;
  size_t digit_count = 0;
  if (absl::Status s = ReadLeadingDecimal(value, "does not start with a digit", &v, &digit_count); !s.ok()) return s;
  return v;
}

std::string TrimSysfsString(std::string_view text) { return std::string(StripWhitespace(text)); }

}  // namespace memfleet::accounting
