#include "accounting/dma_by_exporter_kb.h"

#include "accounting/kb_math.h"

namespace memfleet::accounting {

std::optional<std::map<std::string, int64_t>> DmaByExporterKb(const DmaBufShares& shares, int pid, const Kb& dma_kb) {
  if (!dma_kb) return std::nullopt;
  std::map<std::string, int64_t> out;
  auto it = shares.share_bytes_by_pid_and_exporter.find(pid);
  if (it == shares.share_bytes_by_pid_and_exporter.end()) return out;
  for (const auto& [exporter, bytes] : it->second) {
    Kb kb = KbFromBytes(bytes);
    if (!kb) return std::nullopt;
    out[exporter] = *kb;
  }
  return out;
}

}  // namespace memfleet::accounting
