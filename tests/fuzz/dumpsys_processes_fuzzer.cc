// libFuzzer target for ParseDumpsysProcesses, the "Total PSS by process" lines the dumpsys tier takes
// figures from. Besides "no crash, no UB": every process has a positive pid, a name, the line it came
// from, and no pid twice; a refused text is only one past the line limit.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string_view>

#include "absl/status/status.h"
#include "accounting/dumpsys_processes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed = memfleet::accounting::ParseDumpsysProcesses(text);
  if (!parsed.ok()) {
    if (parsed.status().code() != absl::StatusCode::kInvalidArgument) __builtin_trap();
    return 0;
  }
  std::set<int> pids;
  for (const auto& p : parsed->processes) {
    if (p.pid <= 0 || p.name.empty() || p.line_number <= 0 || !pids.insert(p.pid).second) __builtin_trap();
  }
  if (parsed->skipped_lines.size() > 10 || parsed->skipped_lines.size() > parsed->skipped_line_count) __builtin_trap();
  if (!parsed->processes.empty() && !parsed->has_process_section) __builtin_trap();
  return 0;
}
