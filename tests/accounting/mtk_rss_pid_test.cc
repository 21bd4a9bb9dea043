#include "accounting/mtk_rss_pid.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/support/test_data.h"
#include "tests/support/status_message.h"

namespace memfleet::accounting {
namespace {

using memfleet::testing::ReadTestData;

using testing::MessageHas;

TEST(MtkRssPidTest, OldVariant) {
  absl::StatusOr<RssPid> r = ParseMtkRssPid(ReadTestData("nodes/mtk_rss_pid_v1.txt"));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_EQ(r->rows[0].pid, 24117);
  EXPECT_EQ(r->rows[0].pss_kb, 51234u);
  EXPECT_EQ(r->rows[0].rss_kb, 98304u);
  EXPECT_EQ(r->userspace_pss_kb, 51234u);
  EXPECT_EQ(r->userspace_rss_kb, 98304u);
  EXPECT_EQ(r->kernel_rss_kb, 1843200u);
  // The "pid table:" rows ("\tpid:24117  name:...") are not table rows.
  EXPECT_EQ(r->Find(24117), &r->rows[0]);
  EXPECT_EQ(r->Find(1), nullptr);
}

TEST(MtkRssPidTest, NewVariant) {
  absl::StatusOr<RssPid> r = ParseMtkRssPid(ReadTestData("nodes/mtk_rss_pid_v2.txt"));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_EQ(r->rows[0].pid, 24117);
  EXPECT_EQ(r->rows[0].pss_kb, 60112u);
  EXPECT_EQ(r->rows[0].rss_kb, 98304u);
  EXPECT_EQ(r->userspace_pss_kb, 60112u);
  EXPECT_EQ(r->kernel_rss_kb, 412672u);
}

TEST(MtkRssPidTest, KprobeVariant) {
  // Trailing spaces after the RSS column, an end marker with a period, no --sum lines.
  const std::string text = ReadTestData("nodes/mtk_rss_pid_kprobe.txt");
  ASSERT_NE(text.find("98304  \n"), std::string::npos);
  absl::StatusOr<RssPid> r = ParseMtkRssPid(text);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_EQ(r->rows[0].pid, 24117);
  EXPECT_EQ(r->rows[0].pss_kb, 60112u);
  EXPECT_EQ(r->rows[0].rss_kb, 98304u);
  EXPECT_FALSE(r->userspace_pss_kb.has_value());
  EXPECT_FALSE(r->userspace_rss_kb.has_value());
  EXPECT_FALSE(r->kernel_rss_kb.has_value());
}

TEST(MtkRssPidTest, CaptureMt6989RowMatchesTheAskedPid) {
  struct Want {
    int pid;
    uint64_t pss_kb;
    uint64_t rss_kb;
    uint64_t kernel_rss_kb;
  };
  // Read by hand from each rss_pid@<pid> file.
  const Want wants[] = {
      {11750, 55114, 110228, 228178}, {12881, 24475, 48950, 445924}, {13129, 22241, 44482, 281089},
      {13714, 35911, 71822, 100053},  {18509, 14540, 29080, 115794}, {19070, 62107, 124214, 409614},
      {26272, 8907, 17814, 361343},   {5478, 64015, 128030, 280688},
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(w.pid);
    absl::StatusOr<RssPid> r =
        ParseMtkRssPid(ReadTestData("captures-samples/mtk-mt6989/proc/dma_heap/rss_pid@" + std::to_string(w.pid)));
    ASSERT_TRUE(r.ok()) << r.status();
    const RssPidRow* row = r->Find(w.pid);
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(row->pss_kb, w.pss_kb);
    EXPECT_EQ(row->rss_kb, w.rss_kb);
    EXPECT_EQ(r->userspace_pss_kb, w.pss_kb);
    EXPECT_EQ(r->userspace_rss_kb, w.rss_kb);
    EXPECT_EQ(r->kernel_rss_kb, w.kernel_rss_kb);
  }
}

TEST(MtkRssPidTest, EmptyTextIsNoRows) {
  for (const char* text : {"", "\n", "  \n\n"}) {
    absl::StatusOr<RssPid> r = ParseMtkRssPid(text);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->rows.empty());
    EXPECT_FALSE(r->userspace_pss_kb.has_value());
  }
}

TEST(MtkRssPidTest, OldVariantWithoutDmaBufs) {
  // The old driver prints the header and sums of 0 for a pid without dma-bufs.
  absl::StatusOr<RssPid> r = ParseMtkRssPid(
      "PID     PSS(KB)   RSS(KB)\n-----EGL memtrack data end\n"
      "--sum: userspace_pss:0 KB rss:0 KB\n--sum: kernel rss: 1843200 KB\n\npid table:\n\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->rows.empty());
  EXPECT_EQ(r->userspace_pss_kb, 0u);
}

TEST(MtkRssPidTest, TruncatedTableIsInvalid) {
  const std::string full = ReadTestData("nodes/mtk_rss_pid_v2.txt");
  // Cut before the end marker: the rows seen so far may not be all of them.
  const std::string cut = full.substr(0, full.find("-----EGL"));
  absl::StatusOr<RssPid> r = ParseMtkRssPid(cut);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(MessageHas(r.status(), "not closed")) << r.status();

  // Cut in the middle of the row.
  EXPECT_EQ(ParseMtkRssPid("PID     PSS(KB)   RSS(KB)\n24117   601").status().code(),
            absl::StatusCode::kInvalidArgument);
  // Cut in the middle of a --sum line.
  EXPECT_EQ(ParseMtkRssPid(full.substr(0, full.find("412672") + 3)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MtkRssPidTest, BadInputNamesTheLine) {
  absl::StatusOr<RssPid> r = ParseMtkRssPid(
      "PID     PSS(KB)   RSS(KB)\n24117   60112     98304\n24118   x   1\n"
      "-----EGL memtrack data end\n");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(MessageHas(r.status(), "line 3")) << r.status();

  // No header.
  EXPECT_EQ(ParseMtkRssPid("24117   60112     98304\n-----EGL memtrack data end\n").status().code(),
            absl::StatusCode::kInvalidArgument);
  // Garbage.
  EXPECT_EQ(ParseMtkRssPid(std::string("\x7f"
                                       "ELF\x02\x01",
                                       6))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  // Negative and overflowing numbers.
  EXPECT_EQ(ParseMtkRssPid("PID PSS(KB) RSS(KB)\n1 -5 3\n-----EGL memtrack data end\n").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ParseMtkRssPid("PID PSS(KB) RSS(KB)\n1 5 99999999999999999999\n-----EGL memtrack data end\n").status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseMtkRssPid("PID PSS(KB) RSS(KB)\n4294967297 5 3\n-----EGL memtrack data end\n").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MtkRssPidTest, SeveralRowsLikeStats) {
  absl::StatusOr<RssPid> r = ParseMtkRssPid(
      "PID     PSS(KB)   RSS(KB)\n1893    100       200\n24117   60112     98304\n"
      "-----EGL memtrack data end\n");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 2u);
  ASSERT_NE(r->Find(24117), nullptr);
  EXPECT_EQ(r->Find(24117)->pss_kb, 60112u);
  EXPECT_EQ(r->Find(1893)->rss_kb, 200u);
}

}  // namespace
}  // namespace memfleet::accounting
