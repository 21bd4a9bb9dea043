#include "accounting/proc_identity.h"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

#include "accounting/text_util.h"

namespace memfleet::accounting {
namespace {

constexpr int kMinOomScoreAdj = -1000;
constexpr int kMaxOomScoreAdj = 1000;

}  // namespace

std::string ParseCmdlineName(std::string_view cmdline) {
  // A process that rewrote its argv may leave no NUL at all; then the whole text is its name.
  const size_t nul = cmdline.find('\0');
  return std::string(cmdline.substr(0, nul));
}

absl::StatusOr<std::string> ParseStatusName(std::string_view status) {
  constexpr std::string_view kKey = "Name:";
  size_t pos = 0;
  while (pos < status.size()) {
    size_t eol = status.find('\n', pos);
    if (eol == std::string_view::npos) eol = status.size();
    const std::string_view line = status.substr(pos, eol - pos);
    if (line.substr(0, kKey.size()) == kKey) {
      // The kernel prints "Name:\t%s" with the comm escaped, so spaces inside the name are real;
      // only the separator and trailing whitespace are dropped.
      return std::string(StripWhitespace(line.substr(kKey.size())));
    }
    pos = eol + 1;
  }
  return absl::NotFoundError("status has no 'Name:' line");
}

absl::StatusOr<int> ParseOomScoreAdj(std::string_view text) {
  const std::string_view value = StripWhitespace(text);
  if (value.empty()) return absl::InvalidArgumentError("oom_score_adj is empty");
  int64_t adj = 0;
  const char* const first = value.data();
  const char* const last = first + value.size();
  const auto [ptr, ec] = std::from_chars(first, last, adj);
  if (ec == std::errc::result_out_of_range) {
    return absl::InvalidArgumentError(
        absl::StrCat("oom_score_adj \"", Snippet(value, 40), "\" is out of range [-1000, 1000]"));
  }
  if (ec != std::errc() || ptr != last) {
    return absl::InvalidArgumentError(absl::StrCat("oom_score_adj \"", Snippet(value, 40), "\" is not an integer"));
  }
  if (adj < kMinOomScoreAdj || adj > kMaxOomScoreAdj) {
    return absl::InvalidArgumentError(absl::StrCat("oom_score_adj ", adj, " is out of range [-1000, 1000]"));
  }
  return static_cast<int>(adj);
}

}  // namespace memfleet::accounting
