// The names a dma-buf mapping has in smaps and maps: the one rule the parser, the DMA-BUF share and
// the legacy-kernel check use (docs/accounting.md, dma_kb).
//
//   IsDmaBufMappingName("/dmabuf:qcom,system");          // true: dmabuffs_dname's "/dmabuf:<name>"
//   IsDmaBufMappingName("/dmabuf (deleted)");            // true: 4.9/4.14 kernels with the naming backport
//   IsLegacyDmaBufMappingName("anon_inode:dmabuf332");   // true: kernels before dmabuffs_dname
#ifndef MEMFLEET_ACCOUNTING_DMABUF_NAME_H_
#define MEMFLEET_ACCOUNTING_DMABUF_NAME_H_

#include <string_view>

namespace memfleet::accounting {

// Legacy kernels (before dmabuffs_dname) name every dma-buf mapping this, which names no buffer; some
// vendor kernels append an index ("anon_inode:dmabuf332"), which names none either.
inline constexpr char kLegacyDmaBufMappingName[] = "anon_inode:dmabuf";

// Any name starting with "/dmabuf", as Android's own dma-buf tools decide: "/dmabuf", "/dmabuf:<name>",
// and "/dmabuf (deleted)", which kernels with the naming backport print.
inline bool IsDmaBufMappingName(std::string_view name) {
  constexpr std::string_view kName = "/dmabuf";
  return name.substr(0, kName.size()) == kName;
}

inline bool IsLegacyDmaBufMappingName(std::string_view name) {
  constexpr std::string_view kName = kLegacyDmaBufMappingName;
  return name.substr(0, kName.size()) == kName;
}

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_DMABUF_NAME_H_
