// The rows the store keeps and answers with for devices, captures and reports — shared by the narrow
// store interfaces (capture_store.h, query_store.h) and their callers.
#ifndef MEMFLEET_STORAGE_RECORDS_H_
#define MEMFLEET_STORAGE_RECORDS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "report/report.h"

namespace memfleet::storage {

// A capture's labels, key -> value (docs/labels.md; checked by the server before they are stored).
using Labels = std::map<std::string, std::string>;

// Labels by where they came from (docs/labels.md, "Where labels come from"). `sweep`: given by the server,
// from the sweep that asked the device for this capture; `agent`: written by the agent into the capture's
// header, which anything holding the device's token can write. On a capture a key is in one of the two
// only (the sweep's value wins). As a query (LabelledCaptures), a capture must carry each `sweep` label as
// a sweep's and each `agent` label as its agent's.
struct LabelSet {
  Labels sweep;
  Labels agent;
  bool empty() const { return sweep.empty() && agent.empty(); }
  bool operator==(const LabelSet& other) const { return sweep == other.sweep && agent == other.agent; }
};

// How a label's source is stored (capture_labels.source).
inline constexpr char kSweepLabelSource[] = "sweep";
inline constexpr char kAgentLabelSource[] = "agent";

struct DeviceRecord {
  std::string device_id;
  std::string model;
  std::string soc;
  std::string build_fingerprint;
  std::string kernel;
  std::string agent_version;
  uint32_t page_size = 0;
  std::string platform;      // from the latest report
  std::string last_seen_at;  // RFC 3339
  // Captures the device's full spool dropped unsent. UpsertDevice adds it to the stored total (an agent
  // reports its drops since the last report); reads give the total.
  uint64_t dropped_captures = 0;
  // The device's clock minus the server's at its latest Hello, in seconds (positive: the device is
  // ahead); nullopt when unknown (an agent that does not send its time).
  std::optional<int64_t> clock_skew_s;
  // From the latest Hello, "" when the agent did not say (a Linux host, an older agent): the phone's
  // manufacturer, build type, ABI, API level, access level ("root" / "shell") and SELinux mode.
  std::string manufacturer;
  std::string build_type;
  std::string abi;
  std::string android_sdk;
  std::string access;
  std::string selinux;
  // When `memfleet devices retire` took the device out of the fleet's views (RFC 3339); "" while it is
  // active. Its history stays; UpsertDevice (its agent's next Hello) makes it active again.
  std::string retired_at;
  // The tier of its latest report's figures (kTierKernel / kTierDumpsys, common/figure_tier.h); "" when
  // unknown: no capture stored, or its latest one stored before the store kept tiers. Kept by the store
  // from the reports (UpsertDevice ignores it).
  std::string tier;
  // The tier its agent said in its latest Hello; "" when it did not say (an older agent).
  std::string agent_tier;

  bool retired() const { return !retired_at.empty(); }
};

struct CaptureRecord {
  std::string capture_id;  // unique; with device_id, the dedup key
  std::string device_id;
  std::string captured_at;  // RFC 3339 UTC
  std::string received_at;  // RFC 3339 UTC
  std::string sweep_id;     // "" when periodic
  std::string raw_codec;    // how raw_blob is encoded, e.g. "zstd+proto" / "gzip+proto"
  std::string raw_blob;     // the compressed raw capture
  // For raw_codec "zstd-delta+proto": the capture id of the keyframe it references (stored before it,
  // same device, a whole capture). "" for a whole capture.
  std::string raw_base;
  uint64_t raw_bytes = 0;         // uncompressed size of the capture's contents
  report::Report report;          // the engine's report of it
  std::string report_json;        // its JSON (ReportToJson), stored verbatim
  std::string build_fingerprint;  // the build it was taken on (capture.json); "" = unknown, stored as NULL
  LabelSet labels;                // stored with the capture (table capture_labels, with their source)
  // The tier to store with it when not its report's (report.device.tier): a copy of a stored capture
  // (memfleet-server migrate) keeps the tier stored with it, "" (unknown, stored as NULL) included.
  std::optional<std::string> stored_tier;
};

struct StoredReport {
  std::string capture_id;
  std::string device_id;
  std::string captured_at;
  std::string report_json;
  // The capture's own build; only LatestReportsPerBuild fills it ("" there: stored before schema 8).
  std::string build_fingerprint;
  // The tier stored with it (kTierKernel / kTierDumpsys); "" when unknown, stored before the store kept
  // tiers. GetReport, GetReportByCapture and the other reads by ReportColumnsOfR fill it.
  std::string tier;
  // The sweep the capture answered, "" when periodic; filled by the same reads as `tier`.
  std::string sweep_id;
};

// A capture carrying every label asked for (QueryStore::LabelledCaptures).
struct LabelledCapture {
  std::string capture_id;
  std::string device_id;
  std::string captured_at;
  std::string sweep_id;           // "" when periodic
  std::string build_fingerprint;  // "" unknown
};

struct DeviceSummaryRow {
  DeviceRecord device;
  uint64_t capture_count = 0;
  std::string last_capture_at;  // "" when none
  std::optional<int64_t> last_total_kb;
};

struct HistoryRow {
  std::string capture_id;
  std::string captured_at;
  int pid = 0;
  std::optional<int64_t> value_kb;
  // What marks the capture, as `memfleet report` heads it (report/capture_marks.h).
  std::string sweep_id;  // "" when periodic
  LabelSet labels;
  // The tier stored with the capture (kTierKernel / kTierDumpsys); "" when unknown (stored before tiers).
  std::string tier;
};

struct FleetValueRow {
  DeviceRecord device;
  std::string capture_id;
  std::string captured_at;
  std::optional<int64_t> value_kb;
};

// How far back retention has thinned a device's history (server/history/retention.h): before `hourly_before` it
// holds at most one capture an hour, before `daily_before` one a day; "" = not thinned (RFC 3339 times).
struct RetentionMarks {
  std::string hourly_before;
  std::string daily_before;
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_RECORDS_H_
