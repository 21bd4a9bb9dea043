// Test support: a hostile capture tree in a temporary folder — a valid header and meminfo, and processes
// whose smaps are sparse files of a given size (ftruncate: no disk used, but every byte reads as NUL), the
// way a tree can make a reader hold far more than it looks. Header-only.
//
//   testing::TempDir dir("caps");
//   ASSERT_TRUE(testing::WriteSparseSmapsTree(dir, {101, 102}, 20'000'000));
#ifndef MEMFLEET_TESTS_SUPPORT_SPARSE_TREE_H_
#define MEMFLEET_TESTS_SUPPORT_SPARSE_TREE_H_

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace memfleet::testing {

// Writes capture.json, proc/meminfo, and proc/<pid>/{cmdline,oom_score_adj,smaps} with smaps sparse of
// `smaps_bytes` each. False when a file could not be made.
inline bool WriteSparseSmapsTree(const TempDir& dir, const std::vector<int>& pids, off_t smaps_bytes) {
  dir.Write("capture.json",
            "{\"format\": 1, \"device_id\": \"sparse-1\", \"captured_at\": \"2026-11-30T08:00:00Z\", "
            "\"page_size\": 4096}\n");
  dir.Write("proc/meminfo", "MemTotal:        8000000 kB\nMemFree:         1000000 kB\n");
  for (int pid : pids) {
    const std::string p = "proc/" + std::to_string(pid);
    dir.Write(p + "/cmdline", std::string("app") + std::to_string(pid) + '\0');
    dir.Write(p + "/oom_score_adj", "0\n");
    const std::string smaps = dir.Write(p + "/smaps", "");
    int fd = open(smaps.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = ftruncate(fd, smaps_bytes) == 0;
    close(fd);
    if (!ok) return false;
  }
  return true;
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_SPARSE_TREE_H_
