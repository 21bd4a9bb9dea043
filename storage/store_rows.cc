#include "storage/store_rows.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/process_block.h"
#include "storage/report_codec.h"
#include "storage/timestamp.h"

namespace memfleet::storage {
namespace {

struct MetricColumn {
  std::string_view metric;
  const char* column;
};

constexpr MetricColumn kProcessMetricColumns[] = {
    {"total_kb", "total_kb"},
    {"pss_kb", "pss_kb"},
    {"swap_pss_kb", "swap_pss_kb"},
    {"gfxdev_kb", "gfxdev_kb"},
    {"gl_kb", "gl_kb"},
    {"dma_kb", "dma_kb"},
    {"native_graphics_kb", "native_graphics_kb"},
    {"non_graphics_kb", "non_graphics_kb"},
    {"graphics_dma_kb", "graphics_dma_kb"},
};

constexpr MetricColumn kDeviceMetricColumns[] = {
    {"ddr_kb", "ddr_kb"},
    {"mem_total_kb", "mem_total_kb"},
    {"gcma_kb", "gcma_kb"},
    {"static_reserved_kb", "static_reserved_kb"},
    {"kernel_cma_kb", "kernel_cma_kb"},
    {"kernel_kb", "kernel_kb"},
    {"processes_kb", "processes_kb"},
    {"total_kb", "total_kb"},
};

template <size_t N>
absl::StatusOr<const char*> LookUpColumn(const MetricColumn (&table)[N], const std::string& metric, const char* kind) {
  for (const MetricColumn& m : table) {
    if (m.metric == metric) return m.column;
  }
  std::string allowed;
  for (const MetricColumn& m : table) {
    if (!allowed.empty()) allowed += ", ";
    allowed.append(m.metric.data(), m.metric.size());
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown ", kind, " metric \"", metric.substr(0, 64), "\"; expected one of: ", allowed));
}

absl::Status TooLarge(const char* what) {
  return absl::InvalidArgumentError(absl::StrCat(what, " does not fit a signed 64-bit integer"));
}

}  // namespace

absl::StatusOr<const char*> ProcessColumn(const std::string& metric) {
  return LookUpColumn(kProcessMetricColumns, metric, "process");
}

absl::StatusOr<const char*> DeviceColumn(const std::string& metric) {
  return LookUpColumn(kDeviceMetricColumns, metric, "device");
}

absl::StatusOr<size_t> ProcessFigureIndex(const std::string& metric) {
  MEMFLEET_ASSIGN_OR_RETURN(const char* column, ProcessColumn(metric));
  for (size_t i = 0; i < kProcessFigureCount; ++i) {
    if (std::string_view(kProcessFigureNames[i]) == column) return i;
  }
  return absl::InternalError(absl::StrCat("process figure \"", column, "\" has no place in a process block"));
}

