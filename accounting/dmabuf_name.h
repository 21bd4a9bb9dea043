// The names a dma-buf mapping has in smaps and maps: the one rule the parser, the DMA-BUF share and
// the legacy-kernel check use (docs/accounting.md, dma_kb).
//
//   IsDmaBufMappingName("/dmabuf:qcom,system");          // true: dmabuffs_dname's "/dmabuf:<name>"
//   IsLegacyDmaBufMappingName("anon_inode:dmabuf");       // true: kernels before dmabuffs_dname
#ifndef MEMFLEET_ACCOUNTING_DMABUF_NAME_H_
#define MEMFLEET_ACCOUNTING_DMABUF_NAME_H_

#include <string_view>

namespace memfleet::accounting {

// Legacy kernels (before dmabuffs_dname) name every dma-buf mapping this, which names no buffer.
inline constexpr char kLegacyDmaBufMappingName[] = "anon_inode:dmabuf";

// "/dmabuf" and "/dmabuf:<name>", as dmabuffs_dname prints them; not "/dmabufx" nor "/dmabuf-x".
inline bool IsDmaBufMappingName(std::string_view name) {
  constexpr std::string_view kName = "/dmabuf";
  return name.substr(0, kName.size()) == kName && (name.size() == kName.size() || name[kName.size()] == ':');
}

inline bool IsLegacyDmaBufMappingName(std::string_view name) { return name == kLegacyDmaBufMappingName; }

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_DMABUF_NAME_H_
