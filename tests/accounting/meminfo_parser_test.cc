// Tests for ParseMeminfo against the AOSP and perfetto meminfo fixtures (fixtures/aosp/EXPECTED.md
// sections 7 and 9b), the GKI 5.10 node sample, and malformed input.
#include "accounting/meminfo_parser.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/support/test_data.h"
#include "tests/support/status_message.h"

namespace memfleet::accounting {
namespace {

using memfleet::testing::ReadTestData;

using testing::MessageHas;

void ExpectValues(const Meminfo& m, std::initializer_list<std::pair<std::string_view, uint64_t>> expected) {
  for (const auto& [key, value] : expected) {
    EXPECT_EQ(m.Get(key), std::optional<uint64_t>(value)) << key;
  }
}

TEST(ParseMeminfoTest, SysMemInfoFileHasTheTwentyFiveAospValues) {
  absl::StatusOr<Meminfo> m =
      ParseMeminfo(ReadTestData("aosp/system/memory/libmeminfo/_inline/libmeminfo_test/SysMemInfo.TestSysMemInfoFile/"
                                "meminfo"));
  ASSERT_TRUE(m.ok()) << m.status();
  // SysMemInfo.TestSysMemInfoFile (EXPECTED.md §7).
  ExpectValues(*m,
               {{"MemTotal", 3019740},    {"MemFree", 1809728},     {"Buffers", 54736},         {"Cached", 776052},
                {"Shmem", 4020},          {"Slab", 86464},          {"SReclaimable", 44432},    {"SUnreclaim", 42032},
                {"SwapTotal", 32768},     {"SwapFree", 4096},       {"Mapped", 62624},          {"VmallocUsed", 65536},
                {"PageTables", 2900},     {"KernelStack", 4880},    {"KReclaimable", 87324},    {"Active", 445856},
                {"Inactive", 459092},     {"Unevictable", 3096},    {"MemAvailable", 2546560},  {"Active(anon)", 78492},
                {"Inactive(anon)", 2240}, {"Active(file)", 367364}, {"Inactive(file)", 456852}, {"CmaTotal", 131072},
                {"CmaFree", 130380}});
  // Read off the fixture: HugePages_* are counts without a unit, and the last line
  // ("Hugepagesize: 2048 kB") has no newline; the file has 45 lines.
  ExpectValues(*m, {{"HugePages_Total", 0}, {"HugePages_Surp", 0}, {"Hugepagesize", 2048}});
  EXPECT_EQ(m->values.size(), 45u);
  EXPECT_FALSE(m->Get("Zram").has_value());
}

TEST(ParseMeminfoTest, PerfettoMockMeminfoWithLeadingEmptyLine) {
  absl::StatusOr<Meminfo> m =
      ParseMeminfo(ReadTestData("aosp/external/perfetto/_inline/sys_stats_data_source_unittest/kMockMeminfo/meminfo"));
  ASSERT_TRUE(m.ok()) << m.status();
  // Asserted by SysStatsDataSourceTest.Meminfo (EXPECTED.md §9b).
  ExpectValues(*m, {{"MemTotal", 3744240},
                    {"MemFree", 73328},
                    {"Active(anon)", 1322636},
                    {"Inactive(file)", 296320},
                    {"CmaFree", 60}});  // the last line, no newline
  // The other values listed in EXPECTED.md §9b.
  ExpectValues(*m, {{"MemAvailable", 629896},
                    {"Buffers", 19296},
                    {"Cached", 731032},
                    {"SwapCached", 4936},
                    {"Mapped", 508372},
                    {"Shmem", 18604},
                    {"Slab", 240352},
                    {"SReclaimable", 64684},
                    {"SUnreclaim", 175668},
                    {"KernelStack", 62672},
                    {"PageTables", 70108},
                    {"SwapTotal", 524284},
                    {"SwapFree", 128},
                    {"VmallocUsed", 0},
                    {"CmaTotal", 196608}});
  EXPECT_FALSE(m->Get("KReclaimable").has_value());  // the SReclaimable fallback case
  EXPECT_GE(m->values.size(), 10u);                  // MeminfoAll: at least 10 counters
}

TEST(ParseMeminfoTest, BenchmarkMeminfoWithoutKReclaimable) {
  absl::StatusOr<Meminfo> m =
      ParseMeminfo(ReadTestData("aosp/system/memory/libmeminfo/_inline/libmeminfo_benchmark/BM_ReadMemInfo/meminfo"));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->Get("KernelStack"), 4880u);  // A: CHECK_EQ in BM_ReadMemInfo
  EXPECT_EQ(m->Get("SwapTotal"), 0u);
  EXPECT_EQ(m->Get("VmallocUsed"), 0u);
  EXPECT_FALSE(m->Get("KReclaimable").has_value());
}

TEST(ParseMeminfoTest, Gki510NodeSample) {
  absl::StatusOr<Meminfo> m = ParseMeminfo(ReadTestData("nodes/meminfo_510.txt"));
  ASSERT_TRUE(m.ok()) << m.status();
  // Read off the sample (docs/node-formats.md section 6): 44 lines; 9-digit values push right.
  EXPECT_EQ(m->values.size(), 44u);
  ExpectValues(*m, {{"MemTotal", 7645236},
                    {"KReclaimable", 468324},
                    {"ShadowCallStack", 15680},
                    {"Committed_AS", 164303764},
                    {"VmallocTotal", 263061440},
                    {"CmaFree", 11364}});
}

TEST(ParseMeminfoTest, KernelLayoutVariants) {
  absl::StatusOr<Meminfo> m = ParseMeminfo(
      "ShadowCallStack:12345678 kB\n"  // 16-column label, no space after the colon
      "HardwareCorrupted:     0 kB\n"
      "GPUTotalUsed:\t  99 kB\n"  // vendor hook line, tab after the colon
      "MemTotal:  5\n"            // the unit is optional where the line is complete
      "MemFree:   7 kB  \n"       // trailing blanks
      "MemTotal:  9 kB\n");       // a repeated key keeps the first value
  ASSERT_TRUE(m.ok()) << m.status();
  ExpectValues(
      *m,
      {{"ShadowCallStack", 12345678}, {"HardwareCorrupted", 0}, {"GPUTotalUsed", 99}, {"MemTotal", 5}, {"MemFree", 7}});
  absl::StatusOr<Meminfo> max = ParseMeminfo("Big: 18446744073709551615 kB\n");
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(max->Get("Big"), 18446744073709551615u);
}

// --- Bad input ---

TEST(ParseMeminfoBadInputTest, EmptyText) {
  EXPECT_EQ(ParseMeminfo("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseMeminfo("\n\n").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ParseMeminfoBadInputTest, TruncatedMidLine) {
  const std::string head = "MemTotal:        3019740 kB\n";
  for (const char* tail : {"MemFree:         18", "MemFree:         1809728 k", "MemFree:", "MemFr",
                           "Hugepagesize:       2048", "HugePages_To"}) {
    SCOPED_TRACE(tail);
    absl::StatusOr<Meminfo> m = ParseMeminfo(head + tail);
    ASSERT_EQ(m.status().code(), absl::StatusCode::kDataLoss) << m.status();
    EXPECT_TRUE(MessageHas(m.status(), "line 2")) << m.status();
  }
  // A HugePages_* count needs no unit, so it is complete without a newline.
  absl::StatusOr<Meminfo> count = ParseMeminfo(head + "HugePages_Free:        0");
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(count->Get("HugePages_Free"), 0u);
}

TEST(ParseMeminfoBadInputTest, EveryPrefixIsOkOrDataLoss) {
  const std::string text = ReadTestData(
      "aosp/system/memory/libmeminfo/_inline/libmeminfo_test/SysMemInfo.TestSysMemInfoFile/"
      "meminfo");
  for (size_t n = 1; n < text.size(); ++n) {
    absl::StatusOr<Meminfo> m = ParseMeminfo(std::string_view(text.data(), n));
    if (!m.ok()) {
      ASSERT_EQ(m.status().code(), absl::StatusCode::kDataLoss) << n << ": " << m.status();
    }
    if (text[n - 1] == '\n') {
      EXPECT_TRUE(m.ok()) << n;
    }
  }
}

// Vendor kernels add lines of their own: one such line is skipped and named, and costs only its key,
// never the whole file (which would null every device figure).
TEST(ParseMeminfoBadInputTest, MalformedLinesAreSkippedAndNamed) {
  using namespace std::string_literals;
  for (const std::string& bad :
       {"MemFree 1809728 kB\n"s, "MemFree: -5 kB\n"s, "MemFree: 12 MB\n"s, "MemFree:\n"s, "MemFree: abc kB\n"s,
        "MemFree: 12kB\n"s, "MemFree: 12 kB x\n"s, ": 12 kB\n"s, "Mem\0Free: 12 kB\n"s, "\xff\xfe: 1 kB\n"s,
        "garbage\n"s, "\0\0\0\n"s, "MemFree: 0x10 kB\n"s, "MemFree: 18446744073709551616 kB\n"s}) {
    SCOPED_TRACE(::testing::PrintToString(bad));
    absl::StatusOr<Meminfo> m = ParseMeminfo("MemTotal: 1 kB\n\n" + bad + "Shmem: 7 kB\n");
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->Get("MemTotal"), 1u);
    EXPECT_EQ(m->Get("Shmem"), 7u);
    EXPECT_FALSE(m->Get("MemFree").has_value());
    ASSERT_EQ(m->skipped_lines.size(), 1u);
    EXPECT_EQ(m->skipped_line_count, 1u);
    EXPECT_EQ(m->skipped_lines[0].rfind("line 3: ", 0), 0u) << m->skipped_lines[0];
  }
}

TEST(ParseMeminfoBadInputTest, OnlyTheFirstSkippedLinesAreNamed) {
  std::string text = "MemTotal: 1 kB\n";
  for (int i = 0; i < 20; ++i) text += "RsvPool: reserved\n";
  absl::StatusOr<Meminfo> m = ParseMeminfo(text);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->skipped_lines.size(), kMaxNamedSkippedLines);
  EXPECT_EQ(m->skipped_line_count, 20u);
}

TEST(ParseMeminfoBadInputTest, NoGoodLineAtAllIsRejectedNamingTheFirstBadOne) {
  absl::StatusOr<Meminfo> m = ParseMeminfo("GPUTotalUsed: 39735 pages\nRsvPool: reserved\n");
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(MessageHas(m.status(), "line 1")) << m.status();
  EXPECT_TRUE(MessageHas(m.status(), "GPUTotalUsed")) << m.status();
}

// A 4.19 vendor kernel's meminfo (the legacy-419 sample device): "GPUTotalUsed: 39735 pages" and
// "RsvPool: reserved" among the core counters.
TEST(ParseMeminfoTest, VendorLinesOfALegacyKernel) {
  absl::StatusOr<Meminfo> m = ParseMeminfo(ReadTestData("captures/legacy-419/tree/proc/meminfo"));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->Get("MemTotal"), 16068720u);
  EXPECT_EQ(m->Get("CmaTotal"), 147456u);
  EXPECT_EQ(m->Get("SwapTotal"), 6291452u);
  EXPECT_FALSE(m->Get("GPUTotalUsed").has_value());
  ASSERT_EQ(m->skipped_lines.size(), 2u);
  EXPECT_NE(m->skipped_lines[0].find("GPUTotalUsed"), std::string::npos) << m->skipped_lines[0];
  EXPECT_NE(m->skipped_lines[1].find("RsvPool"), std::string::npos) << m->skipped_lines[1];
}

TEST(ParseMeminfoBadInputTest, HugeNumbersOverflow) {
  const std::string thirty_digits = "123456789012345678901234567890";
  absl::StatusOr<Meminfo> m = ParseMeminfo("MemTotal: " + thirty_digits + " kB\n");
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(MessageHas(m.status(), "line 1")) << m.status();
  // Already too long: overflow, not truncation, even without the newline.
  EXPECT_EQ(ParseMeminfo("MemTotal: " + thirty_digits).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseMeminfo("MemTotal: 18446744073709551616 kB\n").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace memfleet::accounting
