#include "agent/reader/node_allowlist.h"

#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace memfleet::agent {
namespace {

using namespace std::string_literals;

TEST(NodeAllowlistTest, AllowsEveryNodeOfCaptureMd) {
  for (std::string_view path : {
           "capture.json",
           "proc/meminfo",
           "proc/config.gz",
           "proc/22459/cmdline",
           "proc/22459/status",
           "proc/22459/oom_score_adj",
           "proc/22459/smaps",
           "proc/22459/smaps_rollup",
           "proc/22459/maps",
           "proc/22459/fdinfo/0",
           "proc/22459/fdinfo/57",
           "sys/kernel/dmabuf/buffers/3499/size",
           "sys/kernel/dmabuf/buffers/3499/exporter_name",
           "sys/kernel/mm/cma/linux,cma/alloc_pages_success",
           "sys/kernel/mm/cma/linux,cma/alloc_pages_fail",
           "sys/kernel/mm/cma/secure_display/release_pages_success",
           "sys/kernel/mm/cma/camera_heap/total_pages",
           "sys/kernel/mm/cma/camera_heap/available_pages",
           "sys/kernel/mm/cma/gcma_heap/gcma",
           "sys/kernel/debug/cma/linux,cma/count",
           "sys/kernel/debug/cma/linux,cma/used",
           "sys/kernel/debug/cma/linux,cma/order_per_bit",
           "sys/class/kgsl/kgsl/proc/16160/gpumem_mapped",
           "sys/class/kgsl/kgsl/proc/16160/gpumem_unmapped",
           "sys/class/kgsl/kgsl/proc/16160/imported_mem",
           "sys/class/kgsl/kgsl/proc/16160/kernel",
           "proc/mtk_mali/gpu_memory",
           "proc/dma_heap/rss_pid@11750",
           "proc/xgpu/gpu_memory",
           "sys/kernel/debug/mali0/gpu_memory",
           "sys/block/zram0/mm_stat",
           "sys/block/zram12/mem_used_total",
           "sys/kernel/dma_heap/total_pools_kb",
           "sys/kernel/ion/total_heaps_kb",
           "sys/kernel/ion/total_pools_kb",
           "cmd/native_heap@14969",
           "cmd/dumpsys_meminfo",
           "cmd/dumpsys_gpu_gpumem",
       }) {
    EXPECT_TRUE(IsAllowed(path)) << path;
  }
}

TEST(NodeAllowlistTest, RefusesHostilePaths) {
  for (const std::string& path : {
           "proc/1/../../etc/shadow"s,
           "proc/self/smaps"s,  // <pid> is numeric: "self" would be the agent itself
           "proc/thread-self/smaps"s,
           "proc/1/environ"s,  // secrets live there
           "proc/1/mem"s,
           "proc/1/root/etc/shadow"s,
           "proc/1a/smaps"s,
           "proc/-1/smaps"s,
           "proc/+1/smaps"s,
           "proc/01/smaps"s,                     // not how the kernel names pids
           "proc/123456789012345678901/smaps"s,  // 21 digits
           "/proc/meminfo"s,
           "/etc/shadow"s,
           "proc//meminfo"s,
           "proc/meminfo/"s,
           "./proc/meminfo"s,
           "proc/./meminfo"s,
           "proc/1/fdinfo"s,  // a folder, not a node
           "proc/1/fdinfo/"s,
           "proc/1/fdinfo/x"s,
           "proc/1/fd/3"s,
           "proc/meminfo\0.txt"s,
           "proc/1/smaps\0"s,
           "proc/1\0/smaps"s,
           "sys/kernel/mm/cma/../x/gcma"s,
           "sys/kernel/mm/cma/../gcma"s,  // ".." as the region
           "sys/kernel/mm/cma/./gcma"s,
           "sys/kernel/mm/cma/a..b/gcma"s,
           "sys/kernel/mm/cma/a b/gcma"s,
           "sys/kernel/mm/cma//gcma"s,
           "sys/kernel/mm/cma/linux,cma/uevent"s,
           "sys/kernel/mm/cma/x\x7f/gcma"s,
           "sys/kernel/mm/cma/x\xc3\xa9/gcma"s,
           "sys/kernel/mm/cma/" + std::string(65, 'r') + "/gcma",
           "sys/kernel/debug/cma/linux,cma/bitmap"s,
           "sys/class/kgsl/kgsl/proc/self/gpumem_mapped"s,
           "sys/block/loop0/mm_stat"s,
           "sys/block/zram/mm_stat"s,
           "sys/block/zramx/mm_stat"s,
           "proc/dma_heap/rss_pid"s,  // only as a write-then-read node for a pid
           "proc/dma_heap/rss_pid@"s,
           "proc/dma_heap/rss_pid@self"s,
           "proc/dma_heap/all_heaps"s,
           "cmd/native_heap"s,
           "cmd/native_heap@1;rm -rf /"s,
           "cmd/native_heap@../../x"s,
           "cmd/sh"s,
           "cmd/dumpsys_meminfo@1"s,
           "capture.json.err"s,
           "etc/passwd"s,
           ""s,
           "/"s,
       }) {
    EXPECT_FALSE(IsAllowed(path)) << path;
  }
}

TEST(NodeAllowlistTest, RegionIsOneSafeSegment) {
  EXPECT_TRUE(IsSafeRegionName("linux,cma"));
  EXPECT_TRUE(IsSafeRegionName("secure_display"));
  EXPECT_TRUE(IsSafeRegionName(std::string(64, 'r')));
  EXPECT_FALSE(IsSafeRegionName(std::string(65, 'r')));
  EXPECT_FALSE(IsSafeRegionName(""));
  EXPECT_FALSE(IsSafeRegionName("."));
  EXPECT_FALSE(IsSafeRegionName(".."));
  EXPECT_FALSE(IsSafeRegionName("a/b"));
  EXPECT_FALSE(IsSafeRegionName("a\nb"));
  EXPECT_FALSE(IsSafeRegionName("a\0b"s));
}

TEST(NodeAllowlistTest, NumericNames) {
  EXPECT_TRUE(IsNumericName("0"));  // fd 0
  EXPECT_TRUE(IsNumericName("4194304"));
  EXPECT_TRUE(IsNumericName("18446744073709551615"));  // the largest inode
  EXPECT_FALSE(IsNumericName(""));
  EXPECT_FALSE(IsNumericName("00"));
  EXPECT_FALSE(IsNumericName("012"));
  EXPECT_FALSE(IsNumericName("1 "));
  EXPECT_FALSE(IsNumericName("123456789012345678901"));
}

TEST(NodeAllowlistTest, DirectoriesAreOnlyTheOnesTheCollectorWalks) {
  for (std::string_view dir : {"proc",
                               "proc/1",
                               "proc/1/fdinfo",
                               "proc/dma_heap",
                               "proc/mtk_mali",
                               "proc/xgpu",
                               "sys/kernel/dmabuf/buffers",
                               "sys/kernel/dmabuf/buffers/3499",
                               "sys/kernel/mm/cma",
                               "sys/kernel/mm/cma/linux,cma",
                               "sys/kernel/debug/cma",
                               "sys/kernel/debug/cma/secure_display",
                               "sys/class/kgsl/kgsl",
                               "sys/class/kgsl/kgsl/proc",
                               "sys/class/kgsl/kgsl/proc/16160",
                               "sys/block",
                               "sys/block/zram0",
                               "sys/kernel/dma_heap",
                               "sys/kernel/ion",
                               "sys/kernel/debug/mali0",
                               "cmd"}) {
    EXPECT_TRUE(IsAllowedDirectory(dir)) << dir;
  }
  for (const std::string& dir :
       {""s, "/"s, "/proc"s, "etc"s, "proc/self"s, "proc/1/task"s, "proc/1/fd"s, "proc/1/root"s, "proc/1/../.."s,
        "sys"s, "sys/kernel"s, "sys/kernel/debug"s, "sys/kernel/mm/cma/.."s, "sys/block/loop0"s, "proc/1\0"s,
        "sys/kernel/debug/mali1"s, "sys/kernel/debug/mali0/ctx"s}) {
    EXPECT_FALSE(IsAllowedDirectory(dir)) << dir;
  }
  // A node is not a folder and a folder is not a node.
  EXPECT_FALSE(IsAllowedDirectory("proc/meminfo"));
  EXPECT_FALSE(IsAllowed("proc"));
}

}  // namespace
}  // namespace memfleet::agent
