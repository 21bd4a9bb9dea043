#include "accounting/account.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "capture/node_path.h"
#include "accounting/app_summary.h"
#include "accounting/cma_accounting.h"
#include "accounting/android_device.h"
#include "accounting/counted_warnings.h"
#include "accounting/ddr_kb.h"
#include "accounting/dma_by_exporter_kb.h"
#include "accounting/dmabuf_share.h"
#include "accounting/dumpsys_processes.h"
#include "accounting/dumpsys_text.h"
#include "accounting/dumpsys_tier.h"
#include "accounting/dumpsys_view.h"
#include "accounting/fdinfo_parser.h"
#include "accounting/gfxdev_mapping.h"
#include "accounting/gpu_attribution.h"
#include "accounting/gpu_mem_total_kb.h"
#include "accounting/kb_math.h"
#include "accounting/kernel_config.h"
#include "accounting/kernel_kb.h"
#include "accounting/legacy_dmabuf.h"
#include "accounting/meminfo_parser.h"
#include "accounting/model.h"
#include "accounting/native_heap_dump.h"
#include "accounting/platform.h"
#include "accounting/proc_identity.h"
#include "accounting/processes_kb.h"
#include "accounting/smaps_parser.h"
#include "accounting/static_reserved_kb.h"
#include "accounting/sysfs_value.h"
#include "accounting/zram_kb.h"

