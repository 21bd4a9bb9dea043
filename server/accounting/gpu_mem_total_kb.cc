#include "server/accounting/gpu_mem_total_kb.h"

#include <charconv>
#include <cstdint>
#include <limits>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "server/accounting/kb_math.h"
#include "server/accounting/text_util.h"

namespace memfleet::accounting {
namespace {

bool ParseU64(absl::string_view token, uint64_t* out) {
  if (token.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(token.front()))) return false;
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), *out);
  return ec == std::errc() && ptr == token.data() + token.size();
}

absl::Status LineError(int line_number, absl::string_view what, absl::string_view line) {
  return absl::InvalidArgumentError(absl::StrCat("dumpsys gpu --gpumem line ", line_number, ": ", what, ": \"",
                                                 Snippet(std::string_view(line.data(), line.size()), 80),
                                                 "\""));
}

// "Proc <pid> total: <bytes>"; `rest` is what follows "Proc ".
bool ParseProcLine(absl::string_view rest, int* pid, uint64_t* bytes) {
  const std::vector<absl::string_view> tokens = absl::StrSplit(rest, ' ', absl::SkipEmpty());
  uint64_t p = 0;
  if (tokens.size() != 3 || tokens[1] != "total:" || !ParseU64(tokens[0], &p) ||
      p > static_cast<uint64_t>(std::numeric_limits<int>::max()) || !ParseU64(tokens[2], bytes)) {
    return false;
  }
  *pid = static_cast<int>(p);
  return true;
}

}  // namespace

absl::StatusOr<GpuMemSnapshot> ParseGpuMemSnapshot(std::string_view text_in) {
  const absl::string_view text(text_in.data(), text_in.size());
  GpuMemSnapshot out;
  bool global_known = true;
  uint64_t global = 0;
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_number;
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (absl::StartsWith(line, "Memory snapshot for GPU")) {
      ++out.gpu_count;
    } else if (absl::ConsumePrefix(&line, "Global total:")) {
      line = absl::StripAsciiWhitespace(line);
      uint64_t bytes = 0;
      if (line == "N/A") {
        global_known = false;
      } else if (!ParseU64(line, &bytes)) {
        return LineError(line_number, "expected \"Global total: <bytes>\" or \"Global total: N/A\"", raw);
      } else if (!AddU64(global, bytes)) {
        return LineError(line_number, "global total overflows", raw);
      }
    } else if (absl::ConsumePrefix(&line, "Proc ")) {
      int pid = 0;
      uint64_t bytes = 0;
      if (!ParseProcLine(line, &pid, &bytes)) {
        return LineError(line_number, "expected \"Proc <pid> total: <bytes>\"", raw);
      }
      if (!AddU64(out.total_bytes_by_pid[pid], bytes)) return LineError(line_number, "process total overflows", raw);
    }
  }
  if (out.gpu_count == 0) {
    return absl::InvalidArgumentError(
        "dumpsys gpu --gpumem: no \"Memory snapshot for GPU\" section (GPU memory tracking unavailable)");
  }
  if (global_known) out.global_bytes = global;
  return out;
}

}  // namespace memfleet::accounting
