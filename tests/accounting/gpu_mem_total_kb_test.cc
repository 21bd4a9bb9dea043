// ParseGpuMemSnapshot: the text of `dumpsys gpu --gpumem` (the Rockchip sample device's, and its variants).
#include "accounting/gpu_mem_total_kb.h"

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/support/test_data.h"

using memfleet::testing::ReadTestData;

namespace memfleet::accounting {
namespace {

TEST(GpuMemSnapshotTest, RockchipSample) {
  absl::StatusOr<GpuMemSnapshot> s =
      ParseGpuMemSnapshot(ReadTestData("captures/mali-rockchip/tree/cmd/dumpsys_gpu_gpumem"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->gpu_count, 1);
  EXPECT_EQ(s->global_bytes, std::optional<uint64_t>(2154022033u));  // 2,103,537 kB in expected.json
  EXPECT_EQ(s->total_bytes_by_pid.size(), 9u);
  EXPECT_EQ(s->total_bytes_by_pid.at(27447), 239947815u);
}

TEST(GpuMemSnapshotTest, GlobalNotAvailableAndSeveralGpusSum) {
  absl::StatusOr<GpuMemSnapshot> s = ParseGpuMemSnapshot(
      "Memory snapshot for GPU 0:\nGlobal total: N/A\nProc 42 total: 4096\n"
      "Memory snapshot for GPU 1:\nGlobal total: 8192\nProc 42 total: 1024\nProc 7 total: 0\n");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->gpu_count, 2);
  EXPECT_FALSE(s->global_bytes.has_value());  // one GPU unknown: the sum is unknown
  EXPECT_EQ(s->total_bytes_by_pid, (std::map<int, uint64_t>{{7, 0}, {42, 5120}}));
}

TEST(GpuMemSnapshotTest, BadLinesAreErrorsNamingTheLine) {
  for (const char* bad :
       {"Memory snapshot for GPU 0:\nGlobal total: -1\n", "Memory snapshot for GPU 0:\nProc x total: 1\n",
        "Memory snapshot for GPU 0:\nProc 1 total 1\n", "Memory snapshot for GPU 0:\nProc 1 total: 1 2\n",
        "Memory snapshot for GPU 0:\nProc 99999999999 total: 1\n",
        "Memory snapshot for GPU 0:\nProc 1 total: 18446744073709551616\n"}) {
    SCOPED_TRACE(bad);
    absl::StatusOr<GpuMemSnapshot> s = ParseGpuMemSnapshot(bad);
    ASSERT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(s.status().message()).find("line 2"), std::string::npos) << s.status();
  }
}

TEST(GpuMemSnapshotTest, SumsThatOverflowAreErrors) {
  absl::StatusOr<GpuMemSnapshot> s = ParseGpuMemSnapshot(
      "Memory snapshot for GPU 0:\nProc 1 total: 18446744073709551615\nMemory snapshot for GPU 1:\nProc 1 total: 1\n");
  ASSERT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.status().message()).find("line 4: process total overflows"), std::string::npos) << s.status();
}

TEST(GpuMemSnapshotTest, NoSnapshotIsAnError) {
  EXPECT_EQ(ParseGpuMemSnapshot("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseGpuMemSnapshot("Failed to initialize GPU memory eBPF\n").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace memfleet::accounting
