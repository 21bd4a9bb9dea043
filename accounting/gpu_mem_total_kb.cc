#include "common/decimal.h"
#include "accounting/gpu_mem_total_kb.h"

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
#include "accounting/kb_math.h"
#include "accounting/text_util.h"

namespace memfleet::accounting {
namespace {

absl::Status LineError(int line_number, absl::string_view what, absl::string_view line) {
  return absl::InvalidArgumentError(
      absl::StrCat("dumpsys gpu --gpumem line ", line_number, ": ", what, ": \"", Snippet(ToStd(line), 80), "\""));
}

// "Proc <pid> total: <bytes>"; `rest` is what follows "Proc ".
bool ParseProcLine(absl::string_view rest, int* pid, uint64_t* bytes) {
  const std::vector<absl::string_view> tokens = absl::StrSplit(rest, ' ', absl::SkipEmpty());
  return tokens.size() == 3 && tokens[1] == "total:" && ParseDecimal(tokens[0], pid) && ParseDecimal(tokens[2], bytes);
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
      } else if (!ParseDecimal(line, &bytes)) {
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
