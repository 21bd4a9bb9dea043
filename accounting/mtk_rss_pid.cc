#include "common/decimal.h"
#include "accounting/mtk_rss_pid.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "accounting/text_util.h"

namespace memfleet::accounting {
namespace {

constexpr absl::string_view kNode = "dma_heap/rss_pid";
// The kprobe variant prints it with a trailing period; a prefix match takes both.
constexpr absl::string_view kEndMarker = "-----EGL memtrack data end";

absl::Status LineError(int line_number, absl::string_view what, absl::string_view line) {
  return absl::InvalidArgumentError(
      absl::StrCat(kNode, " line ", line_number, ": ", what, ": \"", Snippet(ToStd(line), 80), "\""));
}

std::vector<absl::string_view> Tokens(absl::string_view line, absl::string_view separators) {
  return absl::StrSplit(line, absl::ByAnyChar(separators), absl::SkipEmpty());
}

bool IsHeader(absl::string_view line) {
  const std::vector<absl::string_view> t = Tokens(line, " \t\r");
  return t.size() == 3 && t[0] == "PID" && t[1] == "PSS(KB)" && t[2] == "RSS(KB)";
}

// "--sum: userspace_pss:%ld KB rss:%ld KB" or "--sum: kernel rss: %ld KB".
absl::Status ParseSumLine(int line_number, absl::string_view line, RssPid* out) {
  const std::vector<absl::string_view> t = Tokens(line, " \t\r:");
  uint64_t a = 0;
  uint64_t b = 0;
  if (t.size() >= 2 && t[1] == "userspace_pss") {
    if (t.size() != 7 || !ParseDecimal(t[2], &a) || t[3] != "KB" || t[4] != "rss" || !ParseDecimal(t[5], &b) ||
        t[6] != "KB") {
      return LineError(line_number, "expected \"--sum: userspace_pss:<kB> KB rss:<kB> KB\"", line);
    }
    out->userspace_pss_kb = a;
    out->userspace_rss_kb = b;
    return absl::OkStatus();
  }
  if (t.size() >= 3 && t[1] == "kernel" && t[2] == "rss") {
    if (t.size() != 5 || !ParseDecimal(t[3], &a) || t[4] != "KB") {
      return LineError(line_number, "expected \"--sum: kernel rss: <kB> KB\"", line);
    }
    out->kernel_rss_kb = a;
    return absl::OkStatus();
  }
  return absl::OkStatus();  // another summary line: not one the rules read
}

}  // namespace

absl::StatusOr<RssPid> ParseMtkRssPid(std::string_view text_in) {
  const absl::string_view text(text_in.data(), text_in.size());
  RssPid out;
  // The current driver prints nothing at all for a pid without dma-bufs.
  if (absl::StripAsciiWhitespace(text).empty()) return out;

  const std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  size_t i = 0;
  while (i < lines.size() && absl::StripAsciiWhitespace(lines[i]).empty()) ++i;
  if (!IsHeader(lines[i])) {
    return LineError(static_cast<int>(i) + 1, "expected the header \"PID     PSS(KB)   RSS(KB)\"", lines[i]);
  }
  ++i;

  bool closed = false;
  for (; i < lines.size(); ++i) {
    const int line_number = static_cast<int>(i) + 1;
    const absl::string_view line = absl::StripAsciiWhitespace(lines[i]);
    if (line.empty()) continue;
    if (absl::StartsWith(line, kEndMarker)) {
      closed = true;
      ++i;
      break;
    }
    const std::vector<absl::string_view> t = Tokens(line, " \t\r");
    RssPidRow row;
    if (t.size() != 3 || !ParseDecimal(t[0], &row.pid) || !ParseDecimal(t[1], &row.pss_kb) ||
        !ParseDecimal(t[2], &row.rss_kb)) {
      return LineError(line_number, "expected a row \"<pid> <pss_kb> <rss_kb>\"", lines[i]);
    }
    out.rows.push_back(row);
  }
  if (!closed) {
    return absl::InvalidArgumentError(
        absl::StrCat(kNode, ": the table is not closed by \"", kEndMarker, "\" (truncated read?)"));
  }

  for (; i < lines.size(); ++i) {
    const absl::string_view line = absl::StripAsciiWhitespace(lines[i]);
    if (!absl::StartsWith(line, "--sum:")) continue;  // "pid table:" and its rows
    if (absl::Status s = ParseSumLine(static_cast<int>(i) + 1, lines[i], &out); !s.ok()) return s;
  }
  return out;
}

}  // namespace memfleet::accounting
