#include "accounting/meminfo_parser.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
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

enum class LineResult { kOk, kMalformed, kOverflow };

inline bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Printable ASCII other than space and ':'; a NUL or other control byte means the text is not
// meminfo.
inline bool IsKeyChar(char c) { return c > ' ' && c < 0x7f && c != ':'; }

struct ParsedLine {
  std::string_view key;
  uint64_t value = 0;
  bool has_unit = false;
  const char* reason = "";
};

// `Key:<blanks>digits[ kB]<blanks>`, i.e. docs/node-formats.md section 6's `^(\S+):\s*(\d+)( kB)?$`.
// The blanks after the colon may be absent, as in "ShadowCallStack:15680 kB".
LineResult ParseLine(std::string_view line, ParsedLine* out) {
  size_t i = 0;
  while (i < line.size() && IsKeyChar(line[i])) ++i;
  if (i == 0) {
    out->reason = "expected 'Key: value [kB]'";
    return LineResult::kMalformed;
  }
  if (i >= line.size() || line[i] != ':') {
    out->reason = "expected ':' after the key";
    return LineResult::kMalformed;
  }
  out->key = line.substr(0, i);
  ++i;
  while (i < line.size() && IsBlank(line[i])) ++i;

  uint64_t v = 0;
  size_t digit_count = 0;
  switch (ReadDecimalPrefix(line.substr(i), &v, &digit_count)) {
    case DecimalResult::kOk:
      break;
    case DecimalResult::kOverflow:
      out->reason = "value does not fit 64 bits";
      return LineResult::kOverflow;
    case DecimalResult::kNoDigits:
      out->reason = "value is not an unsigned number";
      return LineResult::kMalformed;
  }
  i += digit_count;
  out->value = v;

  const size_t after_digits = i;
  while (i < line.size() && IsBlank(line[i])) ++i;
  if (i > after_digits && line.size() - i >= 2 && line[i] == 'k' && line[i + 1] == 'B') {
    out->has_unit = true;
    i += 2;
    while (i < line.size() && IsBlank(line[i])) ++i;
  }
  if (i != line.size()) {
    out->reason = "garbage after the value (only ' kB' may follow it)";
    return LineResult::kMalformed;
  }
  return LineResult::kOk;
}

}  // namespace

absl::StatusOr<Meminfo> ParseMeminfo(std::string_view text) {
  if (text.empty()) return absl::InvalidArgumentError("meminfo is empty");
  Meminfo meminfo;
  const char* p = text.data();
  const char* const end = p + text.size();
  size_t line_no = 0;
  while (p < end) {
    ++line_no;
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    const bool terminated = nl != nullptr;
    const std::string_view line(p, static_cast<size_t>((terminated ? nl : end) - p));
    p = terminated ? nl + 1 : end;

    size_t first = 0;
    while (first < line.size() && IsBlank(line[first])) ++first;
    if (first == line.size()) continue;  // perfetto's fixture starts with an empty line

    ParsedLine parsed;
    const LineResult result = ParseLine(line, &parsed);
    if (!terminated && result != LineResult::kOverflow) {
      // The kernel ends every line with '\n'; a last line without it came from a short read. It is
      // still whole when it parses and carries the unit (HugePages_* counts have none).
      const bool unit_due = parsed.key.substr(0, 10) != "HugePages_";
      if (result == LineResult::kMalformed || (unit_due && !parsed.has_unit)) {
        return absl::DataLossError(absl::StrCat("meminfo line ", line_no, ": text ends in the middle of this line: \"",
                                                Snippet(line, 100), "\""));
      }
    }
    if (result != LineResult::kOk) {
      // Vendor kernels add lines of their own; one of them must not cost every device figure.
      if (meminfo.skipped_line_count++ < kMaxNamedSkippedLines) {
        meminfo.skipped_lines.push_back(
            absl::StrCat("line ", line_no, ": ", parsed.reason, ": \"", Snippet(line, 100), "\""));
      }
      continue;
    }
    // The first occurrence wins: the kernel prints each key once, and a vendor hook repeating a
    // name must not override the core counter.
    meminfo.values.emplace(std::string(parsed.key), parsed.value);
  }
  if (meminfo.values.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("meminfo has no 'Key: value' line",
                     meminfo.skipped_lines.empty() ? "" : absl::StrCat(" (", meminfo.skipped_lines.front(), ")")));
  }
  return meminfo;
}

}  // namespace memfleet::accounting
