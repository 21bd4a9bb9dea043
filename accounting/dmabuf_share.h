// Attributes DMA-BUF memory to processes (docs/accounting.md section 2, dma_kb; Android 14+ rule): each
// buffer, keyed by inode, is split evenly between the processes that hold it by an fd or a mapping.
//
//   DmaBufLedger ledger;
//   ledger.AddFdRef(pid, ino, fdinfo_size_bytes);
//   ledger.AddMapRef(pid, ino, vma_length_bytes);
//   DmaBufShares s = ledger.Share(capture, report);   // s.share_bytes_by_pid[pid]
#ifndef MEMFLEET_ACCOUNTING_DMABUF_SHARE_H_
#define MEMFLEET_ACCOUNTING_DMABUF_SHARE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "accounting/dmabuf_name.h"
#include "accounting/model.h"

namespace memfleet::accounting {

inline constexpr char kDmabufSysfsRoot[] = "sys/kernel/dmabuf/buffers";

struct DmaBufShares {
  std::map<int, uint64_t> share_bytes_by_pid;  // Σ floor(size / holders) over the buffers a pid holds
  // The same shares by the buffers' exporter (fdinfo exp_name:, else sysfs exporter_name, else "unknown").
  std::map<int, std::map<std::string, uint64_t>> share_bytes_by_pid_and_exporter;
  // For the dumpsys view: Σ size of the unique buffers some process maps (getDmabufMappedSizeKb).
  uint64_t mapped_bytes = 0;
  // Σ sysfs sizes (getDmabufTotalExportedKb, bytes); nullopt when the capture has no sysfs buffers dir.
  std::optional<uint64_t> total_exported_bytes;
};

class DmaBufLedger {
 public:
  // An fd whose fdinfo has ino: and exp_name:. `fdinfo_size_bytes` is its size: line, if any.
  void AddFdRef(int pid, uint64_t ino, std::optional<uint64_t> fdinfo_size_bytes, const std::string& exporter);
  // A mapping named "/dmabuf" or "/dmabuf:...", with its length (end - start).
  void AddMapRef(int pid, uint64_t ino, uint64_t vma_length_bytes);

  // Sizes each buffer (sysfs size, else fdinfo size, else the largest mapping), names its exporter and
  // splits it.
  DmaBufShares Share(const Capture& capture, Report& report) const;

 private:
  struct Buffer {
    std::set<int> holders;
    std::set<int> mappers;
    std::optional<uint64_t> fdinfo_size_bytes;
    std::string fdinfo_exporter;  // "" until an fd names it
    uint64_t largest_map_bytes = 0;
  };
  std::map<uint64_t, Buffer> buffers_;
};

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_DMABUF_SHARE_H_
