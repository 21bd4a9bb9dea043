// Parses MediaTek /proc/dma_heap/rss_pid (read after writing "pid:<pid>\n"): the DMA-heap PSS/RSS the
// MTK memtrack HAL reports as "EGL mtrack".
//
//   absl::StatusOr<RssPid> r = ParseMtkRssPid(text);
//   const RssPidRow* row = r->Find(pid);   // nullptr: the pid holds no dma-buf
//
// Format (new, old 5.10 and kprobe variants): docs/node-formats.md section 3.
#ifndef MEMFLEET_ACCOUNTING_MTK_RSS_PID_H_
#define MEMFLEET_ACCOUNTING_MTK_RSS_PID_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace memfleet::accounting {

struct RssPidRow {
  int pid = 0;
  uint64_t pss_kb = 0;
  uint64_t rss_kb = 0;
};

struct RssPid {
  std::vector<RssPidRow> rows;               // rows between the PID header and "-----EGL memtrack data end"
  std::optional<uint64_t> userspace_pss_kb;  // "--sum: userspace_pss:%ld KB rss:%ld KB"
  std::optional<uint64_t> userspace_rss_kb;
  std::optional<uint64_t> kernel_rss_kb;  // "--sum: kernel rss: %ld KB"

  const RssPidRow* Find(int pid) const {
    for (const RssPidRow& r : rows) {
      if (r.pid == pid) return &r;
    }
    return nullptr;
  }
};

// Empty text is a valid answer (the new variant prints nothing for a pid without dma-bufs): no rows.
// InvalidArgument (line number) for text without the "PID" header, a row that does not parse, or a
// table not closed by the end marker (truncated).
absl::StatusOr<RssPid> ParseMtkRssPid(std::string_view text);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_MTK_RSS_PID_H_
