#include "report/report_json.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/bounded_json.h"
#include "nlohmann/json.hpp"

namespace memfleet::report {
namespace {

using nlohmann::json;

json KbJson(const Kb& v) { return v ? json(*v) : json(nullptr); }

Kb KbFrom(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

// Not json::value(key, false): that throws type_error when the field holds another type (found by
// tests/fuzz/report_json_fuzzer). A wrong type reads as absent, like a non-integer figure.
bool BoolFrom(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

std::string StringFrom(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

json HeapsJson(const std::optional<Heaps>& heaps) {
  if (!heaps) return nullptr;
  json out = json::object();
  for (const auto& [name, h] : *heaps) {
    out[name] = {{"pss_kb", h.pss_kb},
                 {"swap_pss_kb", h.swap_pss_kb},
                 {"private_clean_kb", h.private_clean_kb},
                 {"private_dirty_kb", h.private_dirty_kb}};
  }
  return out;
}

json AppSummaryJson(const std::optional<AppSummary>& summary) {
  if (!summary) return nullptr;
  json out = json::object();
  for (const AppSummaryField& f : kAppSummaryFields) out[f.name] = (*summary).*f.member;
  return out;
}

json KbMapJson(const std::optional<std::map<std::string, int64_t>>& kb) { return kb ? json(*kb) : json(nullptr); }

// A heap object; wrong-typed or missing figures read as 0, a non-object as no heaps.
std::optional<Heaps> HeapsFrom(const json& p) {
  auto it = p.find("heaps");
  if (it == p.end() || !it->is_object()) return std::nullopt;
  Heaps heaps;
  for (auto h = it->begin(); h != it->end(); ++h) {
    if (!h.value().is_object()) continue;
    HeapFigures f;
    f.pss_kb = KbFrom(h.value(), "pss_kb").value_or(0);
    f.swap_pss_kb = KbFrom(h.value(), "swap_pss_kb").value_or(0);
    f.private_clean_kb = KbFrom(h.value(), "private_clean_kb").value_or(0);
    f.private_dirty_kb = KbFrom(h.value(), "private_dirty_kb").value_or(0);
    heaps[h.key()] = f;
  }
  return heaps;
}

// The summary only when every field is an integer: a partial one would be a silent 0.
std::optional<AppSummary> AppSummaryFrom(const json& p) {
  auto it = p.find("app_summary");
  if (it == p.end() || !it->is_object()) return std::nullopt;
  AppSummary s;
  for (const AppSummaryField& f : kAppSummaryFields) {
    Kb v = KbFrom(*it, f.name);
    if (!v) return std::nullopt;
    s.*f.member = *v;
  }
  return s;
}

std::optional<std::map<std::string, int64_t>> KbMapFrom(const json& p, const char* key) {
  auto it = p.find(key);
  if (it == p.end() || !it->is_object()) return std::nullopt;
  std::map<std::string, int64_t> out;
  for (auto e = it->begin(); e != it->end(); ++e) {
    if (e.value().is_number_integer()) out[e.key()] = e.value().get<int64_t>();
  }
  return out;
}

// A report from before tiers (and any name but the two) is of the kernel tier.
std::string TierFrom(const json& obj) { return StringFrom(obj, "tier") == kTierDumpsys ? kTierDumpsys : kTierKernel; }

json DumpsysJson(const Report& r) {
  const DumpsysView& v = r.dumpsys;
  json d = {
      {"android_version", v.android_version},
      {"total_ram_kb", KbJson(v.total_ram_kb)},
      {"free_ram_kb", KbJson(v.free_ram_kb)},
      {"cached_pss_kb", KbJson(v.cached_pss_kb)},
      {"cached_kernel_kb", KbJson(v.cached_kernel_kb)},
      {"free_kb", KbJson(v.free_kb)},
      {"dmabuf_total_kb", KbJson(v.dmabuf_total_kb)},
      {"dmabuf_mapped_kb", KbJson(v.dmabuf_mapped_kb)},
      {"dmabuf_unmapped_kb", KbJson(v.dmabuf_unmapped_kb)},
      {"gpu_private_kb", KbJson(v.gpu_private_kb)},
      {"kernel_cma_kb", KbJson(v.kernel_cma_kb)},
      {"used_ram_kb", KbJson(v.used_ram_kb)},
      {"used_pss_kb", KbJson(v.used_pss_kb)},
      {"kernel_used_kb", KbJson(v.kernel_used_kb)},
      {"lost_ram_kb", KbJson(v.lost_ram_kb)},
      {"zram_kb", KbJson(v.zram_kb)},
      {"total_pss_kb", KbJson(v.total_pss_kb)},
      {"total_swap_pss_kb", KbJson(v.total_swap_pss_kb)},
      {"memtrack_graphics_kb", KbJson(v.memtrack_graphics_kb)},
      {"memtrack_gl_kb", KbJson(v.memtrack_gl_kb)},
      {"identity_holds", v.identity_holds ? json(*v.identity_holds) : json(nullptr)},
  };
  if (!v.device_text_kb.empty()) {
    d["device_text"] = v.device_text_kb;
    d["difference_kb"] = v.difference_kb;
  }
  json procs = json::object();
  for (const auto& [pid, p] : r.processes) {
    procs[std::to_string(pid)] = {{"gl_mtrack_kb", KbJson(p.gl_mtrack_kb)},
                                  {"egl_mtrack_kb", KbJson(p.egl_mtrack_kb)},
                                  {"total_pss_kb", KbJson(p.dumpsys_total_pss_kb)}};
  }
  d["processes"] = std::move(procs);
  return d;
}

}  // namespace

std::string ReportToJson(const Report& r, int indent) {
  json out;
  out["platform"] = PlatformName(r.platform);
  out["device_id"] = r.device_id;
  out["captured_at"] = r.captured_at;
  out["page_size"] = r.page_size;
  const DeviceReport& d = r.device;
  out["device"] = {
      {"ddr_kb", KbJson(d.ddr_kb)},
      {"ddr_estimated", d.ddr_estimated},
      {"mem_total_kb", KbJson(d.mem_total_kb)},
      {"gcma_kb", KbJson(d.gcma_kb)},
      {"static_reserved_kb", KbJson(d.static_reserved_kb)},
      {"kernel_cma_kb", KbJson(d.kernel_cma_kb)},
      {"kernel_kb", KbJson(d.kernel_kb)},
      {"processes_kb", KbJson(d.processes_kb)},
      {"total_kb", KbJson(d.total_kb)},
      {"gpu_mem_global_kb", KbJson(d.gpu_mem_global_kb)},
      {"tier", d.tier},
  };
  json procs = json::object();
  for (const auto& [pid, p] : r.processes) {
    procs[std::to_string(pid)] = {
        {"name", p.name},
        {"oom_score_adj", p.oom_score_adj ? json(*p.oom_score_adj) : json(nullptr)},
        {"cached", p.cached},
        {"pss_kb", KbJson(p.pss_kb)},
        {"swap_pss_kb", KbJson(p.swap_pss_kb)},
        {"gfxdev_kb", KbJson(p.gfxdev_kb)},
        {"gl_kb", KbJson(p.gl_kb)},
        {"dma_kb", KbJson(p.dma_kb)},
        {"native_graphics_kb", KbJson(p.native_graphics_kb)},
        {"native_graphics_source", p.native_graphics_source},
        {"non_graphics_kb", KbJson(p.non_graphics_kb)},
        {"graphics_dma_kb", KbJson(p.graphics_dma_kb)},
        {"total_kb", KbJson(p.total_kb)},
        {"gpu_mem_total_kb", KbJson(p.gpu_mem_total_kb)},
        {"heaps", HeapsJson(p.heaps)},
        {"app_summary", AppSummaryJson(p.app_summary)},
        {"dma_by_exporter_kb", KbMapJson(p.dma_by_exporter_kb)},
        {"tier", p.tier},
    };
  }
  out["processes"] = std::move(procs);
  out["dumpsys"] = DumpsysJson(r);
  out["warnings"] = r.warnings;
  out["sources"] = r.sources;
  // Device text may hold any bytes (a process name from cmdline): replace invalid UTF-8, never throw.
  return out.dump(indent, ' ', false, json::error_handler_t::replace);
}

absl::StatusOr<Report> ReportFromJson(std::string_view text) {
  // The text comes from a server (or a file): bounded, so that no recursive walk of it can exhaust the stack.
  absl::StatusOr<json> parsed = ParseBoundedJson(text, JsonBounds{kMaxReportJsonBytes, kMaxJsonDepth});
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("not a memfleet report: ", parsed.status().message()));
  }
  json& in = *parsed;
  if (!in.is_object() || !in.contains("platform") || !in["device"].is_object() || !in["processes"].is_object()) {
    return absl::InvalidArgumentError("not a memfleet report: expected an object with platform, device, processes");
  }
  Report r;
  std::string platform = StringFrom(in, "platform");
  if (platform == "qcom")
    r.platform = Platform::kQcom;
  else if (platform == "mtk")
    r.platform = Platform::kMtk;
  else if (platform == "xring")
    r.platform = Platform::kXring;
  else if (platform == "mali")
    r.platform = Platform::kMali;
  else if (platform == "generic")
    r.platform = Platform::kGeneric;
  else
    return absl::InvalidArgumentError(absl::StrCat("unknown platform \"", platform, "\""));
  r.device_id = StringFrom(in, "device_id");
  r.captured_at = StringFrom(in, "captured_at");
  if (in.contains("page_size") && in["page_size"].is_number_unsigned()) r.page_size = in["page_size"].get<uint64_t>();
  const json& d = in["device"];
  r.device.ddr_kb = KbFrom(d, "ddr_kb");
  r.device.ddr_estimated = BoolFrom(d, "ddr_estimated");
  r.device.mem_total_kb = KbFrom(d, "mem_total_kb");
  r.device.gcma_kb = KbFrom(d, "gcma_kb");
  r.device.static_reserved_kb = KbFrom(d, "static_reserved_kb");
  r.device.kernel_cma_kb = KbFrom(d, "kernel_cma_kb");
  r.device.kernel_kb = KbFrom(d, "kernel_kb");
  r.device.processes_kb = KbFrom(d, "processes_kb");
  r.device.total_kb = KbFrom(d, "total_kb");
  r.device.gpu_mem_global_kb = KbFrom(d, "gpu_mem_global_kb");
  r.device.tier = TierFrom(d);
  const json* dumpsys_procs = nullptr;
  if (in.contains("dumpsys") && in["dumpsys"].is_object()) {
    const json& v = in["dumpsys"];
    DumpsysView& dv = r.dumpsys;
    if (v.contains("android_version") && v["android_version"].is_number_integer())
      dv.android_version = v["android_version"].get<int>();
    dv.total_ram_kb = KbFrom(v, "total_ram_kb");
    dv.free_ram_kb = KbFrom(v, "free_ram_kb");
    dv.cached_pss_kb = KbFrom(v, "cached_pss_kb");
    dv.cached_kernel_kb = KbFrom(v, "cached_kernel_kb");
    dv.free_kb = KbFrom(v, "free_kb");
    dv.dmabuf_total_kb = KbFrom(v, "dmabuf_total_kb");
    dv.dmabuf_mapped_kb = KbFrom(v, "dmabuf_mapped_kb");
    dv.dmabuf_unmapped_kb = KbFrom(v, "dmabuf_unmapped_kb");
    dv.gpu_private_kb = KbFrom(v, "gpu_private_kb");
    dv.kernel_cma_kb = KbFrom(v, "kernel_cma_kb");
    dv.used_ram_kb = KbFrom(v, "used_ram_kb");
    dv.used_pss_kb = KbFrom(v, "used_pss_kb");
    dv.kernel_used_kb = KbFrom(v, "kernel_used_kb");
    dv.lost_ram_kb = KbFrom(v, "lost_ram_kb");
    dv.zram_kb = KbFrom(v, "zram_kb");
    dv.total_pss_kb = KbFrom(v, "total_pss_kb");
    dv.total_swap_pss_kb = KbFrom(v, "total_swap_pss_kb");
    dv.memtrack_graphics_kb = KbFrom(v, "memtrack_graphics_kb");
    dv.memtrack_gl_kb = KbFrom(v, "memtrack_gl_kb");
    if (v.contains("identity_holds") && v["identity_holds"].is_boolean())
      dv.identity_holds = v["identity_holds"].get<bool>();
    for (const char* key : {"device_text", "difference_kb"}) {
      if (!v.contains(key) || !v[key].is_object()) continue;
      auto& target = std::string(key) == "device_text" ? dv.device_text_kb : dv.difference_kb;
      for (auto it = v[key].begin(); it != v[key].end(); ++it) {
        if (it.value().is_number_integer()) target[it.key()] = it.value().get<int64_t>();
      }
    }
    if (v.contains("processes") && v["processes"].is_object()) dumpsys_procs = &v["processes"];
  }
  for (auto it = in["processes"].begin(); it != in["processes"].end(); ++it) {
    int pid = 0;
    if (!absl::SimpleAtoi(it.key(), &pid) || !it.value().is_object()) {
      return absl::InvalidArgumentError(absl::StrCat("processes: bad entry \"", it.key(), "\""));
    }
    const json& p = it.value();
    ProcessReport pr;
    pr.pid = pid;
    pr.name = StringFrom(p, "name");
    if (p.contains("oom_score_adj") && p["oom_score_adj"].is_number_integer())
      pr.oom_score_adj = p["oom_score_adj"].get<int>();
    pr.cached = BoolFrom(p, "cached");
    pr.pss_kb = KbFrom(p, "pss_kb");
    pr.swap_pss_kb = KbFrom(p, "swap_pss_kb");
    pr.gfxdev_kb = KbFrom(p, "gfxdev_kb");
    pr.gl_kb = KbFrom(p, "gl_kb");
    pr.dma_kb = KbFrom(p, "dma_kb");
    pr.native_graphics_kb = KbFrom(p, "native_graphics_kb");
    pr.native_graphics_source = StringFrom(p, "native_graphics_source");
    pr.non_graphics_kb = KbFrom(p, "non_graphics_kb");
    pr.graphics_dma_kb = KbFrom(p, "graphics_dma_kb");
    pr.total_kb = KbFrom(p, "total_kb");
    pr.gpu_mem_total_kb = KbFrom(p, "gpu_mem_total_kb");
    pr.heaps = HeapsFrom(p);
    pr.app_summary = AppSummaryFrom(p);
    pr.dma_by_exporter_kb = KbMapFrom(p, "dma_by_exporter_kb");
    pr.tier = TierFrom(p);
    if (dumpsys_procs != nullptr && dumpsys_procs->contains(it.key())) {
      const json& dp = (*dumpsys_procs)[it.key()];
      pr.gl_mtrack_kb = KbFrom(dp, "gl_mtrack_kb");
      pr.egl_mtrack_kb = KbFrom(dp, "egl_mtrack_kb");
      pr.dumpsys_total_pss_kb = KbFrom(dp, "total_pss_kb");
    }
    r.processes.emplace(pid, std::move(pr));
  }
  if (in.contains("warnings") && in["warnings"].is_array()) {
    for (const json& w : in["warnings"]) {
      if (w.is_string()) r.warnings.push_back(w.get<std::string>());
    }
  }
  if (in.contains("sources") && in["sources"].is_object()) {
    for (auto it = in["sources"].begin(); it != in["sources"].end(); ++it) {
      if (it.value().is_string()) r.sources[it.key()] = it.value().get<std::string>();
    }
  }
  return r;
}

}  // namespace memfleet::report
