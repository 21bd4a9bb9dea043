#include "server/http/metrics/fleet_metrics.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "server/http/metrics/exposition.h"

namespace memfleet::metrics {
namespace {

constexpr int64_t kBytesPerKb = 1024;

constexpr char kDeviceMemory[] = "memfleet_device_memory_bytes";
constexpr char kDeviceTotal[] = "memfleet_device_total_bytes";
constexpr char kDeviceKernelCma[] = "memfleet_device_kernel_cma_bytes";
constexpr char kDeviceGcma[] = "memfleet_device_gcma_bytes";
constexpr char kDeviceUp[] = "memfleet_device_up";
constexpr char kLastCapture[] = "memfleet_device_last_capture_timestamp_seconds";
constexpr char kDropped[] = "memfleet_device_dropped_captures_total";
constexpr char kDeviceTier[] = "memfleet_device_tier";
constexpr char kProcessMemory[] = "memfleet_process_memory_bytes";
constexpr char kProcessAppSummary[] = "memfleet_process_app_summary_bytes";
constexpr char kStored[] = "memfleet_captures_stored_total";
constexpr char kDuplicate[] = "memfleet_captures_duplicate_total";
constexpr char kRejected[] = "memfleet_captures_rejected_total";
constexpr char kLatency[] = "memfleet_ingest_latency_seconds";
constexpr char kAgents[] = "memfleet_agents_connected";
constexpr char kSweepsStarted[] = "memfleet_sweeps_started_total";
constexpr char kSweepsRunning[] = "memfleet_sweeps_running";
constexpr char kInflight[] = "memfleet_ingest_inflight_bytes";
constexpr char kInflightCapacity[] = "memfleet_ingest_inflight_capacity_bytes";
constexpr char kWaiting[] = "memfleet_ingest_streams_waiting";
constexpr char kCommits[] = "memfleet_ingest_commits_total";
constexpr char kUnreadable[] = "memfleet_unreadable_reports";

std::string_view PlatformOf(const DeviceMetricsRow& d) {
  return d.figures.has_value() ? std::string_view(d.figures->platform) : std::string_view(d.platform);
}

Labels DeviceLabels(const DeviceMetricsRow& d) {
  return {{"device_id", d.device_id}, {"model", d.model}, {"platform", PlatformOf(d)}, {"build", d.build}};
}

void KbSample(ExpositionWriter& out, std::string_view name, const Labels& labels, const report::Kb& kb) {
  if (!kb.has_value()) return;  // null: no series, never 0
  out.Sample(name, labels, *kb * kBytesPerKb);
}

void KbSample(ExpositionWriter& out, std::string_view name, Labels labels, std::string_view part,
              const report::Kb& kb) {
  labels.emplace_back("part", part);
  KbSample(out, name, labels, kb);
}

// The parts of a device's total (docs/accounting.md section 3: total_kb = static_reserved_kb + kernel_kb +
// processes_kb). They are the only values of memfleet_device_memory_bytes' `part`, so that summing the
// metric by device gives the total: no part may overlap another or be the total itself.
struct DevicePart {
  std::string_view label;
  report::Kb DeviceFigures::*kb;
};
constexpr DevicePart kTotalParts[] = {{"static_reserved", &DeviceFigures::static_reserved_kb},
                                      {"kernel", &DeviceFigures::kernel_kb},
                                      {"processes", &DeviceFigures::processes_kb}};

void DeviceMemory(ExpositionWriter& out, const std::vector<DeviceMetricsRow>& devices) {
  out.Family(kDeviceMemory, "gauge",
             "Memory of the device by part (static_reserved, kernel, processes), bytes, from its latest report "
             "(docs/accounting.md). The parts add up to memfleet_device_total_bytes. A figure the capture could "
             "not see has no series, and the device then has no total.");
  for (const DeviceMetricsRow& d : devices) {
    if (!d.figures.has_value()) continue;
    const Labels labels = DeviceLabels(d);
    for (const DevicePart& part : kTotalParts) {
      KbSample(out, kDeviceMemory, labels, part.label, (*d.figures).*part.kb);
    }
  }
}

// One family of a figure per device, from its latest report.
void DeviceFigure(ExpositionWriter& out, const std::vector<DeviceMetricsRow>& devices, std::string_view name,
                  std::string_view help, report::Kb DeviceFigures::*kb) {
  out.Family(name, "gauge", help);
  for (const DeviceMetricsRow& d : devices) {
    if (d.figures.has_value()) KbSample(out, name, DeviceLabels(d), (*d.figures).*kb);
  }
}

void DeviceSeries(ExpositionWriter& out, const std::vector<DeviceMetricsRow>& devices) {
  DeviceMemory(out, devices);
  DeviceFigure(out, devices, kDeviceTotal,
               "The device's memory footprint, bytes, from its latest report: static_reserved + kernel + processes "
               "(docs/accounting.md). Absent when one of them is null.",
               &DeviceFigures::total_kb);
  DeviceFigure(out, devices, kDeviceKernelCma,
               "CMA pages drivers hold, bytes, from the device's latest report. Already inside "
               "memfleet_device_memory_bytes{part=\"kernel\"}: never add it to the parts.",
               &DeviceFigures::kernel_cma_kb);
  DeviceFigure(out, devices, kDeviceGcma,
               "Size of the device's GCMA regions, bytes, from its latest report: outside MemTotal and left out of "
               "static_reserved; the pages drivers hold in them are in kernel_cma. Not a part of the total.",
               &DeviceFigures::gcma_kb);
}

void DeviceState(ExpositionWriter& out, const std::vector<DeviceMetricsRow>& devices) {
  out.Family(kDeviceUp, "gauge", "1 while the device's agent is connected to this server, else 0.");
  for (const DeviceMetricsRow& d : devices) out.Sample(kDeviceUp, DeviceLabels(d), int64_t{d.up ? 1 : 0});
  out.Family(kLastCapture, "gauge", "When the device's latest stored capture was taken, Unix seconds.");
  for (const DeviceMetricsRow& d : devices) {
    if (d.last_capture_unix_s.has_value()) out.Sample(kLastCapture, DeviceLabels(d), *d.last_capture_unix_s);
  }
  out.Family(kDropped, "counter", "Captures the device's agent dropped unsent from its full spool.");
  for (const DeviceMetricsRow& d : devices) {
    out.Sample(kDropped, DeviceLabels(d), static_cast<int64_t>(d.dropped_captures));
  }
}

// An info series, so the figures' series keep their labels: a query joins it on device_id to split or
// filter by tier (docs/metrics.md).
void DeviceTier(ExpositionWriter& out, const std::vector<DeviceMetricsRow>& devices) {
  out.Family(kDeviceTier, "gauge",
             "1, with the tier of the figures of the device's latest report in `tier`: kernel, or dumpsys (the "
             "phone's own dumpsys meminfo, vendor memtrack included; docs/accounting.md section 9). Absent while "
             "unknown.");
  for (const DeviceMetricsRow& d : devices) {
    if (d.tier.empty()) continue;
    Labels labels = DeviceLabels(d);
    labels.emplace_back("tier", d.tier);
    out.Sample(kDeviceTier, labels, int64_t{1});
  }
}

void ProcessMemory(ExpositionWriter& out, const std::vector<DeviceMetricsRow>& devices) {
  out.Family(kProcessMemory, "gauge",
             "Memory of the device's biggest processes by part (total, gl, dma, native_graphics, non_graphics), "
             "bytes, from its latest report; processes of one name are summed (--metrics-top-processes).");
  for (const DeviceMetricsRow& d : devices) {
    if (!d.figures.has_value()) continue;
    for (const ProcessFigures& p : d.figures->top_processes) {
      const Labels labels = {{"device_id", d.device_id}, {"process", p.name}};
      KbSample(out, kProcessMemory, labels, "total", p.total_kb);
      KbSample(out, kProcessMemory, labels, "gl", p.gl_kb);
      KbSample(out, kProcessMemory, labels, "dma", p.dma_kb);
      KbSample(out, kProcessMemory, labels, "native_graphics", p.native_graphics_kb);
      KbSample(out, kProcessMemory, labels, "non_graphics", p.non_graphics_kb);
    }
  }
}

// The App Summary fields as label values: their JSON names without the unit ("native_heap").
std::string SummaryLabel(const report::AppSummaryField& f) {
  std::string_view name = f.name;
  if (name.size() > 3 && name.substr(name.size() - 3) == "_kb") name.remove_suffix(3);
  return std::string(name);
}

void ProcessAppSummary(ExpositionWriter& out, const std::vector<DeviceMetricsRow>& devices) {
  out.Family(kProcessAppSummary, "gauge",
             "The App Summary of the device's biggest processes (java_heap, native_heap, code, stack, graphics, "
             "private_other, system, and the total_pss and total_swap_pss they add up to), bytes, from its latest "
             "report; dumpsys' App Summary without memtrack (docs/accounting.md section 8). Only processes "
             "captured with full smaps; --metrics-app-summary.");
  for (const DeviceMetricsRow& d : devices) {
    if (!d.figures.has_value()) continue;
    for (const ProcessFigures& p : d.figures->top_processes) {
      if (!p.app_summary.has_value()) continue;
      const Labels labels = {{"device_id", d.device_id}, {"process", p.name}};
      for (const report::AppSummaryField& f : report::kAppSummaryFields) {
        KbSample(out, kProcessAppSummary, labels, SummaryLabel(f), report::Kb((*p.app_summary).*(f.member)));
      }
    }
  }
}

void Counter(ExpositionWriter& out, std::string_view name, std::string_view type, std::string_view help,
             uint64_t value) {
  out.Family(name, type, help);
  out.Sample(name, {}, static_cast<int64_t>(value));
}

void IngestLatency(ExpositionWriter& out, const ServerCountersSnapshot& s) {
  out.Family(kLatency, "histogram",
             "Seconds from a capture's last chunk to the agent's answer (engine, writer queue and commit), "
             "since start.");
  const std::string bucket = absl::StrCat(kLatency, "_bucket");
  for (size_t i = 0; i < kIngestLatencyBucketsS.size(); ++i) {
    const std::string le = FormatSampleValue(kIngestLatencyBucketsS[i], 3);
    out.Sample(bucket, {{"le", le}}, static_cast<int64_t>(s.ingest_latency_cumulative[i]));
  }
  out.Sample(bucket, {{"le", "+Inf"}}, static_cast<int64_t>(s.ingest_latency_count));
  out.Sample(absl::StrCat(kLatency, "_sum"), {}, s.ingest_latency_sum_s);
  out.Sample(absl::StrCat(kLatency, "_count"), {}, static_cast<int64_t>(s.ingest_latency_count));
}

void Server(ExpositionWriter& out, const RenderInput& in) {
  const ServerCountersSnapshot& s = in.server;
  Counter(out, kStored, "counter", "Captures stored since the server started.", s.captures_stored);
  Counter(out, kDuplicate, "counter", "Captures acked as already stored since the server started.",
          s.captures_duplicate);
  Counter(out, kRejected, "counter", "Captures rejected since the server started (any reason).", s.captures_rejected);
  IngestLatency(out, s);
  Counter(out, kAgents, "gauge", "Agent streams connected now.", s.agents_connected);
  Counter(out, kSweepsStarted, "counter", "Sweeps started since the server started.", s.sweeps_started);
  Counter(out, kSweepsRunning, "gauge", "Sweeps running now.", s.sweeps_running);
  Counter(out, kInflight, "gauge", "Memory the captures in flight hold now, as the in-flight budget counts it.",
          s.inflight_bytes);
  Counter(out, kInflightCapacity, "gauge", "The in-flight budget (--max-inflight-mb); 0: unbounded.",
          s.inflight_capacity_bytes);
  Counter(out, kWaiting, "gauge", "Agent streams not read until the in-flight budget has room for their capture.",
          s.streams_waiting_for_room);
  Counter(out, kCommits, "counter",
          "Transactions the capture writer committed (captures stored per commit: group commit).", s.capture_commits);
  Counter(out, kUnreadable, "gauge", "Devices whose latest stored report could not be read at this scrape.",
          in.unreadable_reports);
}

}  // namespace

std::string RenderFleetMetrics(const RenderInput& input) {
  ExpositionWriter out;
  DeviceSeries(out, input.devices);
  DeviceState(out, input.devices);
  DeviceTier(out, input.devices);
  ProcessMemory(out, input.devices);
  if (input.app_summary) ProcessAppSummary(out, input.devices);
  Server(out, input);
  return out.Take();
}

std::vector<std::string> ExportedSeriesNames() {
  return {kDeviceMemory,
          kDeviceTotal,
          kDeviceKernelCma,
          kDeviceGcma,
          kDeviceUp,
          kLastCapture,
          kDropped,
          kDeviceTier,
          kProcessMemory,
          kProcessAppSummary,
          kStored,
          kDuplicate,
          kRejected,
          absl::StrCat(kLatency, "_bucket"),
          absl::StrCat(kLatency, "_sum"),
          absl::StrCat(kLatency, "_count"),
          kAgents,
          kSweepsStarted,
          kSweepsRunning,
          kInflight,
          kInflightCapacity,
          kWaiting,
          kCommits,
          kUnreadable};
}

}  // namespace memfleet::metrics
