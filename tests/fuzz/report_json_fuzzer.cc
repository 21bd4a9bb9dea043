// libFuzzer target for ReportFromJson: the CLI parses the report JSON a server sends it (report, sweep).
// Any bytes give a Report or an InvalidArgument, never an exception or a crash; an accepted report
// written back with ReportToJson parses again to the same processes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "report/report_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto report = memfleet::report::ReportFromJson(text);
  if (!report.ok()) {
    if (report.status().code() != absl::StatusCode::kInvalidArgument) __builtin_trap();
    return 0;
  }
  const std::string again_text = memfleet::report::ReportToJson(*report, /*indent=*/-1);
  const auto again = memfleet::report::ReportFromJson(again_text);
  if (!again.ok() || again->processes.size() != report->processes.size() || again->platform != report->platform) {
    __builtin_trap();
  }
  return 0;
}
