// A capture's process figures as the store keeps them: one block of bytes per capture (device_reports.
// processes), each process a few bytes — its name's number (process_names), its pid, which of the nine
// figures it has and those figures, as variable-length integers. One row per process costs ~100-190 bytes
// on PostgreSQL (a tuple header and an index entry each) against ~20 here (docs/performance.md "Bytes per
// stored capture"); every query that reads process figures reads a capture's block, in the store's C++.
//
//   std::string block = EncodeProcessBlock({{.name_no = 3, .pid = 1234, .figures = {...}}});
//   absl::StatusOr<std::vector<ProcessSample>> back = DecodeProcessBlock(block);   // sorted by name_no, pid
//
// Pure; a block that is not one EncodeProcessBlock wrote (corrupt, truncated, trailing bytes) is DataLoss.
#ifndef MEMFLEET_STORAGE_PROCESS_BLOCK_H_
#define MEMFLEET_STORAGE_PROCESS_BLOCK_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace memfleet::storage {

// The process figures, in their block order; ProcessFigureIndex names them.
inline constexpr size_t kProcessFigureCount = 9;
inline constexpr const char* kProcessFigureNames[kProcessFigureCount] = {
    "total_kb",           "pss_kb",          "swap_pss_kb",    "gfxdev_kb", "gl_kb", "dma_kb",
    "native_graphics_kb", "non_graphics_kb", "graphics_dma_kb"};

struct ProcessSample {
  int64_t name_no = 0;
  int64_t pid = 0;
  std::array<std::optional<int64_t>, kProcessFigureCount> figures;  // nullopt: the figure is unknown
};

// The block of `samples` (in any order; written sorted by name_no, then pid).
std::string EncodeProcessBlock(std::vector<ProcessSample> samples);

// Every sample of the block, sorted by name_no then pid. An empty block has none.
absl::StatusOr<std::vector<ProcessSample>> DecodeProcessBlock(std::string_view block);

// The samples of one name (several pids: a restarted service), in pid order.
absl::StatusOr<std::vector<ProcessSample>> ProcessSamplesNamed(std::string_view block, int64_t name_no);

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_PROCESS_BLOCK_H_
