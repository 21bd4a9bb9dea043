// dma_by_exporter_kb (docs/accounting.md, "DMA-BUF by exporter"): a process's dma_kb split by the
// exporter of each buffer it holds — the camera's heap, gralloc's, the display's — with the same shares
// as dma_kb, so a lab sees which driver's buffers grew.
//
//   std::optional<std::map<std::string, int64_t>> by = DmaByExporterKb(shares, pid, p.dma_kb);
//   // {"qcom,system": 9248, "system": 40}
//
// Pure.
#ifndef MEMFLEET_ACCOUNTING_DMA_BY_EXPORTER_KB_H_
#define MEMFLEET_ACCOUNTING_DMA_BY_EXPORTER_KB_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "accounting/dmabuf_share.h"
#include "accounting/model.h"

namespace memfleet::accounting {

// Each exporter's entry is floor(Σ the process's shares of its buffers / 1024), floored on its own, so
// the entries add up to dma_kb or a few kB less. Empty for a process that holds no buffer; nullopt when
// dma_kb is null (a legacy kernel's mappings name no buffer, so no split is known either).
std::optional<std::map<std::string, int64_t>> DmaByExporterKb(const DmaBufShares& shares, int pid, const Kb& dma_kb);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_DMA_BY_EXPORTER_KB_H_