namespace memfleet::accounting {
namespace {

// What the engine read of one pid directory.
struct ProcessInput {
  int pid = 0;
  std::string dir;
  bool from_rollup = false;
  bool smaps_ok = false;  // smaps (full, at least one VMA) parsed into `smaps`
  SmapsSummary smaps;     // sums and dma-buf mappings; no Vma per mapping (not needed, costly)
  std::vector<Vma> maps;  // from maps, when captured
  std::optional<SmapsRollup> rollup;
  std::string pss_problem;  // why pss is unknown, when it is
  bool unreadable = false;  // smaps/smaps_rollup denied or failed: the dumpsys tier may stand in
  // Legacy kernels' anon_inode:dmabuf mappings, from smaps or maps (whichever shows more).
  LegacyDmaBufMappings legacy_dmabuf;
  std::string legacy_dmabuf_node;
};

// How a process whose smaps vanished (ENOENT, ESRCH) is said: CountExitedProcesses finds these.
constexpr char kExitedMidCapture[] = ": process left out (it exited during the capture)";
// How a process whose smaps was denied is said, and one whose dma-bufs its fdinfo or maps hid:
// CountDeniedProcesses finds these.
constexpr char kDenied[] = ": unreadable (EACCES)";
constexpr char kDmaBufsUnseen[] = ": the dma-bufs it holds cannot be seen; dma_kb null";

std::string Warn(Report& report, std::string message) {
  report.warnings.push_back(message);
  return message;
}

// Decides whether proc/<pid> is a process of the report and reads its memory map.
// Returns false when it is not (kernel thread, exited process).
bool ReadProcessInput(const Capture& capture, int pid, GpuDeviceNaming gpu_naming, ProcessInput& in, Report& report) {
  in.pid = pid;
  in.dir = absl::StrCat("proc/", pid);
  const Node* smaps = capture.Find(in.dir + "/smaps");
  const Node* rollup = capture.Find(in.dir + "/smaps_rollup");
  bool smaps_text = smaps != nullptr && smaps->is_file() && !smaps->content.empty();
  if (smaps_text) {
    absl::StatusOr<SmapsSummary> summary = ParseSmapsSummary(smaps->content, gpu_naming);
    if (summary.ok()) {
      if (summary->vma_count != 0) {
        in.smaps = *std::move(summary);
        in.smaps_ok = true;
      }
    } else {
      in.pss_problem = Warn(report, absl::StrCat(in.dir, "/smaps: ", summary.status().message()));
    }
  }
  if (!in.smaps_ok && rollup != nullptr && rollup->is_file()) {
    absl::StatusOr<SmapsRollup> r = ParseSmapsRollup(rollup->content);
    if (r.ok() && r->has_pss) {
      in.rollup = *r;
      in.from_rollup = true;
      in.pss_problem.clear();
    } else if (!r.ok()) {
      Warn(report, absl::StrCat(in.dir, "/smaps_rollup: ", r.status().message()));
    }
  }
  if (!in.smaps_ok && !in.from_rollup) {
    if (!in.pss_problem.empty()) return true;  // a broken smaps: a process whose figures are unknown
    // Gone (ENOENT, ESRCH): the process exited during the capture. Denied or failed: it is there, with
    // memory the capture cannot see, so it stays with its figures null rather than silently dropped.
    for (const auto& [node, name] : {std::pair{smaps, "/smaps"}, std::pair{rollup, "/smaps_rollup"}}) {
      if (node == nullptr || !node->is_error()) continue;
      if (node->content == "ENOENT" || node->content == "ESRCH") {
        Warn(report, absl::StrCat(in.dir, name, ": unreadable (", node->content, ")", kExitedMidCapture));
        return false;
      }
      in.pss_problem = Warn(report, absl::StrCat(in.dir, name, ": unreadable (", node->content, ")"));
      in.unreadable = true;
      return true;
    }
    return false;
  }
  if (const Node* maps = capture.Find(in.dir + "/maps"); maps != nullptr && maps->is_file()) {
    absl::StatusOr<std::vector<Vma>> m = ParseMaps(maps->content);
    if (m.ok()) {
      in.maps = *std::move(m);
    } else {
      Warn(report, absl::StrCat(in.dir, "/maps: ", m.status().message(), " (its dma-buf mappings are not counted)"));
    }
  }
  in.legacy_dmabuf = CountLegacyDmaBufMappings(in.smaps.legacy_dmabuf_vmas);
  in.legacy_dmabuf_node = in.dir + "/smaps";
  if (LegacyDmaBufMappings from_maps = CountLegacyDmaBufMappings(in.maps); from_maps.count > in.legacy_dmabuf.count) {
    in.legacy_dmabuf = from_maps;
    in.legacy_dmabuf_node = in.dir + "/maps";
  }
  return true;
}

std::string ProcessName(const Capture& capture, const std::string& dir, Report& report) {
  if (const std::string* cmdline = capture.FileContent(dir + "/cmdline")) {
    std::string name = ParseCmdlineName(*cmdline);
    if (!name.empty()) return name;
  }
  if (const std::string* status = capture.FileContent(dir + "/status")) {
    absl::StatusOr<std::string> name = ParseStatusName(*status);
    if (name.ok() && !name->empty()) return *name;
  }
  Warn(report, absl::StrCat(dir, ": neither cmdline nor status names the process"));
  return "";
}

std::optional<int> OomScoreAdj(const Capture& capture, const std::string& dir, Report& report) {
  std::string path = dir + "/oom_score_adj";
  const Node* node = capture.Find(path);
  if (node == nullptr) {
    Warn(report, absl::StrCat(path, ": missing: oom_score_adj null, process not cached"));
    return std::nullopt;
  }
  if (node->is_error()) {
    Warn(report, absl::StrCat(path, ": unreadable (", node->content, "): oom_score_adj null, process not cached"));
    return std::nullopt;
  }
  absl::StatusOr<int> adj = ParseOomScoreAdj(node->content);
  if (!adj.ok()) {
    Warn(report, absl::StrCat(path, ": ", adj.status().message(), ": oom_score_adj null, process not cached"));
    return std::nullopt;
  }
  return *adj;
}

// Registers the dma-buf references of one process: fds (fdinfo with ino: and exp_name:) and mappings.
void AddDmaBufRefs(const Capture& capture, const ProcessInput& in, DmaBufLedger& ledger, Report& report) {
  std::string fd_dir = in.dir + "/fdinfo";
  for (const std::string& fd : capture.Children(fd_dir)) {
    std::string path = absl::StrCat(fd_dir, "/", fd);
    const Node* node = capture.Find(path);
    if (node == nullptr || !node->is_file()) continue;  // racing close (ENOENT/ESRCH) or denied fd
    absl::StatusOr<Fdinfo> f = ParseFdinfo(node->content);
    if (!f.ok()) {
      Warn(report, absl::StrCat(path, ": ", f.status().message()));
      continue;
    }
    if (f->is_dmabuf() && f->ino) ledger.AddFdRef(in.pid, *f->ino, f->size_bytes, *f->exp_name);
  }
  auto add_maps = [&](const std::vector<Vma>& vmas) {
    for (const Vma& v : vmas) {
      if (IsDmaBufMappingName(v.name) && v.end >= v.start) ledger.AddMapRef(in.pid, v.inode, v.end - v.start);
    }
  };
  add_maps(in.smaps.dmabuf_vmas);
  add_maps(in.maps);
}

// native_graphics_kb from cmd/native_heap@<pid>.
void NativeGraphics(const Capture& capture, const GraphicsLibraries& libs, ProcessReport& p, Report& report) {
  std::string path = capture::NativeHeapNode(p.pid);
  std::string key = absl::StrCat("processes.", p.pid, ".native_graphics_kb");
  const Node* node = capture.Find(path);
  if (node != nullptr && node->is_error()) {
    Warn(report, absl::StrCat(path, ": heap dump failed (", node->content, "): native_graphics_kb 0"));
    p.native_graphics_kb = 0;
    p.native_graphics_source = "none";
    report.sources[key] = absl::StrCat("none: ", path, " failed (", node->content, ")");
    return;
  }
  if (node == nullptr || !node->is_file()) {
    p.native_graphics_kb = 0;
    p.native_graphics_source = "none";
    report.sources[key] = "none: no native heap dump captured";
    return;
  }
  absl::StatusOr<NativeHeapDump> dump = ParseNativeHeapDump(node->content);
  p.native_graphics_source = "heap_dump";
  if (!dump.ok()) {
    Warn(report, absl::StrCat(path, ": ", dump.status().message(), ": native_graphics_kb null"));
    p.native_graphics_kb = std::nullopt;
    report.sources[key] = absl::StrCat("unavailable: ", path, " unparsable");
    return;
  }
  p.native_graphics_kb = KbFromBytes(GraphicsNativeBytes(*dump, libs));
  report.sources[key] = path;
}

std::optional<uint64_t> MeminfoValue(const Meminfo* m, const char* key) {
  if (m == nullptr) return std::nullopt;
  return m->Get(key);
}

// zram0, zram1, ... up to the first number the capture lacks, as AOSP's ReadZramTotal walks them.
Kb ZramKb(const Capture& capture, const Meminfo* mi, Report& report) {
  std::vector<ZramDeviceText> devices;
  for (int n = 0;; ++n) {
    std::string name = absl::StrCat("zram", n);
    std::string dir = absl::StrCat("sys/block/", name);
    if (!capture.IsDirectory(dir)) break;
    ZramDeviceText dev;
    dev.name = name;
    if (const std::string* t = capture.FileContent(dir + "/mm_stat")) dev.mm_stat = *t;
    if (const std::string* t = capture.FileContent(dir + "/mem_used_total")) dev.mem_used_total = *t;
    devices.push_back(std::move(dev));
  }
  std::optional<uint64_t> swap_used_kb;
  std::optional<uint64_t> swap_total = MeminfoValue(mi, "SwapTotal");
  std::optional<uint64_t> swap_free = MeminfoValue(mi, "SwapFree");
  if (swap_total && swap_free) swap_used_kb = *swap_total > *swap_free ? *swap_total - *swap_free : 0;
  ZramFigure z = ZramUsedKb(devices, swap_used_kb);
  report.sources["dumpsys.zram_kb"] = z.source;
  if (z.warning) Warn(report, *z.warning);
  return z.zram_kb;
}

// dumpsys gpu --gpumem, beside gl_kb: both null (no warning) when the capture lacks it.
void GpuMemTotals(const Capture& capture, Report& report) {
  const Node* node = capture.Find(kDumpsysGpuMem);
  if (node == nullptr) return;
  if (!node->is_file()) {
    Warn(report, absl::StrCat(kDumpsysGpuMem, ": failed (", node->content, "): gpu_mem_total_kb null"));
    return;
  }
  absl::StatusOr<GpuMemSnapshot> s = ParseGpuMemSnapshot(node->content);
  if (!s.ok()) {
    Warn(report, absl::StrCat(kDumpsysGpuMem, ": ", s.status().message(), ": gpu_mem_total_kb null"));
    return;
  }
  if (s->global_bytes) report.device.gpu_mem_global_kb = KbFromBytes(*s->global_bytes);
  report.sources["device.gpu_mem_global_kb"] =
      s->global_bytes ? absl::StrCat(kDumpsysGpuMem, " Global total")
                      : absl::StrCat("unavailable: ", kDumpsysGpuMem, " Global total: N/A");
  int unlisted = 0;
  for (auto& [pid, p] : report.processes) {
    std::string key = absl::StrCat("processes.", pid, ".gpu_mem_total_kb");
    auto it = s->total_bytes_by_pid.find(pid);
    if (it == s->total_bytes_by_pid.end()) {
      ++unlisted;
      report.sources[key] = absl::StrCat("unavailable: no Proc line in ", kDumpsysGpuMem);
      continue;
    }
    p.gpu_mem_total_kb = KbFromBytes(it->second);
    report.sources[key] = absl::StrCat(kDumpsysGpuMem, " Proc ", pid, " total");
  }
  if (unlisted > 0) {
    Warn(report, absl::StrCat(kDumpsysGpuMem, ": ", unlisted, " processes have no Proc line (Android tracks no ",
                              "GPU memory for them): gpu_mem_total_kb null"));
  }
}

std::optional<uint64_t> OptionalSysfsKb(const Capture& capture, const char* path) {
  const std::string* text = capture.FileContent(path);
  if (text == nullptr) return std::nullopt;
  absl::StatusOr<uint64_t> v = ParseSysfsUint(*text);
  if (!v.ok()) return std::nullopt;
  return *v;
}

void CompareWithDeviceText(const Capture& capture, DumpsysView& view, Report& report) {
  const Node* node = capture.Find(capture::kDumpsysMeminfoNode);
  if (node == nullptr) return;
  if (!node->is_file()) {
    Warn(report, absl::StrCat("cmd/dumpsys_meminfo: failed (", node->content, ")"));
    return;
  }
  absl::StatusOr<DumpsysSummary> s = ParseDumpsysMeminfo(node->content);
  if (!s.ok()) {
    Warn(report, absl::StrCat("cmd/dumpsys_meminfo: ", s.status().message()));
    return;
  }
  auto put = [&](const char* label, const std::optional<int64_t>& device, const Kb& computed) {
    if (!device) return;
    view.device_text_kb[label] = *device;
    if (computed) view.difference_kb[label] = *computed - *device;
  };
  put("total_ram_kb", s->total_ram_kb, view.total_ram_kb);
  put("free_ram_kb", s->free_ram_kb, view.free_ram_kb);
  put("used_ram_kb", s->used_ram_kb, view.used_ram_kb);
  put("lost_ram_kb", s->lost_ram_kb, view.lost_ram_kb);
  put("zram_kb", s->zram_physical_kb, view.zram_kb);
  put("dmabuf_total_kb", s->dmabuf_total_kb, view.dmabuf_total_kb);
  put("dmabuf_mapped_kb", s->dmabuf_mapped_kb, view.dmabuf_mapped_kb);
  put("dmabuf_unmapped_kb", s->dmabuf_unmapped_kb, view.dmabuf_unmapped_kb);
  // Android 11-era text prints ION where later ones print DMA-BUF: the same buffers, compared the same way
  // (its pools sit in KReclaimable, so in cached kernel).
  put("ion_total_kb", s->ion_total_kb, view.dmabuf_total_kb);
  put("ion_mapped_kb", s->ion_mapped_kb, view.dmabuf_mapped_kb);
  put("ion_unmapped_kb", s->ion_unmapped_kb, view.dmabuf_unmapped_kb);
  put("ion_pools_kb", s->ion_pools_kb, std::nullopt);
  // An OEM Free RAM term with no AOSP counterpart: shown beside cached kernel, so it is not an
  // unexplained difference.
  put("cached_ion_kb", s->free_cached_ion_kb, std::nullopt);
  put("gpu_private_kb", s->gpu_private_kb, view.gpu_private_kb);
  put("kernel_used_kb", s->used_kernel_kb, view.kernel_used_kb);
  put("cached_pss_kb", s->free_cached_pss_kb, view.cached_pss_kb);
  put("cached_kernel_kb", s->free_cached_kernel_kb, view.cached_kernel_kb);
}

// capture.json: device id, time, page size, DDR size and Android version; defaults with a warning.
CaptureHeader ReadHeader(const Capture& capture, Report& report) {
  CaptureHeader header;
  if (const std::string* text = capture.FileContent(capture::kHeaderNode)) {
    absl::StatusOr<CaptureHeader> h = ParseCaptureHeader(*text);
    if (h.ok()) {
      header = *std::move(h);
    } else {
      // The parser's messages already name capture.json.
      Warn(report, absl::StrCat(h.status().message(), ": page_size 4096 assumed"));
    }
  } else {
    Warn(report, "capture.json: missing: page_size 4096 assumed");
  }
  report.device_id = header.device_id;
  report.captured_at = header.captured_at;
  report.page_size = header.page_size;
  report.sources["page_size"] = header.page_size_defaulted ? "default 4096" : "capture.json page_size";
  return header;
}

// proc/meminfo, or nullopt (with a warning) when it is missing or unusable; skipped lines are warned.
std::optional<Meminfo> ReadMeminfo(const Capture& capture, Report& report) {
  const Node* node = capture.Find("proc/meminfo");
  if (node == nullptr) {
    Warn(report, "proc/meminfo: missing: device figures unknown");
    return std::nullopt;
  }
  if (!node->is_file()) {
    Warn(report, absl::StrCat("proc/meminfo: unreadable (", node->content, "): device figures unknown"));
    return std::nullopt;
  }
  absl::StatusOr<Meminfo> m = ParseMeminfo(node->content);
  if (!m.ok()) {
    Warn(report, absl::StrCat("proc/meminfo: ", m.status().message(), ": device figures unknown"));
    return std::nullopt;
  }
  for (const std::string& line : m->skipped_lines) {
    Warn(report, absl::StrCat("proc/meminfo ", line, ": skipped (not 'Key: N [kB]')"));
  }
  if (m->skipped_line_count > m->skipped_lines.size()) {
    Warn(report,
         absl::StrCat("proc/meminfo: ", m->skipped_line_count - m->skipped_lines.size(), " more lines skipped"));
  }
  return *std::move(m);
}

// Whether the kernel has CONFIG_VMAP_STACK (then KernelStack is inside VmallocUsed); the GKI default
// when proc/config.gz cannot say.
bool VmapStack(const Capture& capture, Report& report) {
  const std::string* cfg = capture.FileContent("proc/config.gz");
  if (cfg == nullptr) {
    Warn(report, "proc/config.gz: not readable: CONFIG_VMAP_STACK=y assumed (the GKI default)");
    return true;
  }
  absl::StatusOr<KernelConfig> c = ParseKernelConfigGz(*cfg);
  if (!c.ok()) {
    Warn(report, absl::StrCat("proc/config.gz: ", c.status().message(), ": CONFIG_VMAP_STACK=y assumed"));
    return true;
  }
  return c->IsEnabled("CONFIG_VMAP_STACK");
}

// The numeric proc/<pid> folders that are processes of the report, with their memory maps read.
std::vector<ProcessInput> ReadProcessInputs(const Capture& capture, GpuDeviceNaming gpu_naming, Report& report) {
  std::vector<ProcessInput> inputs;
  for (const std::string& name : capture.Children("proc")) {
    int pid = 0;
    if (name.empty() || name[0] == '0' || !absl::SimpleAtoi(name, &pid) || pid <= 0 ||
        !capture.IsDirectory("proc/" + name)) {
      continue;
    }
    ProcessInput in;
    if (ReadProcessInput(capture, pid, gpu_naming, in, report)) inputs.push_back(std::move(in));
  }
  return inputs;
}

// What the device-wide figures of one capture are computed from, besides the processes.
struct DeviceInputs {
  const CaptureHeader& header;
  const Meminfo* meminfo;
  bool vmap_stack;
  bool device_wide_gpu_unknown;
};

// pss_kb, swap_pss_kb and gfxdev_kb of one process: from smaps, else smaps_rollup.
void MemoryMapFigures(const ProcessInput& in, const ProcessGpu& g, Platform platform, ProcessReport& p,
                      Report& report) {
  const std::string key = absl::StrCat("processes.", in.pid, ".");
  if (in.smaps_ok) {
    if (!in.smaps.overflowed) {
      p.pss_kb = ToKb(in.smaps.pss_kb);
      p.swap_pss_kb = ToKb(in.smaps.swap_pss_kb);
      p.gfxdev_kb = ToKb(in.smaps.gpu_device_pss_kb);
    }
    report.sources[key + "pss_kb"] = in.dir + "/smaps";
    report.sources[key + "gfxdev_kb"] =
        platform == Platform::kGeneric
            ? "generic platform: 0"
            : absl::StrCat(in.dir, "/smaps Pss of ", GpuDeviceMappingNames(GpuDeviceNamingOf(platform)), " mappings");
  } else if (in.from_rollup) {
    p.pss_kb = ToKb(in.rollup->pss_kb);
    p.swap_pss_kb = ToKb(in.rollup->swap_pss_kb);
    report.sources[key + "pss_kb"] = in.dir + "/smaps_rollup";
    if (platform == Platform::kQcom) {
      p.gfxdev_kb = g.kgsl_mapped_kb;
      report.sources[key + "gfxdev_kb"] =
          p.gfxdev_kb ? absl::StrCat("only smaps_rollup: ", kKgslProcRoot, "/", in.pid,
                                     "/gpumem_mapped (KGSL keeps it equal to the kgsl mappings)")
                      : "unavailable: only smaps_rollup and gpumem_mapped unreadable";
    } else {
      p.gfxdev_kb = 0;
      report.sources[key + "gfxdev_kb"] = "only smaps_rollup: 0 (Mali maps GPU memory as PFN mappings)";
    }
  } else {
    report.sources[key + "pss_kb"] = absl::StrCat("unavailable: ", in.pss_problem);
  }
}

// Why the dma-bufs a process holds cannot all be seen, "" when they can: its fdinfo folder, or (without
// a usable smaps) its maps, recorded as denied or failed rather than gone (an agent running as shell).
std::string UnseenDmaBufRefs(const Capture& capture, const ProcessInput& in) {
  std::vector<std::string> nodes = {in.dir + "/fdinfo"};
  if (!in.smaps_ok) nodes.push_back(in.dir + "/maps");
  for (const std::string& path : nodes) {
    const Node* node = capture.Find(path);
    if (node != nullptr && node->is_error() && node->content != "ENOENT" && node->content != "ESRCH") {
      return absl::StrCat(path, " unreadable (", node->content, ")");
    }
  }
  return "";
}

// dma_kb of one process: its share of every buffer it holds; null on legacy kernels' unnamed mappings,
// and when the buffers it holds cannot be seen.
void DmaFigure(const Capture& capture, const ProcessInput& in, const DmaBufShares& shares, ProcessReport& p,
               Report& report) {
  const std::string key = absl::StrCat("processes.", in.pid, ".dma_kb");
  auto share = shares.share_bytes_by_pid.find(in.pid);
  p.dma_kb = share == shares.share_bytes_by_pid.end() ? Kb(0) : KbFromBytes(share->second);
  report.sources[key] = "fdinfo/* and /dmabuf mappings; sizes from sys/kernel/dmabuf/buffers";
  if (const std::string unseen = UnseenDmaBufRefs(capture, in); !unseen.empty()) {
    p.dma_kb = std::nullopt;
    report.sources[key] = absl::StrCat("unavailable: ", unseen);
    Warn(report, absl::StrCat(unseen, kDmaBufsUnseen));
    return;
  }
  if (in.legacy_dmabuf.count > 0) {
    p.dma_kb = std::nullopt;
    report.sources[key] = absl::StrCat("unavailable: ", kLegacyDmaBufMappingName, " mappings name no buffer");
    Warn(report, LegacyDmaBufWarning(in.legacy_dmabuf_node, in.legacy_dmabuf));
  }
}

// heaps and app_summary: where the memory is, from the mapping names only full smaps has.
void HeapFigures(const ProcessInput& in, ProcessReport& p, Report& report) {
  const std::string key = absl::StrCat("processes.", in.pid, ".");
  if (!in.smaps_ok) {
    const std::string why = in.from_rollup ? "unavailable: only smaps_rollup (no mapping names)"
                                           : absl::StrCat("unavailable: ", in.pss_problem);
    report.sources[key + "heaps"] = why;
    report.sources[key + "app_summary"] = why;
    return;
  }
  p.heaps = in.smaps.heaps.Figures();
  if (!p.heaps) {
    Warn(report, absl::StrCat(in.dir, "/smaps: a heap's sum does not fit 64 bits: heaps and app_summary null"));
    report.sources[key + "heaps"] = "unavailable: a sum overflows";
    return;
  }
  p.app_summary = AppSummaryOf(*p.heaps);
  report.sources[key + "heaps"] = in.dir + "/smaps, each mapping by its name";
  report.sources[key + "app_summary"] = "heaps, by dumpsys' App Summary formulas without memtrack";
}

// Every figure of one process (docs/accounting.md section 2).
ProcessReport ProcessFigures(const Capture& capture, const ProcessInput& in, const ProcessGpu& g,
                             const DmaBufShares& shares, const GraphicsLibraries& libs, Report& report) {
  ProcessReport p;
  p.pid = in.pid;
  p.name = ProcessName(capture, in.dir, report);
  p.oom_score_adj = OomScoreAdj(capture, in.dir, report);
  p.cached = p.oom_score_adj && *p.oom_score_adj >= kCachedOomAdj;
  MemoryMapFigures(in, g, report.platform, p, report);
  p.gl_kb = g.gl_kb;
  report.sources[absl::StrCat("processes.", in.pid, ".gl_kb")] = g.gl_source;
  DmaFigure(capture, in, shares, p, report);
  p.dma_by_exporter_kb = DmaByExporterKb(shares, in.pid, p.dma_kb);
  NativeGraphics(capture, libs, p, report);
  HeapFigures(in, p, report);

  p.non_graphics_kb = SubKb(SubKb(AddKb(p.pss_kb, p.swap_pss_kb), p.native_graphics_kb), p.gfxdev_kb);
  p.graphics_dma_kb = AddKb(AddKb(p.gl_kb, p.dma_kb), p.native_graphics_kb);
  p.total_kb = AddKb(p.non_graphics_kb, p.graphics_dma_kb);

  p.gl_mtrack_kb = g.gl_mtrack_kb;
  p.egl_mtrack_kb = g.egl_mtrack_kb;
  p.dumpsys_total_pss_kb = AddKb(AddKb(p.pss_kb, p.swap_pss_kb), AddKb(p.egl_mtrack_kb, p.gl_mtrack_kb));
  return p;
}

// Which pids the dumpsys tier may stand in for: the unreadable ones, and those the capture does not hold
// unless the agent read as root.
DumpsysTierScope TierScope(const Capture& capture, const CaptureHeader& header,
                           const std::vector<ProcessInput>& inputs) {
  DumpsysTierScope scope;
  for (const ProcessInput& in : inputs) {
    if (in.unreadable) scope.unreadable_pids.insert(in.pid);
  }
  for (const std::string& name : capture.Children("proc")) {
    int pid = 0;
    if (absl::SimpleAtoi(name, &pid)) scope.captured_pids.insert(pid);
  }
  auto access = header.facts.find("access");
  scope.walk_saw_every_process = access != header.facts.end() && access->second == "root";
  return scope;
}

// The dumpsys tier (docs/accounting.md section 9): the processes whose smaps the capture could not read
// take their figures from the device's own dumpsys text, when it has them.
void DumpsysTier(const Capture& capture, const CaptureHeader& header, const std::vector<ProcessInput>& inputs,
                 Report& report) {
  const Node* node = capture.Find(capture::kDumpsysMeminfoNode);
  if (node == nullptr || !node->is_file()) return;  // absent, or failed (CompareWithDeviceText says so)
  absl::StatusOr<DumpsysProcesses> dumpsys = ParseDumpsysProcesses(node->content);
  if (!dumpsys.ok()) {
    Warn(report, absl::StrCat(dumpsys.status().message(), ": no process of the dumpsys tier"));
    return;
  }
  if (dumpsys->skipped_line_count > 0) {
    Warn(report, absl::StrCat(capture::kDumpsysMeminfoNode, ": ", dumpsys->skipped_line_count,
                              " lines of Total PSS by process are none of its forms, skipped (",
                              dumpsys->skipped_lines.front(), ")"));
  }
  std::vector<ProcessReport> added = DumpsysTierProcesses(*dumpsys, TierScope(capture, header, inputs), report);
  if (added.empty()) return;
  for (ProcessReport& p : added) {
    // The line replaces what the kernel tier could not read; oom_score_adj is readable as shell and kept
    // when the line does not give one.
    auto kernel = report.processes.find(p.pid);
    if (kernel != report.processes.end() && !p.oom_score_adj) p.oom_score_adj = kernel->second.oom_score_adj;
    report.processes[p.pid] = std::move(p);
  }
  report.device.tier = report::kTierDumpsys;
  report.sources["device.tier"] = absl::StrCat(added.size(), " processes from ", capture::kDumpsysMeminfoNode);
  Warn(report, absl::StrCat(added.size(), " processes' smaps could not be read (the agent runs as shell): their ",
                            "total_kb is dumpsys' TOTAL PSS, which includes the vendor's memtrack, so processes_kb ",
                            "and total_kb include it too and do not compare across vendors; their split figures are ",
                            "null (docs/accounting.md section 9)"));
}

// Every figure of the whole device (docs/accounting.md section 3), once the processes are in the report.
void DeviceFigures(const Capture& capture, const DeviceInputs& in, Report& report) {
  DeviceReport& d = report.device;
  d.mem_total_kb = MeminfoKb(in.meminfo, "MemTotal");
  report.sources["device.mem_total_kb"] = d.mem_total_kb ? "proc/meminfo MemTotal" : "unavailable: proc/meminfo";
  CmaFigures cma = ComputeCma(capture, report.page_size, MeminfoValue(in.meminfo, "CmaTotal"), report);
  d.gcma_kb = cma.gcma_kb;
  d.kernel_cma_kb = cma.kernel_cma_kb;

  DdrFigure ddr = DdrKb(in.header, d.mem_total_kb, d.gcma_kb, AndroidEvidenceOf(in.header, capture, report.processes));
  d.ddr_kb = ddr.ddr_kb;
  d.ddr_estimated = ddr.estimated;
  report.sources["device.ddr_kb"] = ddr.source;
  if (ddr.warning) Warn(report, *ddr.warning);

  StaticReservedFigure reserved = StaticReservedKb(d.ddr_kb, d.mem_total_kb, d.gcma_kb);
  d.static_reserved_kb = reserved.static_reserved_kb;
  if (reserved.warning) Warn(report, *reserved.warning);
  report.sources["device.static_reserved_kb"] = "ddr_kb - mem_total_kb - gcma_kb";

  KernelFigure kernel = KernelKb(in.meminfo, in.vmap_stack, d.kernel_cma_kb);
  d.kernel_kb = kernel.kernel_kb;
  if (kernel.warning) Warn(report, *kernel.warning);
  report.sources["device.kernel_kb"] = kernel.source;

  ProcessesFigure processes = ProcessesKb(report.processes, in.device_wide_gpu_unknown);
  d.processes_kb = processes.processes_kb;
  if (processes.warning) Warn(report, *processes.warning);
  report.sources["device.processes_kb"] = processes.source;

  d.total_kb = AddKb(AddKb(d.static_reserved_kb, d.kernel_kb), d.processes_kb);
  report.sources["device.total_kb"] = "static_reserved_kb + kernel_kb + processes_kb";
}

// What dumpsys meminfo would print (docs/accounting.md section 4), and the device's own text beside it.
void DumpsysFigures(const Capture& capture, const DeviceInputs& in, const AccountOptions& options,
                    const GpuAttribution& gpu, const DmaBufShares& shares, Report& report) {
  DumpsysInputs din;
  din.android_version = options.android_version ? *options.android_version : in.header.android_version.value_or(14);
  din.meminfo = in.meminfo;
  din.vmap_stack = in.vmap_stack;
  din.total_pss_kb = din.total_swap_pss_kb = din.cached_pss_kb = 0;
  din.memtrack_graphics_kb = din.memtrack_gl_kb = 0;
  for (const auto& [pid, p] : report.processes) {
    din.total_pss_kb = AddKb(din.total_pss_kb, p.dumpsys_total_pss_kb);
    din.total_swap_pss_kb = AddKb(din.total_swap_pss_kb, p.swap_pss_kb);
    if (p.cached) din.cached_pss_kb = AddKb(din.cached_pss_kb, p.dumpsys_total_pss_kb);
    din.memtrack_graphics_kb = AddKb(din.memtrack_graphics_kb, p.egl_mtrack_kb);
    din.memtrack_gl_kb = AddKb(din.memtrack_gl_kb, p.gl_mtrack_kb);
  }
  if (std::optional<uint64_t> heaps = OptionalSysfsKb(capture, "sys/kernel/ion/total_heaps_kb")) {
    if (std::optional<uint64_t> pools = OptionalSysfsKb(capture, "sys/kernel/ion/total_pools_kb")) {
      din.ion_heaps_kb = ToKb(*heaps);
      din.ion_pools_kb = ToKb(*pools);
    }
  }
  if (shares.total_exported_bytes) din.dmabuf_total_exported_kb = KbFromBytes(*shares.total_exported_bytes);
  din.dmabuf_mapped_kb = KbFromBytes(shares.mapped_bytes);
  din.gpu_private_kb = gpu.gpu_private_kb;
  din.kernel_cma_kb = report.device.kernel_cma_kb;
  din.zram_kb = ZramKb(capture, in.meminfo, report);
  report.dumpsys = ComputeDumpsysSummary(din);
  GpuMemTotals(capture, report);
  CompareWithDeviceText(capture, report.dumpsys, report);
}

// The processes that exited while the capture read them (a live root's everyday churn: dozens a capture)
// make one counted warning, not one line each, so the warnings that need a reader stand out.
void CountExitedProcesses(Report& report) {
  const std::vector<int> exited =
      TakeProcessWarnings(report.warnings, [](const std::string& w) { return absl::EndsWith(w, kExitedMidCapture); });
  if (exited.empty()) return;
  Warn(report, absl::StrCat(exited.size(), " processes exited during the capture (their smaps unreadable, ENOENT ",
                            "or ESRCH) and are left out: ",
                            NameSomeProcesses(exited, [](int pid) { return absl::StrCat("proc/", pid); })));
}

// "3703 system": a process of the report by pid and name.
std::string PidAndName(const Report& report, int pid) {
  auto p = report.processes.find(pid);
  return p == report.processes.end() || p->second.name.empty() ? absl::StrCat(pid)
                                                               : absl::StrCat(pid, " ", p->second.name);
}

// As shell every other process's smaps and its fdinfo or maps answer EACCES: hundreds of processes on a
// phone, so each kind makes one counted warning that says where their figures come from instead.
void CountDeniedProcesses(Report& report) {
  const auto named = [&report](int pid) { return PidAndName(report, pid); };
  const std::vector<int> denied = TakeProcessWarnings(report.warnings, [](const std::string& w) {
    return absl::EndsWith(w, absl::StrCat("/smaps", kDenied)) ||
           absl::EndsWith(w, absl::StrCat("/smaps_rollup", kDenied));
  });
  if (!denied.empty()) {
    std::vector<int> from_dumpsys, unknown;
    for (int pid : denied) {
      auto p = report.processes.find(pid);
      const bool dumpsys = p != report.processes.end() && p->second.tier == report::kTierDumpsys;
      (dumpsys ? from_dumpsys : unknown).push_back(pid);
    }
    const std::string where =
        unknown.empty() ? absl::StrCat("their figures come from dumpsys: ", NameSomeProcesses(from_dumpsys, named))
        : from_dumpsys.empty() ? absl::StrCat("their figures are null: ", NameSomeProcesses(unknown, named))
                               : absl::StrCat(from_dumpsys.size(), " take their figures from dumpsys, ", unknown.size(),
                                              " have them null: ", NameSomeProcesses(unknown, named));
    Warn(report, absl::StrCat("smaps unreadable for ", denied.size(), " processes (EACCES): ", where));
  }
  const std::vector<int> unseen = TakeProcessWarnings(report.warnings, [](const std::string& w) {
    return absl::EndsWith(w, absl::StrCat(" unreadable (EACCES)", kDmaBufsUnseen));
  });
  if (!unseen.empty()) {
    Warn(report, absl::StrCat("fdinfo or maps unreadable for ", unseen.size(), " processes (EACCES): the dma-bufs ",
                              "they hold cannot be seen; their dma_kb null: ", NameSomeProcesses(unseen, named)));
  }
}

}  // namespace

Report Account(const Capture& capture, const AccountOptions& options) {
  Report report;
  const GraphicsLibraries& libs =
      options.graphics_libraries != nullptr ? *options.graphics_libraries : GraphicsLibraries::Default();
  const CaptureHeader header = ReadHeader(capture, report);
  report.platform = DetectPlatform(capture);
  const std::optional<Meminfo> meminfo = ReadMeminfo(capture, report);
  const bool vmap_stack = VmapStack(capture, report);

  std::vector<ProcessInput> inputs = ReadProcessInputs(capture, GpuDeviceNamingOf(report.platform), report);
  CountExitedProcesses(report);
  std::vector<int> pids;
  pids.reserve(inputs.size());
  for (const ProcessInput& in : inputs) pids.push_back(in.pid);
  GpuAttribution gpu = AttributeGpu(capture, report.platform, header.page_size, pids, report);
  DmaBufLedger ledger;
  for (const ProcessInput& in : inputs) AddDmaBufRefs(capture, in, ledger, report);
  const DmaBufShares shares = ledger.Share(capture, report);
  size_t rollup_only = 0;
  for (const ProcessInput& in : inputs) {
    ProcessReport p = ProcessFigures(capture, in, gpu.by_pid[in.pid], shares, libs, report);
    rollup_only += in.from_rollup;
    report.processes.emplace(p.pid, std::move(p));
  }
  DumpsysTier(capture, header, inputs, report);
  CountDeniedProcesses(report);
  if (rollup_only > 0) {
    Warn(report, absl::StrCat(rollup_only, " of ", inputs.size(), " processes have only smaps_rollup: their heaps and ",
                              "app_summary are null (full smaps: memfleet-agent --smaps full, memfleet sweep ",
                              "--full-smaps)"));
  }

  const DeviceInputs device{header, meminfo ? &*meminfo : nullptr, vmap_stack, gpu.device_wide_unknown};
  DeviceFigures(capture, device, report);
  DumpsysFigures(capture, device, options, gpu, shares, report);
  return report;
}

}  // namespace memfleet::accounting
