#include "accounting/fdinfo_parser.h"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
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

// Parses the whole of `value` (already stripped) as an integer of type T.
template <typename T>
absl::Status ParseNumber(std::string_view key, std::string_view value, size_t line_no, std::string_view line,
                         std::optional<T>* out) {
  T v{};
  const char* const first = value.data();
  const char* const last = first + value.size();
  const auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec == std::errc::result_out_of_range) {
    return absl::InvalidArgumentError(absl::StrCat("fdinfo line ", line_no, ": '", ToAbsl(key),
                                                   ":' value does not fit 64 bits: \"", Snippet(line, 100), "\""));
  }
  if (value.empty() || ec != std::errc() || ptr != last) {
    return absl::InvalidArgumentError(absl::StrCat("fdinfo line ", line_no, ": '", ToAbsl(key),
                                                   ":' value is not a decimal number: \"", Snippet(line, 100), "\""));
  }
  *out = v;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Fdinfo> ParseFdinfo(std::string_view text) {
  Fdinfo info;
  size_t pos = 0;
  size_t line_no = 0;
  while (pos < text.size()) {
    ++line_no;
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;

    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon);
    std::string_view raw = line.substr(colon + 1);

    if (key == "ino" || key == "size" || key == "count") {
      const std::string_view value = StripWhitespace(raw);
      absl::Status status;
      if (key == "ino") {
        status = ParseNumber(key, value, line_no, line, &info.ino);
      } else if (key == "size") {
        status = ParseNumber(key, value, line_no, line, &info.size_bytes);
      } else {
        status = ParseNumber(key, value, line_no, line, &info.count);
      }
      if (!status.ok()) return status;
    } else if (key == "exp_name") {
      info.exp_name = std::string(StripWhitespace(raw));
    } else if (key == "name") {
      // "name:\t%s": a DMA_BUF_SET_NAME name is arbitrary user text, so keep it exactly, dropping
      // only the kernel's tab (or, in hand-written files, leading spaces).
      if (!raw.empty() && raw.front() == '\t') {
        raw.remove_prefix(1);
      } else {
        while (!raw.empty() && raw.front() == ' ') raw.remove_prefix(1);
      }
      info.name = std::string(raw);
    }
    // pos:, flags: (octal), mnt_id:, lock:, eventfd-count: ... are not needed for accounting.
  }
  return info;
}

}  // namespace memfleet::accounting
