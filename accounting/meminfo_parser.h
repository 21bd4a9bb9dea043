// Parses /proc/meminfo: "Label:   value kB" lines into a map of KiB values.
//
//   absl::StatusOr<Meminfo> m = ParseMeminfo(text);
//   std::optional<uint64_t> total = m->Get("MemTotal");
//
// Pure function over text. Format: docs/node-formats.md section 6 (`^(\S+):\s*(\d+)( kB)?$`).
#ifndef MEMFLEET_ACCOUNTING_MEMINFO_PARSER_H_
#define MEMFLEET_ACCOUNTING_MEMINFO_PARSER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "accounting/kb_math.h"
#include "accounting/model.h"

namespace memfleet::accounting {

struct Meminfo {
  // Key without the colon ("MemTotal", "Active(anon)"); value as printed (kB for kB lines, a count for
  // HugePages_* lines).
  std::map<std::string, uint64_t, std::less<>> values;
  // Lines that are not `Key: N [kB]` (vendor kernels print "GPUTotalUsed: 39735 pages", "RsvPool: ..."),
  // skipped: "line 12: <reason>: \"<line>\"". The first kMaxNamedSkippedLines are named here,
  // skipped_line_count counts them all.
  std::vector<std::string> skipped_lines;
  size_t skipped_line_count = 0;

  std::optional<uint64_t> Get(std::string_view key) const {
    auto it = values.find(key);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
};

inline constexpr size_t kMaxNamedSkippedLines = 8;

// A line that is not `Key: value [kB]`, or whose value overflows uint64, is skipped and listed in
// skipped_lines: only the figures that need its key become unknown. InvalidArgument for a text without
// any `Key: value` line (naming the first skipped one); DataLoss for a last line cut mid-way (no newline
// and no unit where one is due). Blank lines are skipped (perfetto's fixture starts with one).
absl::StatusOr<Meminfo> ParseMeminfo(std::string_view text);

// A kB line of `meminfo` as a figure: null when `meminfo` is null (no usable file) or has no such line.
inline Kb MeminfoKb(const Meminfo* meminfo, std::string_view key) {
  std::optional<uint64_t> v = meminfo != nullptr ? meminfo->Get(key) : std::nullopt;
  return v ? ToKb(*v) : std::nullopt;
}

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_MEMINFO_PARSER_H_
