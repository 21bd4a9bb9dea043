#include "report/report_json.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/bounded_json.h"
#include "nlohmann/json.hpp"
#include "report/json_text_writer.h"

namespace memfleet::report {
namespace {

using nlohmann::json;

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

// Each object's members: its key and how its value is written (`present`: only when it says so). Written
// in sorted key order, as nlohmann's objects keep them: the text is what ReportFromJson's library would
// dump, so a pretty form (indent >= 0) is that library's dump of the compact one.
template <typename T>
struct MemberOf {
  const char* key;
  void (*write)(JsonTextWriter& w, const T& value);
  bool (*present)(const T& value) = nullptr;
};

template <typename T, size_t N>
std::array<MemberOf<T>, N> SortedByKey(std::array<MemberOf<T>, N> members) {
  std::sort(members.begin(), members.end(),
            [](const MemberOf<T>& a, const MemberOf<T>& b) { return std::strcmp(a.key, b.key) < 0; });
  return members;
}

template <typename T, size_t N>
void WriteObject(JsonTextWriter& w, const std::array<MemberOf<T>, N>& members, const T& value) {
  w.BeginObject();
  for (const MemberOf<T>& m : members) {
    if (m.present != nullptr && !m.present(value)) continue;
    w.Key(m.key);
    m.write(w, value);
  }
  w.EndObject();
}

void WriteKbMap(JsonTextWriter& w, const std::map<std::string, int64_t>& kb) {
  w.BeginObject();
  for (const auto& [name, v] : kb) {
    w.Key(name);
    w.Int(v);
  }
  w.EndObject();
}

void WriteHeaps(JsonTextWriter& w, const std::optional<Heaps>& heaps) {
  if (!heaps) return w.Null();
  static const auto kFigures = SortedByKey(std::array<MemberOf<HeapFigures>, 4>{{
      {"pss_kb", [](JsonTextWriter& o, const HeapFigures& h) { o.Int(h.pss_kb); }},
      {"swap_pss_kb", [](JsonTextWriter& o, const HeapFigures& h) { o.Int(h.swap_pss_kb); }},
      {"private_clean_kb", [](JsonTextWriter& o, const HeapFigures& h) { o.Int(h.private_clean_kb); }},
      {"private_dirty_kb", [](JsonTextWriter& o, const HeapFigures& h) { o.Int(h.private_dirty_kb); }},
  }});
  w.BeginObject();
  for (const auto& [name, h] : *heaps) {
    w.Key(name);
    WriteObject(w, kFigures, h);
  }
  w.EndObject();
}

void WriteAppSummary(JsonTextWriter& w, const std::optional<AppSummary>& summary) {
  if (!summary) return w.Null();
  static const std::vector<const AppSummaryField*> kSorted = [] {
    std::vector<const AppSummaryField*> fields;
    for (const AppSummaryField& f : kAppSummaryFields) fields.push_back(&f);
    std::sort(fields.begin(), fields.end(),
              [](const AppSummaryField* a, const AppSummaryField* b) { return std::strcmp(a->name, b->name) < 0; });
    return fields;
  }();
  w.BeginObject();
  for (const AppSummaryField* f : kSorted) {
    w.Key(f->name);
    w.Int((*summary).*f->member);
  }
  w.EndObject();
}

void WriteProcess(JsonTextWriter& w, const ProcessReport& process) {
  using P = ProcessReport;
  static const auto kMembers = SortedByKey(std::array<MemberOf<P>, 18>{{
      {"name", [](JsonTextWriter& o, const P& p) { o.String(p.name); }},
      {"oom_score_adj", [](JsonTextWriter& o, const P& p) { o.OptionalInt(p.oom_score_adj); }},
      {"cached", [](JsonTextWriter& o, const P& p) { o.Bool(p.cached); }},
      {"pss_kb", [](JsonTextWriter& o, const P& p) { o.OptionalInt(p.pss_kb); }},
      {"swap_pss_kb", [](JsonTextWriter& o, const P& p) { o.OptionalInt(p.swap_pss_kb); }},
      {"gfxdev_kb", [](JsonTextWriter& o, const P& p) { o.OptionalInt(p.gfxdev_kb); }},
      {"gl_kb", [](JsonTextWriter& o, const P& p) { o.OptionalInt(p.gl_kb); }},
      {"dma_kb", [](JsonTextWriter& o, const P& p) { o.OptionalInt(p.dma_kb); }},
      {"native_graphics_kb", [](JsonTextWriter& o, const P& p) { o.OptionalInt(p.native_graphics_kb); }},
      {"native_graphics_source", [](JsonTextWriter& o, const P& p) { o.String(p.native_graphics_source); }},
      {"non_graphics_kb", [](JsonTextWriter& o, const P& p) { o.OptionalInt(p.non_graphics_kb); }},
      {"graphics_dma_kb", [](JsonTextWriter& o, const P& p) { o.OptionalInt(p.graphics_dma_kb); }},
      {"total_kb", [](JsonTextWriter& o, const P& p) { o.OptionalInt(p.total_kb); }},
      {"gpu_mem_total_kb", [](JsonTextWriter& o, const P& p) { o.OptionalInt(p.gpu_mem_total_kb); }},
      {"heaps", [](JsonTextWriter& o, const P& p) { WriteHeaps(o, p.heaps); }},
      {"app_summary", [](JsonTextWriter& o, const P& p) { WriteAppSummary(o, p.app_summary); }},
      {"dma_by_exporter_kb",
       [](JsonTextWriter& o, const P& p) { p.dma_by_exporter_kb ? WriteKbMap(o, *p.dma_by_exporter_kb) : o.Null(); }},
      {"tier", [](JsonTextWriter& o, const P& p) { o.String(p.tier); }},
  }});
  WriteObject(w, kMembers, process);
}

void WriteDumpsysProcess(JsonTextWriter& w, const ProcessReport& process) {
  using P = ProcessReport;
  static const auto kMembers = SortedByKey(std::array<MemberOf<P>, 3>{{
      {"gl_mtrack_kb", [](JsonTextWriter& o, const P& p) { o.OptionalInt(p.gl_mtrack_kb); }},
      {"egl_mtrack_kb", [](JsonTextWriter& o, const P& p) { o.OptionalInt(p.egl_mtrack_kb); }},
      {"total_pss_kb", [](JsonTextWriter& o, const P& p) { o.OptionalInt(p.dumpsys_total_pss_kb); }},
  }});
  WriteObject(w, kMembers, process);
}

// The processes by pid, whose keys (decimal text) sort as text: "10" before "9".
void WriteProcesses(JsonTextWriter& w, const Report& r, void (*write)(JsonTextWriter&, const ProcessReport&)) {
  std::vector<std::pair<std::string, const ProcessReport*>> by_key;
  by_key.reserve(r.processes.size());
  for (const auto& [pid, p] : r.processes) by_key.emplace_back(std::to_string(pid), &p);
  std::sort(by_key.begin(), by_key.end());
  w.BeginObject();
  for (const auto& [key, p] : by_key) {
    w.Key(key);
    write(w, *p);
  }
  w.EndObject();
}

void WriteDumpsys(JsonTextWriter& w, const Report& report) {
  using R = Report;
  static const auto kMembers = SortedByKey(std::array<MemberOf<R>, 24>{{
      {"android_version", [](JsonTextWriter& o, const R& r) { o.Int(r.dumpsys.android_version); }},
      {"total_ram_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.total_ram_kb); }},
      {"free_ram_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.free_ram_kb); }},
      {"cached_pss_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.cached_pss_kb); }},
      {"cached_kernel_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.cached_kernel_kb); }},
      {"free_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.free_kb); }},
      {"dmabuf_total_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.dmabuf_total_kb); }},
      {"dmabuf_mapped_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.dmabuf_mapped_kb); }},
      {"dmabuf_unmapped_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.dmabuf_unmapped_kb); }},
      {"gpu_private_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.gpu_private_kb); }},
      {"kernel_cma_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.kernel_cma_kb); }},
      {"used_ram_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.used_ram_kb); }},
      {"used_pss_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.used_pss_kb); }},
      {"kernel_used_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.kernel_used_kb); }},
      {"lost_ram_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.lost_ram_kb); }},
      {"zram_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.zram_kb); }},
      {"total_pss_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.total_pss_kb); }},
      {"total_swap_pss_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.total_swap_pss_kb); }},
      {"memtrack_graphics_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.memtrack_graphics_kb); }},
      {"memtrack_gl_kb", [](JsonTextWriter& o, const R& r) { o.OptionalInt(r.dumpsys.memtrack_gl_kb); }},
      {"identity_holds",
       [](JsonTextWriter& o, const R& r) { r.dumpsys.identity_holds ? o.Bool(*r.dumpsys.identity_holds) : o.Null(); }},
      {"device_text", [](JsonTextWriter& o, const R& r) { WriteKbMap(o, r.dumpsys.device_text_kb); },
       [](const R& r) { return !r.dumpsys.device_text_kb.empty(); }},
      {"difference_kb", [](JsonTextWriter& o, const R& r) { WriteKbMap(o, r.dumpsys.difference_kb); },
       [](const R& r) { return !r.dumpsys.device_text_kb.empty(); }},
      {"processes", [](JsonTextWriter& o, const R& r) { WriteProcesses(o, r, WriteDumpsysProcess); }},
  }});
  WriteObject(w, kMembers, report);
}

void WriteDevice(JsonTextWriter& w, const DeviceReport& device) {
  using D = DeviceReport;
  static const auto kMembers = SortedByKey(std::array<MemberOf<D>, 11>{{
      {"ddr_kb", [](JsonTextWriter& o, const D& d) { o.OptionalInt(d.ddr_kb); }},
      {"ddr_estimated", [](JsonTextWriter& o, const D& d) { o.Bool(d.ddr_estimated); }},
      {"mem_total_kb", [](JsonTextWriter& o, const D& d) { o.OptionalInt(d.mem_total_kb); }},
      {"gcma_kb", [](JsonTextWriter& o, const D& d) { o.OptionalInt(d.gcma_kb); }},
      {"static_reserved_kb", [](JsonTextWriter& o, const D& d) { o.OptionalInt(d.static_reserved_kb); }},
      {"kernel_cma_kb", [](JsonTextWriter& o, const D& d) { o.OptionalInt(d.kernel_cma_kb); }},
      {"kernel_kb", [](JsonTextWriter& o, const D& d) { o.OptionalInt(d.kernel_kb); }},
      {"processes_kb", [](JsonTextWriter& o, const D& d) { o.OptionalInt(d.processes_kb); }},
      {"total_kb", [](JsonTextWriter& o, const D& d) { o.OptionalInt(d.total_kb); }},
      {"gpu_mem_global_kb", [](JsonTextWriter& o, const D& d) { o.OptionalInt(d.gpu_mem_global_kb); }},
      {"tier", [](JsonTextWriter& o, const D& d) { o.String(d.tier); }},
  }});
  WriteObject(w, kMembers, device);
}

std::string CompactReportJson(const Report& report) {
  using R = Report;
  static const auto kMembers = SortedByKey(std::array<MemberOf<R>, 9>{{
      {"platform", [](JsonTextWriter& o, const R& r) { o.String(PlatformName(r.platform)); }},
      {"device_id", [](JsonTextWriter& o, const R& r) { o.String(r.device_id); }},
      {"captured_at", [](JsonTextWriter& o, const R& r) { o.String(r.captured_at); }},
      {"page_size", [](JsonTextWriter& o, const R& r) { o.UInt(r.page_size); }},
      {"device", [](JsonTextWriter& o, const R& r) { WriteDevice(o, r.device); }},
      {"processes", [](JsonTextWriter& o, const R& r) { WriteProcesses(o, r, WriteProcess); }},
      {"dumpsys", [](JsonTextWriter& o, const R& r) { WriteDumpsys(o, r); }},
      {"warnings",
       [](JsonTextWriter& o, const R& r) {
         o.BeginArray();
         for (const std::string& warning : r.warnings) o.String(warning);
         o.EndArray();
       }},
      {"sources",
       [](JsonTextWriter& o, const R& r) {
         o.BeginObject();
         for (const auto& [figure, source] : r.sources) {
           o.Key(figure);
           o.String(source);
         }
         o.EndObject();
       }},
  }});
  std::string out;
  out.reserve(1024 + 512 * report.processes.size());
  JsonTextWriter w(out);
  WriteObject(w, kMembers, report);
  return out;
}

}  // namespace

// The compact text is written directly (a document of a report's thousands of members cost more than
// the engine that computed them); a pretty one is the JSON library's rendering of it.
std::string ReportToJson(const Report& r, int indent) {
  std::string compact = CompactReportJson(r);
  if (indent < 0) return compact;
  const json parsed = json::parse(compact, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? compact : parsed.dump(indent, ' ', false, json::error_handler_t::replace);
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
