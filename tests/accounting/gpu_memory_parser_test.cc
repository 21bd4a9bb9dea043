#include "accounting/gpu_memory_parser.h"

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/support/test_data.h"
#include "tests/support/status_message.h"

namespace memfleet::accounting {
namespace {

using memfleet::testing::ReadTestData;

using testing::MessageHas;

// ---- MediaTek /proc/mtk_mali/gpu_memory ----

TEST(MtkGpuMemoryTest, NodeSampleSumsContextsPerTgid) {
  absl::StatusOr<GpuPages> g = ParseMtkGpuMemory(ReadTestData("nodes/mtk_gpu_memory.txt"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->layout, "mtk");
  EXPECT_EQ(g->device_name, "mali0");
  EXPECT_EQ(g->device_pages, 181734u);
  // Columns are pointer, used pages, tgid: tgid 1893 has two contexts, 61204 + 1532.
  const std::map<int, uint64_t> want = {{1893, 62736}, {24117, 118998}};
  EXPECT_EQ(g->pages_by_tgid, want);
}

TEST(MtkGpuMemoryTest, CaptureMt6989) {
  absl::StatusOr<GpuPages> g = ParseMtkGpuMemory(ReadTestData("captures-samples/mtk-mt6989/proc/mtk_mali/gpu_memory"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->device_pages, 384131u);
  // Summed by hand from the file's kctx lines (last column = tgid); × 4 KiB they are the gl_kb of
  // the capture's expected.json (26272: 86676 pages = 346704 kB).
  const std::map<int, uint64_t> want = {
      {26272, 16211 + 36326 + 34139},  // 86676
      {12881, 30840 + 18172 + 22970},  // 71982
      {13129, 10240 + 5820},           // 16060
      {19070, 27270 + 31881 + 419},    // 59570
      {11750, 26163},
      {13714, 23884 + 21707 + 36384},  // 81975
      {5478, 14394},
      {18509, 27234},
  };
  EXPECT_EQ(g->pages_by_tgid, want);
  EXPECT_EQ(g->pages_by_tgid.at(26272) * 4096 / 1024, 346704u);
}

TEST(MtkGpuMemoryTest, InvalidMeansRetry) {
  EXPECT_EQ(ParseMtkGpuMemory("<INVALID>").status().code(), absl::StatusCode::kUnavailable);
}

TEST(MtkGpuMemoryTest, MemtrackDisabledIsFailedPrecondition) {
  EXPECT_EQ(ParseMtkGpuMemory("GPU mem_profile doesn't be enabled\n").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(MtkGpuMemoryTest, UpstreamMaliLayoutHasNoTgid) {
  // Upstream kbase debugfs prints "kctx-0x.. <pages>" only: taking the pages for a tgid would be a
  // lie.
  absl::StatusOr<GpuPages> g = ParseMtkGpuMemory(ReadTestData("nodes/mali_debugfs_gpu_memory.txt"));
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(MessageHas(g.status(), "line 2")) << g.status();
}

TEST(MtkGpuMemoryTest, BadInput) {
  EXPECT_EQ(ParseMtkGpuMemory("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseMtkGpuMemory("\n \n").status().code(), absl::StatusCode::kInvalidArgument);
  // No device line.
  EXPECT_EQ(ParseMtkGpuMemory("  kctx-0x00000000e2b1c4a5      61204       1893\n").status().code(),
            absl::StatusCode::kInvalidArgument);
  // Non-numeric pages and tgid, and a tgid too big for a pid.
  for (const char* kctx :
       {"  kctx-0x1 abc 1893\n", "  kctx-0x1 12 x1893\n", "  kctx-0x1 12 99999999999\n", "  kctx-0x1 -12 1893\n",
        "  kctx-0x1 12 1893 7\n", "  kctx-0x1 99999999999999999999 1893\n"}) {
    SCOPED_TRACE(kctx);
    absl::StatusOr<GpuPages> g = ParseMtkGpuMemory(std::string("mali0  10\n") + kctx);
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(MessageHas(g.status(), "line 2")) << g.status();
  }
  // Binary garbage.
  EXPECT_EQ(ParseMtkGpuMemory(std::string("\x01\x02\x00\xff", 4)).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MtkGpuMemoryTest, SumOverflowIsAnError) {
  const std::string text = "mali0 1\n  kctx-0x1 18446744073709551615 7\n  kctx-0x2 1 7\n";
  EXPECT_EQ(ParseMtkGpuMemory(text).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MtkGpuMemoryTest, OtherLinesAreIgnored) {
  absl::StatusOr<GpuPages> g =
      ParseMtkGpuMemory("mali0                 100\nglobal-pool 20\n  kctx-0x1 7 42\nsomething else\n");
  ASSERT_TRUE(g.ok()) << g.status();
  const std::map<int, uint64_t> want = {{42, 7}};
  EXPECT_EQ(g->pages_by_tgid, want);
}

TEST(MtkGpuMemoryTest, NoContextsIsEmpty) {
  absl::StatusOr<GpuPages> g = ParseMtkGpuMemory("mali0                      0\n");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->pages_by_tgid.empty());
}

// ---- XRing /proc/xgpu/gpu_memory ----

TEST(XgpuGpuMemoryTest, V1SumsContextsPerTgid) {
  absl::StatusOr<GpuPages> g = ParseXgpuGpuMemory(ReadTestData("nodes/xring_v1.txt"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->layout, "xring-v1");
  EXPECT_EQ(g->device_name, "mali0");
  EXPECT_EQ(g->device_pages, 181734u);
  // v1: tgid first, pages third; 1893 has two contexts.
  const std::map<int, uint64_t> want = {{1893, 61204 + 1532}, {24117, 118998}};
  EXPECT_EQ(g->pages_by_tgid, want);
}

TEST(XgpuGpuMemoryTest, V2TakesGlColumn) {
  absl::StatusOr<GpuPages> g = ParseXgpuGpuMemory(ReadTestData("nodes/xring_v2.txt"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->layout, "xring-v2");
  EXPECT_EQ(g->device_pages, 181734u);  // not the 210944 dma-buf pages of the third column
  // Column 2 (GL pages), not pss (30212) or rss (95874).
  const std::map<int, uint64_t> want = {{1893, 62736}, {24117, 118998}};
  EXPECT_EQ(g->pages_by_tgid, want);
}

TEST(XgpuGpuMemoryTest, CaptureXringO1) {
  absl::StatusOr<GpuPages> g = ParseXgpuGpuMemory(ReadTestData("captures-samples/xring-o1/proc/xgpu/gpu_memory"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->layout, "xring-v2");
  EXPECT_EQ(g->device_pages, 124490u);
  // Column 2 of each line, read by hand; × 4 KiB they are expected.json's gl_kb (18431: 9652 kB).
  const std::map<int, uint64_t> want = {{18431, 2413},  {28995, 1755},  {4331, 21642},  {27852, 7609},
                                        {22085, 37790}, {24246, 30209}, {21320, 20172}, {26673, 2900}};
  EXPECT_EQ(g->pages_by_tgid, want);
}

TEST(XgpuGpuMemoryTest, LayoutComesFromProcessLinesNotDeviceLine) {
  // A three-column device line (v2 style) with v1 process lines is v1.
  absl::StatusOr<GpuPages> g = ParseXgpuGpuMemory("mali0  100  50\n7 kctx-0x0000000000000000  12\n");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->layout, "xring-v1");
  EXPECT_EQ(g->pages_by_tgid.at(7), 12u);
}

TEST(XgpuGpuMemoryTest, V2WrappedPssRssAreTolerated) {
  // pss/rss are 32-bit ints in the driver and go negative past 2 GiB; gl is still right.
  absl::StatusOr<GpuPages> g = ParseXgpuGpuMemory("mali0  100  50\n1893   62736   -30212   -95874\n");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->pages_by_tgid.at(1893), 62736u);
}

TEST(XgpuGpuMemoryTest, InvalidMeansRetry) {
  EXPECT_EQ(ParseXgpuGpuMemory("<INVALID>").status().code(), absl::StatusCode::kUnavailable);
}

TEST(XgpuGpuMemoryTest, MixedLayoutsAreRejected) {
  absl::StatusOr<GpuPages> g = ParseXgpuGpuMemory(
      "mali0                 181734\n"
      "1893 kctx-0x0000000000000000      61204\n"
      "24117                 118998        2048        4096\n");
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(MessageHas(g.status(), "line 3")) << g.status();
}

TEST(XgpuGpuMemoryTest, V2NonNumericColumnIsRejected) {
  absl::StatusOr<GpuPages> g = ParseXgpuGpuMemory(
      "mali0                 181734      210944\n"
      "1893                   62736       30212       95874\n"
      "24117                 118998        20x8        4096\n");
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(MessageHas(g.status(), "line 3")) << g.status();
}

TEST(XgpuGpuMemoryTest, TruncatedProcessLinesAreRejected) {
  for (const char* line : {"1893\n", "1893 kctx-0x0000\n", "1893   62736   30212\n", "1893 kctx-0x0 12 13\n",
                           "1893 62736 30212 95874 1\n"}) {
    SCOPED_TRACE(line);
    EXPECT_EQ(ParseXgpuGpuMemory(std::string("mali0 1\n") + line).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(XgpuGpuMemoryTest, UnrelatedLinesAreIgnored) {
  absl::StatusOr<GpuPages> g = ParseXgpuGpuMemory(
      "mali0                 181734      210944\n"
      "\n"
      "total pages\n"
      "1893                   62736       30212       95874\n"
      "-- end --\n");
  ASSERT_TRUE(g.ok()) << g.status();
  const std::map<int, uint64_t> want = {{1893, 62736}};
  EXPECT_EQ(g->pages_by_tgid, want);
}

TEST(XgpuGpuMemoryTest, MtkStyleContextLineIsRejected) {
  // Without a leading tgid the line fits no XRing layout; skipping it would drop its pages.
  EXPECT_EQ(ParseXgpuGpuMemory("mali0 1\n  kctx-0x00000000e2b1c4a5      61204       1893\n").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(XgpuGpuMemoryTest, BadInput) {
  EXPECT_EQ(ParseXgpuGpuMemory("").status().code(), absl::StatusCode::kInvalidArgument);
  // The first line is a process line: no device line.
  EXPECT_EQ(ParseXgpuGpuMemory("1893 62736 30212 95874\n").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseXgpuGpuMemory("mali0\n").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseXgpuGpuMemory("mali0 x\n").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(XgpuGpuMemoryTest, NoProcessLines) {
  absl::StatusOr<GpuPages> g = ParseXgpuGpuMemory("mali0                      0           0\n");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->pages_by_tgid.empty());
}

}  // namespace
}  // namespace memfleet::accounting
