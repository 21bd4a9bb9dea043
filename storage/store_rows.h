// What every Store backend (sqlite_store.cc, postgres/pg_store.cc) does the same way: the metric-name ->
// column whitelists, the checks a record passes before it is written, the column lists and readers of
// device, token and report rows, and the decompression of stored reports. For those backends only.
//
// The readers are templates over a result row with the accessors of sqlite_db.h's Statement
// (ColumnText, ColumnInt64, ColumnOptionalInt64, ColumnIsNull, ColumnBlob, ColumnCount), so both
// backends read a row into the same record the same way.
#ifndef MEMFLEET_STORAGE_STORE_ROWS_H_
#define MEMFLEET_STORAGE_STORE_ROWS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/capture_store.h"
#include "storage/records.h"
#include "storage/token_store.h"

namespace memfleet::storage {

// The column of a process (or device) figure; InvalidArgument naming the allowed ones for anything else.
// SQL is only ever built from a column returned here, never from the caller's string.
absl::StatusOr<const char*> ProcessColumn(const std::string& metric);
absl::StatusOr<const char*> DeviceColumn(const std::string& metric);
// The index of a process figure in a process block (process_block.h kProcessFigureNames); InvalidArgument
// naming the allowed ones for anything else.
absl::StatusOr<size_t> ProcessFigureIndex(const std::string& metric);

absl::Status RequireNonEmpty(const std::string& value, const char* what);
// "" stays "" (unknown / not yet); anything else must be a valid time (NormalizeTimestamp).
absl::StatusOr<std::string> NormalizeOptionalTimestamp(const std::string& text, const char* what);

// A capture's times in canonical form, once ValidateCapture accepted the record.
struct CaptureTimes {
  std::string captured_at;
  std::string received_at;
};
absl::StatusOr<CaptureTimes> ValidateCapture(const CaptureRecord& capture);
// ValidateCapture of each, in order; the first refused names its capture (a batch is stored whole or not).
absl::StatusOr<std::vector<CaptureTimes>> ValidateCaptures(const std::vector<CaptureRecord>& captures);
// The same capture id stored for another device: never a duplicate (a duplicate is acked and the agent
// deletes its copy, so one device's id must not stand for another device's capture).
absl::Status OtherDevicesCapture(const CaptureRecord& capture, const std::string& owner);
// dropped_captures as stored: clamped so that no number of (bogus) reports can overflow the SQL sum.
int64_t DroppedCapturesToStore(uint64_t dropped);
uint64_t NonNegative(int64_t v);

// The devices columns of table alias d, in ReadDevice's order.
inline constexpr char kDeviceColumnsOfD[] =
    "d.device_id, d.model, d.soc, d.build_fingerprint, d.kernel, d.agent_version, d.page_size, d.platform, "
    "d.last_seen_at, d.dropped_captures, d.clock_skew_s, d.manufacturer, d.build_type, d.abi, d.android_sdk, "
    "d.access, d.selinux, d.retired_at, d.tier, d.agent_tier";
inline constexpr int kDeviceColumnCount = 20;

template <typename Row>
DeviceRecord ReadDevice(const Row& row, int first) {
  DeviceRecord d;
  d.device_id = row.ColumnText(first);
  d.model = row.ColumnText(first + 1);
  d.soc = row.ColumnText(first + 2);
  d.build_fingerprint = row.ColumnText(first + 3);
  d.kernel = row.ColumnText(first + 4);
  d.agent_version = row.ColumnText(first + 5);
  const int64_t page_size = row.ColumnInt64(first + 6);
  d.page_size =
      page_size >= 0 && page_size <= std::numeric_limits<uint32_t>::max() ? static_cast<uint32_t>(page_size) : 0;
  d.platform = row.ColumnText(first + 7);
  d.last_seen_at = row.ColumnText(first + 8);
  d.dropped_captures = NonNegative(row.ColumnInt64(first + 9));
  d.clock_skew_s = row.ColumnOptionalInt64(first + 10);
  d.manufacturer = row.ColumnText(first + 11);
  d.build_type = row.ColumnText(first + 12);
  d.abi = row.ColumnText(first + 13);
  d.android_sdk = row.ColumnText(first + 14);
  d.access = row.ColumnText(first + 15);
  d.selinux = row.ColumnText(first + 16);
  d.retired_at = row.ColumnText(first + 17);
  d.tier = row.ColumnText(first + 18);  // NULL: unknown
  d.agent_tier = row.ColumnText(first + 19);
  return d;
}

// name, kind, device_id, sha256, created_at, revoked_at.
template <typename Row>
TokenRecord ReadToken(const Row& row) {
  TokenRecord t;
  t.name = row.ColumnText(0);
  t.kind = row.ColumnText(1);
  t.device_id = row.ColumnText(2);
  t.sha256_hex = row.ColumnText(3);
  t.created_at = row.ColumnText(4);
  t.revoked_at = row.ColumnText(5);
  return t;
}

// capture_id, device_id, captured_at, raw_codec, raw_blob, raw_base (NULL reads as "": a whole capture).
template <typename Row>
CaptureStore::RawCapture ReadRawCapture(const Row& row) {
  CaptureStore::RawCapture raw;
  raw.capture_id = row.ColumnText(0);
  raw.device_id = row.ColumnText(1);
  raw.captured_at = row.ColumnText(2);
  raw.raw_codec = row.ColumnText(3);
  raw.raw_blob = row.ColumnBlob(4);
  raw.raw_base = row.ColumnText(5);
  return raw;
}

// A report row as read, its JSON still compressed (report_codec.h): decompressed by DecodeReports once the
// query is done, so that a corrupt one is an error of the query rather than a row.
struct CompressedReport {
  StoredReport report;  // report_json empty
  std::string report_zstd;
  // A report stored against its keyframe's report (SQLite, schema version 16): that report's frame, which
  // is decompressed first; nullopt when the base is named but gone (DecodeReport's DataLoss).
  bool against_base = false;
  std::optional<std::string> base_zstd;
};

// capture_id, device_id, captured_at, report_zstd[, build_fingerprint (or NULL)[, base_no (NULL: a frame
// of its own), the base's report_zstd[, tier (NULL: unknown)[, sweep_id (NULL or '': periodic)]]]].
template <typename Row>
CompressedReport ReadStoredReport(const Row& row) {
  CompressedReport r;
  r.report.capture_id = row.ColumnText(0);
  r.report.device_id = row.ColumnText(1);
  r.report.captured_at = row.ColumnText(2);
  r.report_zstd = row.ColumnBlob(3);
  if (row.ColumnCount() > 4 && !row.ColumnIsNull(4)) r.report.build_fingerprint = row.ColumnText(4);
  if (row.ColumnCount() > 6 && !row.ColumnIsNull(5)) {
    r.against_base = true;
    if (!row.ColumnIsNull(6)) r.base_zstd = row.ColumnBlob(6);
  }
  if (row.ColumnCount() > 7 && !row.ColumnIsNull(7)) r.report.tier = row.ColumnText(7);
  if (row.ColumnCount() > 8 && !row.ColumnIsNull(8)) r.report.sweep_id = row.ColumnText(8);
  return r;
}

// One row of capture_labels: a label and its source as stored (kSweepLabelSource, kAgentLabelSource).
struct StoredLabel {
  std::string key;
  std::string value;
  std::string source;
};
// A LabelSet as rows, the sweep's first: what a backend inserts with a capture, or binds for a query.
std::vector<StoredLabel> StoredLabelsOf(const LabelSet& labels);
// Rows read back into a LabelSet; DataLoss naming a source that is neither (a database edited by hand).
absl::StatusOr<LabelSet> LabelSetOf(std::vector<StoredLabel> rows);
// A label of one capture of a device's history, as the backends read them for DeviceHistory: a row of
// capture_id, key, value, source.
struct CaptureLabelRow {
  std::string capture_id;
  StoredLabel label;
};
template <typename Row>
CaptureLabelRow ReadCaptureLabelRow(const Row& row) {
  return CaptureLabelRow{row.ColumnText(0), {row.ColumnText(1), row.ColumnText(2), row.ColumnText(3)}};
}
// Each history row gets the labels of its capture (a label of a capture not among the rows is dropped);
// DataLoss as LabelSetOf.
absl::Status AttachLabels(std::vector<CaptureLabelRow> labels, std::vector<HistoryRow>& rows);
// A sweep's capture of a device's history: its capture id and the sweep's.
struct CaptureSweepRow {
  std::string capture_id;
  std::string sweep_id;
};
// Each history row whose capture is among `sweeps` gets that sweep's id (a row not among them stays
// periodic: "").
void AttachSweeps(std::vector<CaptureSweepRow> sweeps, std::vector<HistoryRow>& rows);

absl::StatusOr<StoredReport> DecodeReport(CompressedReport row);
absl::StatusOr<std::optional<StoredReport>> DecodeReports(absl::StatusOr<std::optional<CompressedReport>> row);
absl::StatusOr<std::vector<StoredReport>> DecodeReports(absl::StatusOr<std::vector<CompressedReport>> rows);

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_STORE_ROWS_H_
