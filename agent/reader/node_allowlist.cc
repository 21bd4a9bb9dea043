#include "agent/reader/node_allowlist.h"

#include <cstddef>

namespace memfleet::agent {
namespace {

// Segment patterns: a literal, or a literal prefix followed by one placeholder: "{num}" (IsNumericName)
// or "{region}" (IsSafeRegionName). Kept as data so the list reads like docs/capture-format.md.
constexpr std::string_view kFilePatterns[] = {
    "capture.json",
    "proc/meminfo",
    "proc/config.gz",
    "proc/{num}/cmdline",
    "proc/{num}/status",
    "proc/{num}/oom_score_adj",
    "proc/{num}/smaps",
    "proc/{num}/smaps_rollup",
    "proc/{num}/maps",
    "proc/{num}/fdinfo/{num}",
    "sys/kernel/dmabuf/buffers/{num}/size",
    "sys/kernel/dmabuf/buffers/{num}/exporter_name",
    "sys/kernel/mm/cma/{region}/alloc_pages_success",
    "sys/kernel/mm/cma/{region}/alloc_pages_fail",
    "sys/kernel/mm/cma/{region}/release_pages_success",
    "sys/kernel/mm/cma/{region}/total_pages",
    "sys/kernel/mm/cma/{region}/available_pages",
    "sys/kernel/mm/cma/{region}/gcma",
    "sys/kernel/debug/cma/{region}/count",
    "sys/kernel/debug/cma/{region}/used",
    "sys/kernel/debug/cma/{region}/order_per_bit",
    "sys/class/kgsl/kgsl/proc/{num}/gpumem_mapped",
    "sys/class/kgsl/kgsl/proc/{num}/gpumem_unmapped",
    "sys/class/kgsl/kgsl/proc/{num}/imported_mem",
    "sys/class/kgsl/kgsl/proc/{num}/kernel",
    "proc/mtk_mali/gpu_memory",
    "proc/dma_heap/rss_pid@{num}",
    "proc/xgpu/gpu_memory",
    "sys/kernel/debug/mali0/gpu_memory",
    "sys/block/zram{num}/mm_stat",
    "sys/block/zram{num}/mem_used_total",
    "sys/kernel/dma_heap/total_pools_kb",
    "sys/kernel/ion/total_heaps_kb",
    "sys/kernel/ion/total_pools_kb",
    "cmd/native_heap@{num}",
    "cmd/dumpsys_meminfo",
    "cmd/dumpsys_gpu_gpumem",
    "cmd/getprop",
};

constexpr std::string_view kDirectoryPatterns[] = {
    "proc",
    "proc/{num}",
    "proc/{num}/fdinfo",
    "proc/mtk_mali",
    "proc/xgpu",
    "proc/dma_heap",
    "sys/kernel/dmabuf/buffers",
    "sys/kernel/dmabuf/buffers/{num}",
    "sys/kernel/mm/cma",
    "sys/kernel/mm/cma/{region}",
    "sys/kernel/debug/cma",
    "sys/kernel/debug/cma/{region}",
    "sys/kernel/debug/mali0",
    "sys/class/kgsl/kgsl",
    "sys/class/kgsl/kgsl/proc",
    "sys/class/kgsl/kgsl/proc/{num}",
    "sys/block",
    "sys/block/zram{num}",
    "sys/kernel/dma_heap",
    "sys/kernel/ion",
    "cmd",
};

constexpr size_t kMaxPathLength = 512;  // the longest allowed path is far shorter

bool MatchSegment(std::string_view pattern, std::string_view segment) {
  size_t brace = pattern.find('{');
  if (brace == std::string_view::npos) return pattern == segment;
  std::string_view prefix = pattern.substr(0, brace);
  if (segment.size() < prefix.size() || segment.substr(0, prefix.size()) != prefix) return false;
  std::string_view rest = segment.substr(prefix.size());
  std::string_view placeholder = pattern.substr(brace);
  if (placeholder == "{num}") return IsNumericName(rest);
  if (placeholder == "{region}") return IsSafeRegionName(rest);
  return false;
}

bool MatchPath(std::string_view pattern, std::string_view path) {
  while (true) {
    size_t p_slash = pattern.find('/');
    size_t s_slash = path.find('/');
    if (!MatchSegment(pattern.substr(0, p_slash), path.substr(0, s_slash))) return false;
    bool pattern_done = p_slash == std::string_view::npos;
    bool path_done = s_slash == std::string_view::npos;
    if (pattern_done || path_done) return pattern_done && path_done;
    pattern.remove_prefix(p_slash + 1);
    path.remove_prefix(s_slash + 1);
  }
}

template <size_t N>
bool MatchAny(const std::string_view (&patterns)[N], std::string_view path) {
  // Match() would reject these too, segment by segment; refusing them up front keeps that obvious.
  if (path.empty() || path.size() > kMaxPathLength || path.find('\0') != std::string_view::npos) return false;
  for (std::string_view pattern : patterns) {
    if (MatchPath(pattern, path)) return true;
  }
  return false;
}

}  // namespace

bool IsNumericName(std::string_view name) {
  if (name.empty() || name.size() > 20) return false;
  if (name.size() > 1 && name[0] == '0') return false;
  for (char c : name) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool IsSafeRegionName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name == ".") return false;
  if (name.find("..") != std::string_view::npos) return false;
  for (char c : name) {
    if (c <= ' ' || c > '~' || c == '/') return false;
  }
  return true;
}

bool IsAllowed(std::string_view path) { return MatchAny(kFilePatterns, path); }

bool IsAllowedDirectory(std::string_view path) { return MatchAny(kDirectoryPatterns, path); }

}  // namespace memfleet::agent
