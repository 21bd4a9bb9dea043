// Tests for ParseSysfsUint, ParseLeadingUint and TrimSysfsString against the AOSP sysfs test files
// (written without a newline, fixtures/aosp/EXPECTED.md sections 7 and 8) and kernel-style values.
#include "accounting/sysfs_value.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/support/test_data.h"

namespace memfleet::accounting {
namespace sysfs_value_test {
namespace {

using memfleet::testing::ReadTestData;

using namespace std::string_literals;

constexpr std::string_view kLibmeminfo = "aosp/system/memory/libmeminfo/";

uint64_t MustParse(std::string_view relative) {
  absl::StatusOr<uint64_t> v = ParseSysfsUint(ReadTestData(std::string(kLibmeminfo) + std::string(relative)));
  EXPECT_TRUE(v.ok()) << relative << ": " << v.status();
  return v.ok() ? *v : 0;
}

TEST(ParseSysfsUintTest, AospTestFiles) {
  // EXPECTED.md §7: ReadIonHeapsSizeKb 98480, ReadIonPoolsSizeKb / ReadDmabufHeapPoolsSizeKb 416.
  EXPECT_EQ(MustParse("_inline/libmeminfo_test/SysMemInfo.TestReadIonHeapsSizeKb/total_heaps_kb"), 98480u);
  EXPECT_EQ(MustParse("_inline/libmeminfo_test/SysMemInfo.TestReadIonPoolsSizeKb/total_pools_kb"), 416u);
  EXPECT_EQ(MustParse("_inline/libmeminfo_test/SysMemInfo.TestReadDmaBufHeapPoolsSizeKb/total_pools_kb"), 416u);
  // §8a: buffer 74831 is 4096 bytes. §8d: sysfs sizes 2048 (ino 2) and 1024 (ino 4).
  EXPECT_EQ(MustParse("_reconstructed/dmabufinfo_test/DmaBufSysfsStatsParser.TestReadDmaBufSysfsStats/"
                      "buffers/74831/size"),
            4096u);
  EXPECT_EQ(MustParse("_reconstructed/dmabufinfo_test/DmaBufProcessStatsTest.TestReadDmaBufInfo/"
                      "buffers/2/size"),
            2048u);
  EXPECT_EQ(MustParse("_reconstructed/dmabufinfo_test/DmaBufProcessStatsTest.TestReadDmaBufInfo/"
                      "buffers/4/size"),
            1024u);
  // §8c: alloc 8 - release 4 = 4 pages in use.
  const std::string cma =
      "_reconstructed/libmeminfo_test/CmaSysfsStats.TestReadKernelCmaUsageKb/cma_sysfs_stats/"
      "test_region/";
  EXPECT_EQ(MustParse(cma + "alloc_pages_success") - MustParse(cma + "release_pages_success"), 4u);
}

TEST(ParseSysfsUintTest, KernelFormatted) {
  EXPECT_EQ(*ParseSysfsUint("1843712\n"), 1843712u);  // "%llu\n"
  EXPECT_EQ(*ParseSysfsUint("9469952\n"), 9469952u);
  EXPECT_EQ(*ParseSysfsUint("0\n"), 0u);
  EXPECT_EQ(*ParseSysfsUint("  42 \t\n"), 42u);
  EXPECT_EQ(*ParseSysfsUint("18446744073709551615\n"), 18446744073709551615u);
}

TEST(ParseSysfsUintTest, BadInput) {
  for (const std::string& bad :
       {""s, "\n"s, " \t "s, "-1\n"s, "+1\n"s, "12 34\n"s, "0x10\n"s, "3403776,0\n"s, "12\0"s, "\0"s, "<INVALID>"s,
        "1.5\n"s, "18446744073709551616\n"s, "123456789012345678901234567890\n"s, "\xff\xfe"s, "4096 kB\n"s}) {
    SCOPED_TRACE(::testing::PrintToString(bad));
    EXPECT_EQ(ParseSysfsUint(bad).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(ParseLeadingUintTest, KgslVendorForks) {
  EXPECT_EQ(*ParseLeadingUint("3403776,0\n"), 3403776u);  // "%lld,%lld\n"
  EXPECT_EQ(*ParseLeadingUint("0,0\n"), 0u);
  EXPECT_EQ(*ParseLeadingUint("42\n"), 42u);
  EXPECT_EQ(*ParseLeadingUint("42"), 42u);
  EXPECT_EQ(*ParseLeadingUint("  17 kB\n"), 17u);
  EXPECT_EQ(*ParseLeadingUint("18446744073709551615,1"), 18446744073709551615u);
}

TEST(ParseLeadingUintTest, BadInput) {
  for (const std::string& bad : {""s, "\n"s, "   "s, "-1,0\n"s, "-0\n"s, ",5\n"s, "abc"s, "\0"s + "12"s, "+3"s,
                                 "18446744073709551616,0"s, "123456789012345678901234567890,0\n"s, "\xff"s}) {
    SCOPED_TRACE(::testing::PrintToString(bad));
    EXPECT_EQ(ParseLeadingUint(bad).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(TrimSysfsStringTest, ExporterNames) {
  EXPECT_EQ(TrimSysfsString("qcom,system\n"), "qcom,system");
  // AOSP's test files have no newline (§8a: exporter "system", §8d: "system_heap").
  EXPECT_EQ(
      TrimSysfsString(ReadTestData(std::string(kLibmeminfo) +
                                   "_reconstructed/dmabufinfo_test/DmaBufSysfsStatsParser.TestReadDmaBufSysfsStats/"
                                   "buffers/74831/exporter_name")),
      "system");
  EXPECT_EQ(
      TrimSysfsString(ReadTestData(std::string(kLibmeminfo) +
                                   "_reconstructed/dmabufinfo_test/DmaBufProcessStatsTest.TestReadDmaBufInfo/buffers/"
                                   "4/exporter_name")),
      "system_heap");
  EXPECT_EQ(TrimSysfsString(" \tmtk_mm \r\n"), "mtk_mm");
  EXPECT_EQ(TrimSysfsString("a b\n"), "a b");
  EXPECT_EQ(TrimSysfsString(""), "");
  EXPECT_EQ(TrimSysfsString(" \n\n"), "");
  EXPECT_EQ(TrimSysfsString("\0x\n"s), "\0x"s);  // NUL is data, not whitespace
}

}  // namespace
}  // namespace sysfs_value_test
}  // namespace memfleet::accounting
