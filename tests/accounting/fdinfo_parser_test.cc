// Tests for ParseFdinfo: the dma-buf fdinfo node sample (docs/node-formats.md section 4.2), the
// libdmabufinfo test trees (fixtures/aosp/EXPECTED.md §8d) and malformed input.
#include "accounting/fdinfo_parser.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/support/test_data.h"
#include "tests/support/status_message.h"

namespace memfleet::accounting {
namespace {

using memfleet::testing::ReadTestData;

using namespace std::string_literals;

using testing::MessageHas;

std::string Reconstructed(std::string_view test, std::string_view fd) {
  return ReadTestData("aosp/system/memory/libmeminfo/_reconstructed/dmabufinfo_test/DmaBufProcessStatsTest." +
                      std::string(test) + "/proc/10/fdinfo/" + std::string(fd));
}

TEST(ParseFdinfoTest, DmaBufNodeSample) {
  absl::StatusOr<Fdinfo> f = ParseFdinfo(ReadTestData("nodes/fdinfo.txt"));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->is_dmabuf());
  EXPECT_EQ(f->ino, 48213u);
  EXPECT_EQ(f->size_bytes, 9469952u);
  EXPECT_EQ(f->count, 3);
  EXPECT_EQ(f->exp_name, "qcom,system");
  EXPECT_FALSE(f->name.has_value());  // the sample has no name: line
}

TEST(ParseFdinfoTest, ReadDmaBufFdRefsTree) {
  // fdinfo/0: ino 1 without exp_name, so not a dma-buf.
  absl::StatusOr<Fdinfo> f0 = ParseFdinfo(Reconstructed("TestReadDmaBufFdRefs", "0"));
  ASSERT_TRUE(f0.ok()) << f0.status();
  EXPECT_FALSE(f0->is_dmabuf());
  EXPECT_EQ(f0->ino, 1u);
  EXPECT_FALSE(f0->size_bytes.has_value());
  EXPECT_FALSE(f0->count.has_value());

  // fdinfo/1 and fdinfo/2: the same 2048-byte buffer, ino 2.
  for (std::string_view fd : {"1", "2"}) {
    SCOPED_TRACE(fd);
    absl::StatusOr<Fdinfo> f = ParseFdinfo(Reconstructed("TestReadDmaBufFdRefs", fd));
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_TRUE(f->is_dmabuf());
    EXPECT_EQ(f->ino, 2u);
    EXPECT_EQ(f->size_bytes, 2048u);
    EXPECT_EQ(f->count, 1);
    EXPECT_EQ(f->exp_name, "system_heap");
  }

  // fdinfo/3: ino 3, 1024 bytes.
  absl::StatusOr<Fdinfo> f3 = ParseFdinfo(Reconstructed("TestReadDmaBufFdRefs", "3"));
  ASSERT_TRUE(f3.ok()) << f3.status();
  EXPECT_TRUE(f3->is_dmabuf());
  EXPECT_EQ(f3->ino, 3u);
  EXPECT_EQ(f3->size_bytes, 1024u);
}

TEST(ParseFdinfoTest, ReadDmaBufInfoTree) {
  absl::StatusOr<Fdinfo> f0 = ParseFdinfo(Reconstructed("TestReadDmaBufInfo", "0"));
  ASSERT_TRUE(f0.ok()) << f0.status();
  EXPECT_FALSE(f0->is_dmabuf());
  EXPECT_EQ(f0->ino, 1u);
  absl::StatusOr<Fdinfo> f1 = ParseFdinfo(Reconstructed("TestReadDmaBufInfo", "1"));
  ASSERT_TRUE(f1.ok()) << f1.status();
  EXPECT_TRUE(f1->is_dmabuf());
  EXPECT_EQ(f1->ino, 2u);
  EXPECT_EQ(f1->size_bytes, 2048u);
  EXPECT_EQ(f1->exp_name, "system_heap");
}

TEST(ParseFdinfoTest, NameWithSpacesAndOtherLines) {
  absl::StatusOr<Fdinfo> f = ParseFdinfo(
      "pos:\t0\n"
      "flags:\t02000002\n"
      "mnt_id:\t16\n"
      "ino:\t176\n"
      "lock:\t1: POSIX  ADVISORY  WRITE 1234 00:0d:176 0 EOF\n"
      "size:\t32899072\n"
      "count:\t2\n"
      "exp_name:\tqcom,system\n"
      "name:\tcamera preview  buf\n");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->ino, 176u);
  EXPECT_EQ(f->size_bytes, 32899072u);
  EXPECT_EQ(f->count, 2);
  EXPECT_EQ(f->name, "camera preview  buf");
}