absl::Status RequireNonEmpty(const std::string& value, const char* what) {
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat(what, " must not be empty"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> NormalizeOptionalTimestamp(const std::string& text, const char* what) {
  if (text.empty()) return std::string();
  return NormalizeTimestamp(text, what);
}

absl::StatusOr<CaptureTimes> ValidateCapture(const CaptureRecord& capture) {
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(capture.capture_id, "capture_id"));
  MEMFLEET_RETURN_IF_ERROR(RequireNonEmpty(capture.device_id, "device_id"));
  CaptureTimes t;
  MEMFLEET_ASSIGN_OR_RETURN(t.captured_at, NormalizeTimestamp(capture.captured_at, "captured_at"));
  MEMFLEET_ASSIGN_OR_RETURN(t.received_at, NormalizeOptionalTimestamp(capture.received_at, "received_at"));
  if (capture.raw_bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return TooLarge("raw_bytes");
  for (const auto& [key, value] : capture.labels.agent) {
    if (capture.labels.sweep.count(key) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("label ", key, " is given by both the sweep and the agent; a capture keeps the sweep's"));
    }
  }
  return t;
}

std::vector<StoredLabel> StoredLabelsOf(const LabelSet& labels) {
  std::vector<StoredLabel> rows;
  for (const auto& [key, value] : labels.sweep) rows.push_back({key, value, kSweepLabelSource});
  for (const auto& [key, value] : labels.agent) rows.push_back({key, value, kAgentLabelSource});
  return rows;
}

absl::StatusOr<LabelSet> LabelSetOf(std::vector<StoredLabel> rows) {
  LabelSet labels;
  for (StoredLabel& row : rows) {
    if (row.source == kSweepLabelSource) {
      labels.sweep.emplace(std::move(row.key), std::move(row.value));
    } else if (row.source == kAgentLabelSource) {
      labels.agent.emplace(std::move(row.key), std::move(row.value));
    } else {
      return absl::DataLossError(absl::StrCat("label ", row.key, " has an unknown source \"", row.source, "\""));
    }
  }
  return labels;
}

absl::Status AttachLabels(std::vector<CaptureLabelRow> labels, std::vector<HistoryRow>& rows) {
  std::map<std::string, std::vector<StoredLabel>> by_capture;
  for (CaptureLabelRow& row : labels) by_capture[row.capture_id].push_back(std::move(row.label));
  for (HistoryRow& row : rows) {
    auto found = by_capture.find(row.capture_id);
    if (found == by_capture.end()) continue;
    MEMFLEET_ASSIGN_OR_RETURN(row.labels, LabelSetOf(found->second));
  }
  return absl::OkStatus();
}

void AttachSweeps(std::vector<CaptureSweepRow> sweeps, std::vector<HistoryRow>& rows) {
  if (sweeps.empty()) return;
  std::map<std::string, std::string> by_capture;
  for (CaptureSweepRow& row : sweeps) by_capture[std::move(row.capture_id)] = std::move(row.sweep_id);
  for (HistoryRow& row : rows) {
    auto found = by_capture.find(row.capture_id);
    if (found != by_capture.end()) row.sweep_id = found->second;
  }
}

absl::StatusOr<std::vector<CaptureTimes>> ValidateCaptures(const std::vector<CaptureRecord>& captures) {
  std::vector<CaptureTimes> times;
  times.reserve(captures.size());
  for (const CaptureRecord& capture : captures) {
    absl::StatusOr<CaptureTimes> t = ValidateCapture(capture);
    if (!t.ok()) {
      return absl::Status(t.status().code(),
                          absl::StrCat("capture \"", capture.capture_id, "\": ", t.status().message()));
    }
    times.push_back(*std::move(t));
  }
  return times;
}

absl::Status OtherDevicesCapture(const CaptureRecord& capture, const std::string& owner) {
  return absl::AlreadyExistsError(absl::StrCat("capture id \"", capture.capture_id,
                                               "\" is already stored for device \"", owner, "\", not \"",
                                               capture.device_id, "\""));
}

int64_t DroppedCapturesToStore(uint64_t dropped) {
  return static_cast<int64_t>(std::min<uint64_t>(dropped, std::numeric_limits<uint32_t>::max()));
}

uint64_t NonNegative(int64_t v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

namespace {

absl::StatusOr<std::string> DecompressStoredReport(const CompressedReport& row) {
  if (!row.against_base) return DecompressReportJson(row.report_zstd);
  if (!row.base_zstd.has_value()) {
    return absl::DataLossError("its report is stored against its keyframe's report, which is missing");
  }
  absl::StatusOr<std::string> base_json = DecompressReportJson(*row.base_zstd);
  if (!base_json.ok()) {
    return absl::Status(base_json.status().code(), absl::StrCat("its keyframe's report, which it is stored against: ",
                                                                base_json.status().message()));
  }
  return DecompressReportJsonAgainst(row.report_zstd, *base_json);
}

}  // namespace

absl::StatusOr<StoredReport> DecodeReport(CompressedReport row) {
  absl::StatusOr<std::string> json = DecompressStoredReport(row);
  if (!json.ok()) {
    return absl::Status(json.status().code(),
                        absl::StrCat("capture ", row.report.capture_id, ": ", json.status().message()));
  }
  row.report.report_json = *std::move(json);
  return std::move(row.report);
}

absl::StatusOr<std::optional<StoredReport>> DecodeReports(absl::StatusOr<std::optional<CompressedReport>> row) {
  if (!row.ok()) return row.status();
  if (!row->has_value()) return std::optional<StoredReport>();
  MEMFLEET_ASSIGN_OR_RETURN(StoredReport report, DecodeReport(**std::move(row)));
  return std::optional<StoredReport>(std::move(report));
}

absl::StatusOr<std::vector<StoredReport>> DecodeReports(absl::StatusOr<std::vector<CompressedReport>> rows) {
  if (!rows.ok()) return rows.status();
  std::vector<StoredReport> reports;
  reports.reserve(rows->size());
  for (CompressedReport& row : *rows) {
    MEMFLEET_ASSIGN_OR_RETURN(StoredReport report, DecodeReport(std::move(row)));
    reports.push_back(std::move(report));
  }
  return reports;
}

}  // namespace memfleet::storage
