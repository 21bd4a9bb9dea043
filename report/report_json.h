// The report's JSON form (docs/capture-format.md, "A report"): the contract that tests, the CLI and the
// stored history share. Field names may be added to, never renamed.
//
//   std::string text = ReportToJson(report, /*indent=*/1);
//   absl::StatusOr<Report> back = ReportFromJson(text);
#ifndef MEMFLEET_REPORT_REPORT_JSON_H_
#define MEMFLEET_REPORT_REPORT_JSON_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "report/report.h"

namespace memfleet::report {

// A report is a few hundred kilobytes even with thousands of processes; the CLI receives at most 64 MiB.
inline constexpr size_t kMaxReportJsonBytes = size_t{64} << 20;

// indent < 0: compact one-line JSON.
std::string ReportToJson(const Report& report, int indent = 1);

// InvalidArgument when the text is not a report object (platform, device, processes), is longer than
// kMaxReportJsonBytes or is nested more than kMaxJsonDepth levels deep.
absl::StatusOr<Report> ReportFromJson(std::string_view text);

}  // namespace memfleet::report

#endif  // MEMFLEET_REPORT_REPORT_JSON_H_
