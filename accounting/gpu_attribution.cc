#include "accounting/gpu_attribution.h"

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "accounting/gpu_memory_parser.h"
#include "accounting/kb_math.h"
#include "accounting/kgsl_bytes.h"
#include "accounting/mali_gpu_memory.h"
#include "accounting/mtk_rss_pid.h"
#include "accounting/platform.h"
#include "accounting/sysfs_value.h"

namespace memfleet::accounting {
namespace {

// A KGSL per-process value in bytes. Missing (in an existing directory), unreadable or malformed:
// nullopt with a warning.
std::optional<uint64_t> KgslBytes(const Capture& capture, const std::string& path, Report& report) {
  const Node* node = capture.Find(path);
  if (node == nullptr) {
    report.warnings.push_back(absl::StrCat(path, ": missing in an existing KGSL process directory"));
    return std::nullopt;
  }
  if (node->is_error()) {
    report.warnings.push_back(absl::StrCat(path, ": unreadable (", node->content, ")"));
    return std::nullopt;
  }
  if (!node->is_file()) return std::nullopt;
  absl::StatusOr<uint64_t> v = ParseKgslBytes(node->content);
  if (!v.ok()) {
    report.warnings.push_back(absl::StrCat(path, ": ", v.status().message(), ": null for this process"));
    return std::nullopt;
  }
  return *v;
}

// The folder whose error hides every process's KGSL counters, or nullptr: proc/, or the KGSL root itself
// when the agent could not list it (then proc/ was never seen, and "no pid folder" would read as 0).
const Node* UnreadableKgslFolder(const Capture& capture, const char** path) {
  const Node* proc_root = capture.Find(kKgslProcRoot);
  *path = kKgslProcRoot;
  if (proc_root != nullptr) return proc_root->is_error() ? proc_root : nullptr;
  const Node* root = capture.Find(kKgslRoot);
  *path = kKgslRoot;
  return root != nullptr && root->is_error() && root->content != "ENOENT" ? root : nullptr;
}

void AttributeQcom(const Capture& capture, const std::vector<int>& pids, GpuAttribution& out, Report& report) {
  const char* unreadable_path = kKgslProcRoot;
  if (const Node* unreadable = UnreadableKgslFolder(capture, &unreadable_path); unreadable != nullptr) {
    report.warnings.push_back(
        absl::StrCat(unreadable_path, ": unreadable (", unreadable->content, "): gl_kb unknown for every process"));
    out.device_wide_unknown = true;
  }
  for (int pid : pids) {
    ProcessGpu& g = out.by_pid[pid];
    std::string dir = absl::StrCat(kKgslProcRoot, "/", pid);
    if (out.device_wide_unknown) {
      g.gl_kb = g.gl_mtrack_kb = g.egl_mtrack_kb = g.kgsl_mapped_kb = std::nullopt;
      g.gl_source = absl::StrCat("unavailable: ", unreadable_path, " unreadable");
      continue;
    }
    if (!capture.IsDirectory(dir)) {
      g.gl_source = absl::StrCat("no ", dir, ": 0");
      continue;
    }
    std::optional<uint64_t> mapped = KgslBytes(capture, dir + "/gpumem_mapped", report);
    std::optional<uint64_t> unmapped = KgslBytes(capture, dir + "/gpumem_unmapped", report);
    g.kgsl_mapped_kb = mapped ? KbFromBytes(*mapped) : std::nullopt;
    g.gl_mtrack_kb = unmapped ? KbFromBytes(*unmapped) : std::nullopt;
    uint64_t sum = 0;
    if (mapped && unmapped && AddU64(sum, *mapped) && AddU64(sum, *unmapped)) {
      g.gl_kb = KbFromBytes(sum);
      g.gl_source = absl::StrCat(dir, "/gpumem_mapped + gpumem_unmapped");
    } else {
      g.gl_kb = std::nullopt;
      g.gl_source = absl::StrCat("unavailable: ", dir, "/gpumem_mapped or gpumem_unmapped unreadable");
    }
    std::optional<uint64_t> imported = KgslBytes(capture, dir + "/imported_mem", report);
    g.egl_mtrack_kb = imported ? KbFromBytes(*imported) : std::nullopt;
  }
  // memtrack pid 0 GL = Σ gpumem_unmapped of every KGSL process directory.
  if (!out.device_wide_unknown) {
    uint64_t total = 0;
    bool ok = true;
    for (const std::string& name : capture.Children(kKgslProcRoot)) {
      int pid = 0;
      if (!absl::SimpleAtoi(name, &pid)) continue;
      std::string path = absl::StrCat(kKgslProcRoot, "/", name, "/gpumem_unmapped");
      const std::string* text = capture.FileContent(path);
      absl::StatusOr<uint64_t> v = text ? ParseKgslBytes(*text) : absl::StatusOr<uint64_t>(absl::NotFoundError(path));
      if (!v.ok() || !AddU64(total, *v)) {
        ok = false;
        break;
      }
    }
    if (ok) out.gpu_private_kb = KbFromBytes(total);
  }
}

absl::StatusOr<GpuPages> ParseGpuNode(Platform platform, std::string_view text) {
  switch (platform) {
    case Platform::kXring:
      return ParseXgpuGpuMemory(text);
    case Platform::kMali:
      return ParseMaliGpuMemory(text);
    default:
      return ParseMtkGpuMemory(text);
  }
}

const char* GpuNodePath(Platform platform) {
  switch (platform) {
    case Platform::kXring:
      return kXgpuGpuMemory;
    case Platform::kMali:
      return kMaliDebugfsGpuMemory;
    default:
      return kMtkGpuMemory;
  }
}

// The device-wide Mali-family node: parsed pages, or nullopt when the node makes gl_kb unknown.
std::optional<GpuPages> ReadMaliNode(const Capture& capture, const char* path, Platform platform, GpuAttribution& out,
                                     Report& report) {
  const Node* node = capture.Find(path);
  if (node == nullptr) return GpuPages{};
  if (node->is_error()) {
    if (node->content == "ENOENT") {
      report.warnings.push_back(absl::StrCat(path, ": ENOENT (no GPU contexts reported): gl_kb 0"));
      return GpuPages{};
    }
    report.warnings.push_back(
        absl::StrCat(path, ": unreadable (", node->content, "): gl_kb unknown for every process"));
    out.device_wide_unknown = true;
    return std::nullopt;
  }
  absl::StatusOr<GpuPages> pages = ParseGpuNode(platform, node->content);
  if (!pages.ok()) {
    report.warnings.push_back(absl::StrCat(path, ": ", pages.status().message(), ": gl_kb unknown for every process"));
    out.device_wide_unknown = true;
    return std::nullopt;
  }
  if (!pages->per_process) {
    // Arm's stock layout: the GPU memory is there, but whose it is the node does not say; 0 would be
    // a plausible-looking undercount.
    report.warnings.push_back(absl::StrCat(path, ": the kernel's gpu_memory carries no pid (Arm's stock layout \"",
                                           "kctx-0x<addr> <pages>\"): gl_kb unknown for every process"));
    out.device_wide_unknown = true;
    return std::nullopt;
  }
  return *std::move(pages);
}

void AttributeMali(const Capture& capture, Platform platform, uint64_t page_size, const std::vector<int>& pids,
                   GpuAttribution& out, Report& report) {
  const char* path = GpuNodePath(platform);
  std::optional<GpuPages> pages = ReadMaliNode(capture, path, platform, out, report);
  for (int pid : pids) {
    ProcessGpu& g = out.by_pid[pid];
    if (!pages) {
      g.gl_kb = g.gl_mtrack_kb = std::nullopt;
      g.gl_source = absl::StrCat("unavailable: ", path, " unusable");
    } else {
      auto it = pages->pages_by_tgid.find(pid);
      uint64_t p = it == pages->pages_by_tgid.end() ? 0 : it->second;
      g.gl_kb = g.gl_mtrack_kb = KbFromPages(p, page_size);
      g.gl_source =
          absl::StrCat(path, " (", pages->layout.empty() ? "absent" : pages->layout, ") pages of tgid x page_size");
    }
    if (platform != Platform::kMtk) {
      // XRing's memtrack HAL is not public, and Arm's reference HAL defines no EGL figure: no EGL
      // mtrack semantics to mirror.
      g.egl_mtrack_kb = 0;
      continue;
    }
    std::string rss_path = absl::StrCat("proc/dma_heap/rss_pid@", pid);
    const Node* node = capture.Find(rss_path);
    if (node == nullptr) {
      g.egl_mtrack_kb = 0;
    } else if (node->is_error()) {
      report.warnings.push_back(absl::StrCat(rss_path, ": unreadable (", node->content, ")"));
      g.egl_mtrack_kb = std::nullopt;
    } else if (node->is_file()) {
      absl::StatusOr<RssPid> r = ParseMtkRssPid(node->content);
      if (!r.ok()) {
        report.warnings.push_back(absl::StrCat(rss_path, ": ", r.status().message()));
        g.egl_mtrack_kb = std::nullopt;
      } else if (const RssPidRow* row = r->Find(pid)) {
        g.egl_mtrack_kb = ToKb(row->pss_kb);
      } else {
        g.egl_mtrack_kb = 0;
      }
    }
  }
}

// No vendor node. Unless the Mali debugfs folder was there but unreadable (an agent running as shell
// on a build that mounts debugfs root-only): then a Mali GPU may hold memory no node shows, and 0 would
// be a guess.
void AttributeGeneric(const Capture& capture, const std::vector<int>& pids, GpuAttribution& out, Report& report) {
  const Node* mali = capture.Find(kMaliDebugfsDir);
  if (mali == nullptr || !mali->is_error()) {
    for (int pid : pids) out.by_pid[pid].gl_source = "generic platform: no GPU driver nodes, 0";
    return;
  }
  const std::string why = absl::StrCat(kMaliDebugfsDir, " unreadable (", mali->content, ")");
  report.warnings.push_back(absl::StrCat(why, ": a Mali GPU's memory cannot be seen; gl_kb null"));
  out.device_wide_unknown = true;
  for (int pid : pids) {
    ProcessGpu& g = out.by_pid[pid];
    g.gl_kb = g.gl_mtrack_kb = g.egl_mtrack_kb = std::nullopt;
    g.gl_source = absl::StrCat("unavailable: ", why);
  }
}

}  // namespace

GpuAttribution AttributeGpu(const Capture& capture, Platform platform, uint64_t page_size, const std::vector<int>& pids,
                            Report& report) {
  GpuAttribution out;
  switch (platform) {
    case Platform::kQcom:
      AttributeQcom(capture, pids, out, report);
      break;
    case Platform::kMtk:
    case Platform::kXring:
    case Platform::kMali:
      AttributeMali(capture, platform, page_size, pids, out, report);
      break;
    case Platform::kGeneric:
      AttributeGeneric(capture, pids, out, report);
      break;
  }
  return out;
}

}  // namespace memfleet::accounting
