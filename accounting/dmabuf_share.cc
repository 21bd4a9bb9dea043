#include "accounting/dmabuf_share.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "accounting/kb_math.h"
#include "accounting/sysfs_value.h"
#include "accounting/text_util.h"

namespace memfleet::accounting {
namespace {

// sysfs size of one buffer; nullopt (with a warning when present but bad) falls back to other sizes.
std::optional<uint64_t> SysfsSize(const Capture& capture, uint64_t ino, Report& report) {
  std::string path = absl::StrCat(kDmabufSysfsRoot, "/", ino, "/size");
  const Node* node = capture.Find(path);
  if (node == nullptr) return std::nullopt;
  if (node->is_error()) {
    report.warnings.push_back(absl::StrCat(path, ": unreadable (", node->content, "), using fdinfo/maps size"));
    return std::nullopt;
  }
  if (!node->is_file()) return std::nullopt;
  absl::StatusOr<uint64_t> v = ParseSysfsUint(node->content);
  if (!v.ok()) {
    report.warnings.push_back(absl::StrCat(path, ": ", v.status().message(), ", using fdinfo/maps size"));
    return std::nullopt;
  }
  return *v;
}

// The exporter of a buffer no fd names: its sysfs exporter_name, else "unknown".
std::string SysfsExporter(const Capture& capture, uint64_t ino) {
  const std::string* text = capture.FileContent(absl::StrCat(kDmabufSysfsRoot, "/", ino, "/exporter_name"));
  if (text == nullptr) return "unknown";
  std::string_view name = StripWhitespace(*text);
  return name.empty() ? "unknown" : std::string(name);
}

}  // namespace

void DmaBufLedger::AddFdRef(int pid, uint64_t ino, std::optional<uint64_t> fdinfo_size_bytes,
                            const std::string& exporter) {
  Buffer& b = buffers_[ino];
  b.holders.insert(pid);
  if (fdinfo_size_bytes && !b.fdinfo_size_bytes) b.fdinfo_size_bytes = fdinfo_size_bytes;
  if (b.fdinfo_exporter.empty()) b.fdinfo_exporter = exporter;
}

void DmaBufLedger::AddMapRef(int pid, uint64_t ino, uint64_t vma_length_bytes) {
  Buffer& b = buffers_[ino];
  b.holders.insert(pid);
  b.mappers.insert(pid);
  b.largest_map_bytes = std::max(b.largest_map_bytes, vma_length_bytes);
}

DmaBufShares DmaBufLedger::Share(const Capture& capture, Report& report) const {
  DmaBufShares out;
  for (const auto& [ino, b] : buffers_) {
    std::optional<uint64_t> size = SysfsSize(capture, ino, report);
    if (!size) size = b.fdinfo_size_bytes;
    if (!size) size = b.largest_map_bytes;
    uint64_t share = *size / b.holders.size();
    const std::string exporter = b.fdinfo_exporter.empty() ? SysfsExporter(capture, ino) : b.fdinfo_exporter;
    for (int pid : b.holders) {
      uint64_t& acc = out.share_bytes_by_pid[pid];
      if (!AddU64(acc, share)) acc = UINT64_MAX;
      uint64_t& by_exporter = out.share_bytes_by_pid_and_exporter[pid][exporter];
      if (!AddU64(by_exporter, share)) by_exporter = UINT64_MAX;
    }
    if (!b.mappers.empty() && !AddU64(out.mapped_bytes, *size)) out.mapped_bytes = UINT64_MAX;
  }
  if (capture.IsDirectory(kDmabufSysfsRoot)) {
    uint64_t total = 0;
    bool ok = true;
    for (const std::string& ino : capture.Children(kDmabufSysfsRoot)) {
      std::string path = absl::StrCat(kDmabufSysfsRoot, "/", ino, "/size");
      const std::string* text = capture.FileContent(path);
      absl::StatusOr<uint64_t> v =
          text != nullptr ? ParseSysfsUint(*text) : absl::StatusOr<uint64_t>(absl::NotFoundError(path));
      if (!v.ok() || !AddU64(total, *v)) {
        ok = false;
        break;
      }
    }
    if (ok) {
      out.total_exported_bytes = total;
    } else {
      report.warnings.push_back(
          absl::StrCat(kDmabufSysfsRoot, ": a buffer size is unreadable; DMA-BUF total of the dumpsys view unknown"));
    }
  }
  return out;
}

}  // namespace memfleet::accounting
