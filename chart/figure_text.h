// How charts and pages write figures and times: kB with thousands separators ("1,234,567") and UTC
// times in RFC 3339 ("2026-11-30T08:00:00Z"), so the CLI, its SVG charts and the dashboard read alike.
// Pure.
#ifndef MEMFLEET_CHART_FIGURE_TEXT_H_
#define MEMFLEET_CHART_FIGURE_TEXT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace memfleet::chart {

// How a table, chart or page writes a value that is not known (a null figure, a field a device left
// unset): one spelling everywhere. CSV leaves the cell empty instead, and JSON writes null.
inline constexpr char kNoValue[] = "-";

// Digits grouped by three with ',' ("-1,024"); every long long, including the most negative.
std::string FormatKb(long long kb);

// A count of devices (or samples) with the ones whose value is unknown beside it, never dropped: "3",
// "2 (+1 unknown)". Every aggregate the CLI and the dashboard show says its unknowns this way.
std::string CountWithUnknown(uint64_t known, uint64_t unknown);
// A part of such a count, the unknowns beside it as CountWithUnknown writes them: "2 of 3",
// "2 of 3 (+1 unknown)" (the devices over a budget of those checked).
std::string PartOfCountWithUnknown(uint64_t part, uint64_t known, uint64_t unknown);

// How a table or page writes when a device's latest capture was taken, when it has none: a fact, not an
// unknown value (kNoValue), in one word everywhere.
inline constexpr char kNoCapture[] = "never";

// YYYY-MM-DDTHH:MM:SSZ; InvalidArgument outside years 0000..9999 (the format has four year digits).
absl::StatusOr<std::string> FormatUtc(int64_t unix_s);

}  // namespace memfleet::chart

#endif  // MEMFLEET_CHART_FIGURE_TEXT_H_
