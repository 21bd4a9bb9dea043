// Parses /proc/meminfo: "Label:   value kB" lines into a map of KiB values.
//
//   absl::StatusOr<Meminfo> m = ParseMeminfo(text);
//   std::optional<uint64_t> total = m->Get("MemTotal");
//
// Pure function over text. Format: docs/node-formats.md section 6 (`^(\S+):\s*(\d+)( kB)?$`).
#ifndef MEMFLEET_SERVER_ACCOUNTING_MEMINFO_PARSER_H_
#define MEMFLEET_SERVER_ACCOUNTING_MEMINFO_PARSER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace memfleet::accounting {

struct Meminfo {
  // Key without the colon ("MemTotal", "Active(anon)"); value as printed (kB for kB lines, a count for
  // HugePages_* lines).
  std::map<std::string, uint64_t, std::less<>> values;

  std::optional<uint64_t> Get(std::string_view key) const {
    auto it = values.find(key);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
};

// InvalidArgument (naming the line number) for a line that is not `Key: value [kB]`, a value that
// overflows uint64, or an empty text; DataLoss for a last line cut mid-way (no newline and no unit where
// one is due). Blank lines are skipped (perfetto's fixture starts with one).
absl::StatusOr<Meminfo> ParseMeminfo(std::string_view text);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_SERVER_ACCOUNTING_MEMINFO_PARSER_H_
