#include "server/accounting/sysfs_value.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

#include "server/accounting/text_util.h"

namespace memfleet::accounting {
namespace {






enum class DigitsResult { kOk, kNoDigits, kOverflow };

// Reads [0-9]+ from the start of `text`; *consumed is the number of digits.
DigitsResult ParseDigits(std::string_view text, uint64_t* out, size_t* consumed) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t v = 0;
  size_t i = 0;
  for (; i < text.size(); ++i) {
    const unsigned d = static_cast<unsigned>(static_cast<unsigned char>(text[i])) - '0';
    if (d > 9) break;
    if (v > (kMax - d) / 10) return DigitsResult::kOverflow;
    v = v * 10 + d;
  }
  if (i == 0) return DigitsResult::kNoDigits;
  *out = v;
  *consumed = i;
  return DigitsResult::kOk;
}

}  // namespace

absl::StatusOr<uint64_t> ParseSysfsUint(std::string_view text) {
  const std::string_view value = StripWhitespace(text);
  if (value.empty()) return absl::InvalidArgumentError("sysfs value is empty");
  uint64_t v = 0;
  size_t consumed = 0;
  switch (ParseDigits(value, &v, &consumed)) {
    case DigitsResult::kOverflow:
      return absl::InvalidArgumentError(
          absl::StrCat("sysfs value \"", Snippet(value, 40), "\" does not fit 64 bits"));
    case DigitsResult::kNoDigits:
      return absl::InvalidArgumentError(
          absl::StrCat("sysfs value \"", Snippet(value, 40), "\" is not an unsigned decimal"));
    case DigitsResult::kOk:
      break;
  }
  if (consumed != value.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sysfs value \"", Snippet(value, 40), "\" is not a single unsigned decimal"));
  }
  return v;
}

absl::StatusOr<uint64_t> ParseLeadingUint(std::string_view text) {
  const std::string_view value = StripLeadingWhitespace(text);
  if (value.empty()) return absl::InvalidArgumentError("sysfs value is empty");
  if (value.front() == '-') {
    return absl::InvalidArgumentError(
        absl::StrCat("sysfs value \"", Snippet(value, 40), "\" is negative"));
  }
  uint64_t v = 0;
  size_t consumed = 0;
  switch (ParseDigits(value, &v, &consumed)) {
    case DigitsResult::kOverflow:
      return absl::InvalidArgumentError(
          absl::StrCat("sysfs value \"", Snippet(value, 40), "\" does not fit 64 bits"));
    case DigitsResult::kNoDigits:
      return absl::InvalidArgumentError(
          absl::StrCat("sysfs value \"", Snippet(value, 40), "\" does not start with a digit"));
    case DigitsResult::kOk:
      break;
  }
  return v;
}

std::string TrimSysfsString(std::string_view text) { return std::string(StripWhitespace(text)); }

}  // namespace memfleet::accounting