TEST(ParseFdinfoTest, NonDmaBufFdinfoIgnoresForeignKeys) {
  // An inotify fd: "ino:" inside a line that starts with "inotify" is not the ino: key.
  absl::StatusOr<Fdinfo> f = ParseFdinfo(
      "pos:\t0\nflags:\t02004000\nmnt_id:\t15\nino:\t1057\n"
      "inotify wd:1 ino:9 sdev:fd00005 mask:fc6 ignored_mask:0 fhandle-bytes:8\n"
      "eventfd-count:  5\n");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_FALSE(f->is_dmabuf());
  EXPECT_EQ(f->ino, 1057u);
}

TEST(ParseFdinfoTest, EmptyTextIsNotADmaBuf) {
  absl::StatusOr<Fdinfo> f = ParseFdinfo("");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_FALSE(f->is_dmabuf());
  EXPECT_FALSE(f->ino.has_value());
  EXPECT_FALSE(f->size_bytes.has_value());
}

// --- Bad input ---

TEST(ParseFdinfoBadInputTest, NonNumericKnownKeysNameTheirLine) {
  for (const std::string& bad :
       {"ino:\tabc\n"s, "ino:\t\n"s, "ino:\n"s, "size:\t-5\n"s, "size:\t12abc\n"s, "count:\tx\n"s,
        "ino:\t1\0"s + "2\n"s, "size:\t0x10\n"s, "ino:\t+7\n"s, "count:\t1 2\n"s}) {
    SCOPED_TRACE(::testing::PrintToString(bad));
    absl::StatusOr<Fdinfo> f = ParseFdinfo("pos:\t0\nflags:\t02\n" + bad);
    ASSERT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument) << f.status();
    EXPECT_TRUE(MessageHas(f.status(), "line 3")) << f.status();
  }
  // count is a signed %ld; a negative one still parses.
  absl::StatusOr<Fdinfo> negative = ParseFdinfo("count:\t-1\n");
  ASSERT_TRUE(negative.ok()) << negative.status();
  EXPECT_EQ(negative->count, -1);
}

TEST(ParseFdinfoBadInputTest, HugeNumbersOverflow) {
  const std::string thirty_digits = "123456789012345678901234567890";
  EXPECT_EQ(ParseFdinfo("ino:\t" + thirty_digits + "\n").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseFdinfo("size:\t18446744073709551616\n").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseFdinfo("count:\t9223372036854775808\n").status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<Fdinfo> max = ParseFdinfo("size:\t18446744073709551615\n");
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(max->size_bytes, 18446744073709551615u);
}

TEST(ParseFdinfoBadInputTest, TruncatedAndGarbage) {
  // Cut inside "exp_name:": the line is lost, so the fd does not look like a dma-buf.
  absl::StatusOr<Fdinfo> cut = ParseFdinfo("pos:\t0\nino:\t48213\nsize:\t9469952\nexp_na");
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_FALSE(cut->is_dmabuf());
  EXPECT_EQ(cut->size_bytes, 9469952u);
  // Cut right after a known key: no value to parse.
  EXPECT_EQ(ParseFdinfo("pos:\t0\nino:").status().code(), absl::StatusCode::kInvalidArgument);
  // Lines without a known key, binary or not, are ignored.
  absl::StatusOr<Fdinfo> garbage = ParseFdinfo("\0\0\xff\xfe\nhello world\n:::\n\x01:\x02\n"s);
  ASSERT_TRUE(garbage.ok()) << garbage.status();
  EXPECT_FALSE(garbage->is_dmabuf());
  EXPECT_FALSE(garbage->ino.has_value());
}

}  // namespace
}  // namespace memfleet::accounting
