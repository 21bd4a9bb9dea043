#include "accounting/cma_accounting.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "accounting/kb_math.h"
#include "accounting/kernel_cma_kb.h"
#include "accounting/sysfs_value.h"

namespace memfleet::accounting {
namespace {

// Reads a single-number node. Absent: nullopt with *present = false. Present but unreadable or
// malformed: nullopt with *present = true and a warning naming the node.
std::optional<uint64_t> ReadCounter(const Capture& capture, const std::string& path, Report& report, bool* present) {
  const Node* node = capture.Find(path);
  *present = node != nullptr;
  if (node == nullptr) return std::nullopt;
  if (node->is_error()) {
    report.warnings.push_back(absl::StrCat(path, ": unreadable (", node->content, ")"));
    return std::nullopt;
  }
  if (!node->is_file()) return std::nullopt;
  absl::StatusOr<uint64_t> v = ParseSysfsUint(node->content);
  if (!v.ok()) {
    report.warnings.push_back(absl::StrCat(path, ": ", v.status().message()));
    return std::nullopt;
  }
  return *v;
}

std::vector<std::string> RegionDirs(const Capture& capture, const char* root) {
  std::vector<std::string> out;
  for (const std::string& name : capture.Children(root)) {
    if (capture.IsDirectory(absl::StrCat(root, "/", name))) out.push_back(name);
  }
  return out;
}

}  // namespace

std::string DebugfsDirOfRegion(const Capture& capture, std::string_view region) {
  std::string full = absl::StrCat(kCmaDebugfsRoot, "/", std::string(region));
  if (capture.IsDirectory(full)) return std::string(region);
  std::string old_name = absl::StrCat("cma-", std::string(region)).substr(0, 15);
  if (capture.IsDirectory(absl::StrCat(kCmaDebugfsRoot, "/", old_name))) return old_name;
  return "";
}

CmaFigures ComputeCma(const Capture& capture, uint64_t page_size, std::optional<uint64_t> meminfo_cma_total_kb,
                      Report& report) {
  CmaFigures out;
  std::vector<std::string> sysfs_regions = RegionDirs(capture, kCmaSysfsRoot);
  std::vector<std::string> debugfs_dirs = RegionDirs(capture, kCmaDebugfsRoot);
  std::set<std::string> debugfs_claimed;

  // gcma_kb. A CMA sysfs folder the agent could not list (denied, not absent) may hold GCMA regions.
  const Node* sysfs_root = capture.Find(kCmaSysfsRoot);
  if (sysfs_root != nullptr && sysfs_root->is_error() && sysfs_root->content != "ENOENT") {
    report.warnings.push_back(absl::StrCat(kCmaSysfsRoot, ": unreadable (", sysfs_root->content, "): gcma_kb null"));
    report.sources["device.gcma_kb"] = absl::StrCat("unavailable: ", kCmaSysfsRoot, " unreadable");
  } else if (sysfs_regions.empty()) {
    out.gcma_kb = 0;
    report.sources["device.gcma_kb"] = absl::StrCat("no ", kCmaSysfsRoot, " regions: 0");
  } else {
    uint64_t gcma_pages = 0;
    bool known = true;
    std::vector<std::string> used;
    for (const std::string& region : sysfs_regions) {
      std::string dir = absl::StrCat(kCmaSysfsRoot, "/", region);
      bool present = false;
      std::optional<uint64_t> flag = ReadCounter(capture, dir + "/gcma", report, &present);
      if (!present) continue;  // no gcma file: not GCMA
      if (!flag) {
        known = false;
        continue;
      }
      if (*flag != 1) continue;
      std::string dbg = DebugfsDirOfRegion(capture, region);
      std::optional<uint64_t> pages;
      bool p2 = false;
      if (!dbg.empty()) {
        pages = ReadCounter(capture, absl::StrCat(kCmaDebugfsRoot, "/", dbg, "/count"), report, &p2);
        if (pages) used.push_back(absl::StrCat(kCmaDebugfsRoot, "/", dbg, "/count"));
      }
      if (!pages) {
        pages = ReadCounter(capture, dir + "/total_pages", report, &p2);
        if (pages) used.push_back(dir + "/total_pages");
      }
      if (!pages) {
        report.warnings.push_back(
            absl::StrCat("GCMA region ", region, ": neither debugfs count nor sysfs total_pages readable"));
        known = false;
        continue;
      }
      if (!AddU64(gcma_pages, *pages)) known = false;
    }
    if (known) {
      out.gcma_kb = KbFromPages(gcma_pages, page_size);
      report.sources["device.gcma_kb"] =
          used.empty() ? "no GCMA region (sys/kernel/mm/cma/*/gcma): 0"
                       : absl::StrCat("GCMA regions: ", absl::StrJoin(used, " + "), " x page_size");
    } else {
      report.sources["device.gcma_kb"] = "unavailable: a CMA region's gcma flag or size is unreadable";
    }
  }

  // kernel_cma_kb.
  if (sysfs_regions.empty() && debugfs_dirs.empty()) {
    CmaWithoutRegions none = KernelCmaWithoutRegions(meminfo_cma_total_kb);
    out.kernel_cma_kb = none.kernel_cma_kb;
    report.sources["device.kernel_cma_kb"] = none.source;
    if (none.warning) report.warnings.push_back(*none.warning);
    return out;
  }
  uint64_t held_pages = 0;
  bool known = true;
  for (const std::string& region : sysfs_regions) {
    std::string dir = absl::StrCat(kCmaSysfsRoot, "/", region);
    bool p1 = false, p2 = false;
    std::optional<uint64_t> alloc = ReadCounter(capture, dir + "/alloc_pages_success", report, &p1);
    std::optional<uint64_t> release = ReadCounter(capture, dir + "/release_pages_success", report, &p2);
    std::string dbg = DebugfsDirOfRegion(capture, region);
    if (!dbg.empty()) debugfs_claimed.insert(dbg);
    if (alloc && release && *alloc >= *release) {
      if (!AddU64(held_pages, *alloc - *release)) known = false;
      continue;
    }
    if (alloc && release) {
      report.warnings.push_back(absl::StrCat(dir, ": release_pages_success > alloc_pages_success"));
    }
    std::optional<uint64_t> used;
    bool p3 = false;
    if (!dbg.empty()) used = ReadCounter(capture, absl::StrCat(kCmaDebugfsRoot, "/", dbg, "/used"), report, &p3);
    if (!used) {
      report.warnings.push_back(absl::StrCat(
          "CMA region ", region, ": neither alloc_pages_success/release_pages_success nor debugfs used readable"));
      known = false;
      continue;
    }
    if (!AddU64(held_pages, *used)) known = false;
  }
  for (const std::string& dbg : debugfs_dirs) {
    if (debugfs_claimed.count(dbg) != 0) continue;
    bool p = false;
    std::optional<uint64_t> used = ReadCounter(capture, absl::StrCat(kCmaDebugfsRoot, "/", dbg, "/used"), report, &p);
    if (!used) {
      report.warnings.push_back(absl::StrCat("CMA debugfs region ", dbg, ": used unreadable"));
      known = false;
      continue;
    }
    if (!AddU64(held_pages, *used)) known = false;
  }
  if (known) {
    out.kernel_cma_kb = KbFromPages(held_pages, page_size);
    report.sources["device.kernel_cma_kb"] =
        "per CMA region: sysfs alloc_pages_success - release_pages_success, else debugfs used; x page_size";
  } else {
    report.sources["device.kernel_cma_kb"] = "unavailable: a CMA region's counters are unreadable";
  }
  return out;
}

}  // namespace memfleet::accounting
