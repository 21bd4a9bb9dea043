// Parses /proc/<pid>/fdinfo/<fd>; a dma-buf fd is one with an "exp_name:" line.
//
//   absl::StatusOr<Fdinfo> f = ParseFdinfo(text);
//   if (f->is_dmabuf() && f->ino) holders[*f->ino].insert(pid);
//
// Format: docs/node-formats.md section 4.2 (as libdmabufinfo's ReadDmaBufFdRefs reads it).
#ifndef MEMFLEET_ACCOUNTING_FDINFO_PARSER_H_
#define MEMFLEET_ACCOUNTING_FDINFO_PARSER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace memfleet::accounting {

struct Fdinfo {
  std::optional<uint64_t> ino;
  std::optional<uint64_t> size_bytes;
  std::optional<int64_t> count;
  std::optional<std::string> exp_name;  // present only on dma-buf fds
  std::optional<std::string> name;      // DMA_BUF_SET_NAME; may contain spaces

  bool is_dmabuf() const { return exp_name.has_value(); }
};

// Unknown lines (fd locks, eventfd-count, ...) are ignored. InvalidArgument when a known key's value does
// not parse (a non-numeric ino:/size:/count:); an empty text gives an empty Fdinfo (no dma-buf).
absl::StatusOr<Fdinfo> ParseFdinfo(std::string_view text);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_FDINFO_PARSER_H_
