#include "accounting/dumpsys_text.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "accounting/dumpsys_number.h"
#include "accounting/text_util.h"

namespace memfleet::accounting {
namespace {

absl::Status LineError(int line_number, absl::string_view what, absl::string_view line) {
  return absl::InvalidArgumentError(
      absl::StrCat("dumpsys meminfo line ", line_number, ": ", what, ": \"", Snippet(ToStd(line), 100), "\""));
}

bool ConsumeWords(absl::string_view* rest, absl::string_view words) {
  absl::string_view s = absl::StripLeadingAsciiWhitespace(*rest);
  if (!absl::ConsumePrefix(&s, words)) return false;
  *rest = s;
  return true;
}

// " (A label + B label + C label)" after the line's total. No parenthesis: no parts.
bool ConsumeParts(absl::string_view* rest, std::vector<std::pair<absl::string_view, int64_t>>* parts) {
  absl::string_view s = absl::StripLeadingAsciiWhitespace(*rest);
  if (!absl::ConsumePrefix(&s, "(")) return true;
  for (;;) {
    int64_t value = 0;
    if (!ConsumeDumpsysKb(&s, &value, /*unit_optional=*/true)) return false;
    const size_t stop = s.find_first_of("+)");
    if (stop == absl::string_view::npos) return false;  // cut before the ")"
    parts->emplace_back(absl::StripAsciiWhitespace(s.substr(0, stop)), value);
    const char c = s[stop];
    s.remove_prefix(stop + 1);
    if (c == ')') break;
  }
  *rest = s;
  return true;
}

void Assign(const std::vector<std::pair<absl::string_view, int64_t>>& parts, absl::string_view label,
            std::optional<int64_t>* field) {
  for (const auto& [name, value] : parts) {
    if (name == label) {
      *field = value;
      return;
    }
  }
}

}  // namespace

absl::StatusOr<DumpsysSummary> ParseDumpsysMeminfo(std::string_view text_in) {
  const absl::string_view text(text_in.data(), text_in.size());
  DumpsysSummary out;
  bool found = false;
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_number;
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    int64_t total = 0;
    std::vector<std::pair<absl::string_view, int64_t>> parts;

    // Each summary line is "<label>: <total>[ (<parts>)]"; the per-process tables put the number
    // first ("  12,345K: com.foo (pid 1)"), so a label prefix cannot match them.
    auto total_and_parts = [&](absl::string_view label) -> absl::Status {
      if (!ConsumeDumpsysKb(&line, &total)) return LineError(line_number, absl::StrCat(label, " number"), raw);
      if (!ConsumeParts(&line, &parts)) {
        return LineError(line_number, absl::StrCat(label, " breakdown \"(A x + B y)\""), raw);
      }
      found = true;
      return absl::OkStatus();
    };

    absl::Status status;
    if (absl::ConsumePrefix(&line, "Total RAM:")) {
      // "(status normal)" follows: not a breakdown.
      if (!ConsumeDumpsysKb(&line, &total)) return LineError(line_number, "Total RAM number", raw);
      out.total_ram_kb = total;
      found = true;
    } else if (absl::ConsumePrefix(&line, "Free RAM:")) {
      if (status = total_and_parts("Free RAM"); !status.ok()) return status;
      out.free_ram_kb = total;
      Assign(parts, "cached pss", &out.free_cached_pss_kb);
      Assign(parts, "cached kernel", &out.free_cached_kernel_kb);
      Assign(parts, "free", &out.free_free_kb);
      Assign(parts, "cached ion", &out.free_cached_ion_kb);
    } else if (absl::ConsumePrefix(&line, "DMA-BUF:")) {
      if (status = total_and_parts("DMA-BUF"); !status.ok()) return status;
      out.dmabuf_total_kb = total;
      Assign(parts, "mapped", &out.dmabuf_mapped_kb);
      Assign(parts, "unmapped", &out.dmabuf_unmapped_kb);
    } else if (absl::ConsumePrefix(&line, "ION:")) {
      if (status = total_and_parts("ION"); !status.ok()) return status;
      out.ion_total_kb = total;
      Assign(parts, "mapped", &out.ion_mapped_kb);
      Assign(parts, "unmapped", &out.ion_unmapped_kb);
      Assign(parts, "pools", &out.ion_pools_kb);
    } else if (absl::ConsumePrefix(&line, "GPU:")) {
      if (status = total_and_parts("GPU"); !status.ok()) return status;
      out.gpu_total_kb = total;
      Assign(parts, "private", &out.gpu_private_kb);
    } else if (absl::ConsumePrefix(&line, "Kernel CMA:")) {
      if (status = total_and_parts("Kernel CMA"); !status.ok()) return status;
      out.kernel_cma_kb = total;
    } else if (absl::ConsumePrefix(&line, "Used RAM:")) {
      if (status = total_and_parts("Used RAM"); !status.ok()) return status;
      out.used_ram_kb = total;
      Assign(parts, "used pss", &out.used_pss_kb);
      Assign(parts, "kernel", &out.used_kernel_kb);
    } else if (absl::ConsumePrefix(&line, "Lost RAM:")) {
      if (status = total_and_parts("Lost RAM"); !status.ok()) return status;
      out.lost_ram_kb = total;
    } else if (absl::ConsumePrefix(&line, "ZRAM:")) {
      // "ZRAM: X physical used for A in swap (B total swap)"
      int64_t used = 0;
      int64_t swap_total = 0;
      if (!ConsumeDumpsysKb(&line, &total) || !ConsumeWords(&line, "physical used for") ||
          !ConsumeDumpsysKb(&line, &used) || !ConsumeWords(&line, "in swap") || !ConsumeWords(&line, "(") ||
          !ConsumeDumpsysKb(&line, &swap_total) || !ConsumeWords(&line, "total swap)")) {
        return LineError(line_number, "expected \"ZRAM: X physical used for A in swap (B total swap)\"", raw);
      }
      out.zram_physical_kb = total;
      out.zram_swap_used_kb = used;
      out.zram_swap_total_kb = swap_total;
      found = true;
    }
  }
  if (!found) {
    return absl::InvalidArgumentError(
        "dumpsys meminfo: no summary line (Total RAM, Free RAM, Used RAM...); not the output of a "
        "whole-device `dumpsys meminfo`");
  }
  return out;
}

}  // namespace memfleet::accounting
