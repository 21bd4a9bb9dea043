// storage/process_block.h: a capture's process figures stored as one block — what goes in comes back
// (unknown figures stay unknown, never 0), sorted by name number then pid; a process costs a few bytes;
// damaged blocks are DataLoss, never a crash or a huge allocation.
#include "storage/process_block.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace memfleet::storage {
namespace {

ProcessSample Sample(int64_t name_no, int64_t pid, std::optional<int64_t> total_kb, std::optional<int64_t> pss_kb) {
  ProcessSample s;
  s.name_no = name_no;
  s.pid = pid;
  s.figures[0] = total_kb;
  s.figures[1] = pss_kb;
  return s;
}

TEST(ProcessBlockTest, EverySampleComesBackSortedWithUnknownFiguresUnknown) {
  ProcessSample gpu = Sample(7, 1234, 90'000, std::nullopt);
  gpu.figures[3] = 12'000;                               // gfxdev_kb
  gpu.figures[8] = std::numeric_limits<int64_t>::max();  // graphics_dma_kb: any int64 fits
  ProcessSample odd = Sample(2, 5, -3, 0);               // a negative figure and a true zero
  const std::string block = EncodeProcessBlock({gpu, Sample(7, 99, 10, 9), odd});
  absl::StatusOr<std::vector<ProcessSample>> back = DecodeProcessBlock(block);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), 3u);
  EXPECT_EQ((*back)[0].name_no, 2);
  EXPECT_EQ((*back)[0].figures[0], -3);
  EXPECT_EQ((*back)[0].figures[1], 0);  // 0 is a value, not "unknown"
  EXPECT_EQ((*back)[1].name_no, 7);
  EXPECT_EQ((*back)[1].pid, 99);  // pid order within a name
  EXPECT_EQ((*back)[2].pid, 1234);
  EXPECT_EQ((*back)[2].figures[0], 90'000);
  EXPECT_FALSE((*back)[2].figures[1].has_value());
  EXPECT_EQ((*back)[2].figures[3], 12'000);
  EXPECT_EQ((*back)[2].figures[8], std::numeric_limits<int64_t>::max());
  for (size_t i : {2u, 4u, 5u, 6u, 7u}) EXPECT_FALSE((*back)[2].figures[i].has_value()) << i;
}

TEST(ProcessBlockTest, OneNamesSamplesAreItsPidsInOrder) {
  const std::string block =
      EncodeProcessBlock({Sample(3, 40, 1, 1), Sample(1, 10, 2, 2), Sample(3, 30, 3, 3), Sample(9, 1, 4, 4)});
  absl::StatusOr<std::vector<ProcessSample>> named = ProcessSamplesNamed(block, 3);
  ASSERT_TRUE(named.ok()) << named.status();
  ASSERT_EQ(named->size(), 2u);
  EXPECT_EQ((*named)[0].pid, 30);
  EXPECT_EQ((*named)[1].pid, 40);
  absl::StatusOr<std::vector<ProcessSample>> none = ProcessSamplesNamed(block, 4);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// What a block is for: a phone's process row at a few bytes. A system_server-like process with six
// figures of hundreds of MB in kB, its name number in the hundreds and a five-digit pid.
TEST(ProcessBlockTest, AProcessWithSixFiguresTakesUnderTwentyFiveBytes) {
  std::vector<ProcessSample> samples;
  for (int i = 0; i < 40; ++i) {
    ProcessSample s;
    s.name_no = 300 + 3 * i;
    s.pid = 12'000 + 37 * i;
    for (size_t f : {0u, 1u, 2u, 5u, 6u, 7u}) s.figures[f] = 250'000 + 1'000 * i + static_cast<int64_t>(f);
    samples.push_back(s);
  }
  const std::string block = EncodeProcessBlock(samples);
  EXPECT_LT(block.size(), 40u * 25u) << block.size();
  absl::StatusOr<std::vector<ProcessSample>> back = DecodeProcessBlock(block);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->size(), 40u);
}

TEST(ProcessBlockTest, AnEmptyBlockHasNoSamples) {
  EXPECT_TRUE(EncodeProcessBlock({}).empty());
  absl::StatusOr<std::vector<ProcessSample>> back = DecodeProcessBlock("");
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->empty());
}

TEST(ProcessBlockTest, DamagedBlocksAreDataLoss) {
  const std::string good = EncodeProcessBlock({Sample(3, 40, 1, 2), Sample(5, 41, 3, std::nullopt)});
  const std::vector<std::string> damaged = {
      std::string("\x02") + good.substr(1),                // an unknown layout
      good.substr(0, good.size() - 1),                     // truncated
      good + std::string("\x00", 1),                       // trailing bytes
      std::string("\x01\xff\xff\xff\xff\x0f", 6),          // claims 4 billion processes in no bytes
      std::string("\x01\x01\x00\x00\xff\x7f", 6),          // a mask naming figures that do not exist
      std::string("\x01\x02\x0a\x00\x00\x01\x00\x00", 8),  // the second name number before the first
  };
  for (const std::string& block : damaged) {
    absl::StatusOr<std::vector<ProcessSample>> back = DecodeProcessBlock(block);
    ASSERT_FALSE(back.ok()) << ::testing::PrintToString(block);
    EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss) << back.status();
  }
}

}  // namespace
}  // namespace memfleet::storage
