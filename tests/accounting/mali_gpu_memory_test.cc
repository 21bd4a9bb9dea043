// ParseMaliGpuMemory on the real texts of three SoCs (tests/data/nodes/real, sources in SOURCES.md there),
// the Rockchip sample device's node, Arm's stock layout, and bad input.
#include "accounting/mali_gpu_memory.h"

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/support/test_data.h"
#include "tests/support/status_message.h"

using memfleet::testing::ReadTestData;

namespace memfleet::accounting {
namespace {

using testing::MessageHas;

// Amlogic: a header names the columns, rows are "<addr> <pid> <pages>" without "kctx-".
TEST(MaliGpuMemoryTest, RealAmlogicHeaderLayout) {
  absl::StatusOr<GpuPages> g = ParseMaliGpuMemory(ReadTestData("nodes/real/mali_amlogic_debugfs.txt"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->layout, "mali-amlogic");
  EXPECT_TRUE(g->per_process);
  EXPECT_EQ(g->device_name, "mali0");
  EXPECT_EQ(g->device_pages, 25939u);  // "mali0 total used_pages 25939": the last number
  const std::map<int, uint64_t> want = {{14880, 4558}, {14438, 135}, {14292, 16359}, {10899, 4887}};
  EXPECT_EQ(g->pages_by_tgid, want);
}

// Realtek: MediaTek-style "kctx-0x<addr> <pages> <tgid>" with leading spaces; the contexts add up to the
// device line exactly, which tells the columns apart (pages second, tgid third).
TEST(MaliGpuMemoryTest, RealRealtekMtkStyleLayout) {
  absl::StatusOr<GpuPages> g = ParseMaliGpuMemory(ReadTestData("nodes/real/mali_realtek_debugfs.txt"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->layout, "mali-mtk");
  EXPECT_EQ(g->device_pages, 45605u);
  const std::map<int, uint64_t> want = {{15898, 14102}, {15833, 42}, {9134, 3316},
                                        {8344, 20929},  {6235, 135}, {4962, 7081}};
  EXPECT_EQ(g->pages_by_tgid, want);
  uint64_t sum = 0;
  for (const auto& [pid, pages] : g->pages_by_tgid) sum += pages;
  EXPECT_EQ(sum, g->device_pages);
}

TEST(MaliGpuMemoryTest, RealMt6755WithoutLeadingSpaces) {
  absl::StatusOr<GpuPages> g = ParseMaliGpuMemory(ReadTestData("nodes/real/mali_mtk6755_debugfs.txt"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->layout, "mali-mtk");
  EXPECT_EQ(g->device_pages, 8237u);
  const std::map<int, uint64_t> want = {{10822, 291}, {2183, 4242}};
  EXPECT_EQ(g->pages_by_tgid, want);
}

// Rockchip: "kctx-0x<addr> <comm> <tgid> <pages>", comm with spaces ("GLThread 12", "hwuiTask 1").
TEST(MaliGpuMemoryTest, RockchipCommWithSpaces) {
  absl::StatusOr<GpuPages> g =
      ParseMaliGpuMemory(ReadTestData("captures/mali-rockchip/tree/sys/kernel/debug/mali0/gpu_memory"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->layout, "mali-rockchip");
  EXPECT_EQ(g->device_pages, 330219u);
  EXPECT_EQ(g->pages_by_tgid.at(6929), 13639u + 12296u + 1261u);
  EXPECT_EQ(g->pages_by_tgid.at(1675), 10315u + 6279u);  // "GLThread 12  1675  6279": 12 is comm
  EXPECT_EQ(g->pages_by_tgid.count(12), 0u);
  EXPECT_EQ(g->pages_by_tgid.size(), 9u);
}

// Arm's stock kbase: no pid column, so nobody can be attributed; not an error, and not "0 for all".
TEST(MaliGpuMemoryTest, ArmStockLayoutIsNotPerProcess) {
  absl::StatusOr<GpuPages> g = ParseMaliGpuMemory(ReadTestData("nodes/mali_debugfs_gpu_memory.txt"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->layout, "mali-arm");
  EXPECT_FALSE(g->per_process);
  EXPECT_TRUE(g->pages_by_tgid.empty());
}

TEST(MaliGpuMemoryTest, DeviceLineAloneHasNoContexts) {
  absl::StatusOr<GpuPages> g = ParseMaliGpuMemory("mali0   0\n");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->layout, "mali");
  EXPECT_TRUE(g->per_process);
  EXPECT_TRUE(g->pages_by_tgid.empty());
}

TEST(MaliGpuMemoryTest, BadInputNamesTheLine) {
  EXPECT_EQ(ParseMaliGpuMemory("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseMaliGpuMemory(" \n\n").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseMaliGpuMemory("<INVALID>\n").status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ParseMaliGpuMemory("kctx-0x1 12 100\n").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseMaliGpuMemory("mali0 many\n").status().code(), absl::StatusCode::kInvalidArgument);
  for (const char* bad : {
           "mali0 10\nkctx-0x1 12 100\nkctx-0x2 12\n",                   // MediaTek-style, then stock
           "mali0 10\nkctx-0x1 x 100\n",                                 // pages not a number
           "mali0 10\nkctx-0x1 12 -100\n",                               // negative tgid
           "mali0 10\nkctx-0x1 comm 100 -4\n",                           // Rockchip, negative pages
           "mali0 10\nkctx-0x1 comm 99999999999 4\n",                    // pid beyond int
           "mali0 10\nkctx pid used_pages\nf1dbf000 14880\n",            // Amlogic row short of a column
           "mali0 10\nkctx pid used_pages\nf1dbf000 x 4558\n",           // Amlogic pid not a number
           "mali0 10\nkctx-0x1 99999999999999999999 1\n",                // does not fit 64 bits
           "mali0 10\nkctx-0x1 18446744073709551615 1\nkctx-0x2 1 1\n",  // the sum overflows
       }) {
    SCOPED_TRACE(bad);
    absl::StatusOr<GpuPages> g = ParseMaliGpuMemory(bad);
    ASSERT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
    EXPECT_TRUE(MessageHas(g.status(), "mali0/gpu_memory line ")) << g.status();
  }
}

TEST(MaliGpuMemoryTest, SeparatorsAndVendorLinesAreIgnored) {
  absl::StatusOr<GpuPages> g = ParseMaliGpuMemory(
      "mali0 total used_pages 20\n------\nkctx pid used_pages\n------\nf1 7 5\nglobal-pool 3\n0x2a 7 15\n");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->pages_by_tgid, (std::map<int, uint64_t>{{7, 20}}));
}

}  // namespace
}  // namespace memfleet::accounting
