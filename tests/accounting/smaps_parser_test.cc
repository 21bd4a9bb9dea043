// Tests for ParseSmaps / ParseMaps / ParseSmapsRollup against AOSP and perfetto fixtures
// (fixtures/aosp/EXPECTED.md sections 1, 2, 3, 7, 8d, 9a, 9e) and malformed input.
#include "accounting/smaps_parser.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/support/test_data.h"
#include "tests/support/status_message.h"

namespace memfleet::accounting {
namespace {

using memfleet::testing::ReadTestData;

constexpr std::string_view kLibmeminfo = "aosp/system/memory/libmeminfo";

using testing::MessageHas;

std::string Libmeminfo(std::string_view relative) {
  return ReadTestData(std::string(kLibmeminfo) + "/" + std::string(relative));
}

struct Totals {
  uint64_t vss_kb = 0, rss_kb = 0, pss_kb = 0, uss_kb = 0, private_clean_kb = 0, private_dirty_kb = 0,
           shared_clean_kb = 0, shared_dirty_kb = 0, swap_kb = 0, swap_pss_kb = 0;
};

Totals Sum(const std::vector<Vma>& vmas) {
  Totals t;
  for (const Vma& v : vmas) {
    t.vss_kb += v.size_kb;
    t.rss_kb += v.rss_kb;
    t.pss_kb += v.pss_kb;
    t.uss_kb += v.private_clean_kb + v.private_dirty_kb;
    t.private_clean_kb += v.private_clean_kb;
    t.private_dirty_kb += v.private_dirty_kb;
    t.shared_clean_kb += v.shared_clean_kb;
    t.shared_dirty_kb += v.shared_dirty_kb;
    t.swap_kb += v.swap_kb;
    t.swap_pss_kb += v.swap_pss_kb;
  }
  return t;
}

// One row of the EXPECTED.md section 1 table.
struct ExpectedVma {
  std::string_view name;
  uint64_t start, end;
  std::string_view perms;  // R|X and not shared -> "r-xp"
  uint64_t offset, inode;
  uint64_t vss, rss, pss, private_clean, private_dirty, shared_clean, shared_dirty, swap, swap_pss;
};

constexpr ExpectedVma kSmapsShort[] = {
    {"[anon:dalvik-zygote-jit-code-cache]", 0x54c00000, 0x56c00000, "r-xp", 0x0, 0, 32768, 2048, 113, 0, 0, 0, 2048, 0,
     0},
    {"/system/framework/x86_64/boot-framework.art", 0x701ea000, 0x70cdb000, "rw-p", 0x0, 3165, 11204, 11188, 2200, 0,
     1660, 80, 9448, 0, 0},
    {"[anon:libc_malloc]", 0x70074dd8d000, 0x70074ee0d000, "rw-p", 0x0, 0, 16896, 15272, 15272, 0, 15272, 0, 0, 0, 0},
    {"/system/priv-app/SettingsProvider/oat/x86_64/SettingsProvider.odex", 0x700755a2d000, 0x700755a6e000, "r-xp",
     0x16000, 1947, 260, 260, 260, 260, 0, 0, 0, 0, 0},
    {"/system/lib64/libhwui.so", 0x7007f85b0000, 0x7007f8b9b000, "r-xp", 0x1ee000, 1537, 6060, 4132, 1274, 0, 0, 4132,
     0, 0, 0},
    {"[vsyscall]", 0xffffffffff600000, 0xffffffffff601000, "r-xp", 0x0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0},
};

void ExpectHeaderMatches(const Vma& got, const ExpectedVma& want) {
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.start, want.start) << want.name;
  EXPECT_EQ(got.end, want.end) << want.name;
  EXPECT_EQ(got.perms, want.perms) << want.name;
  EXPECT_EQ(got.offset, want.offset) << want.name;
  EXPECT_EQ(got.inode, want.inode) << want.name;
}

TEST(ParseSmapsTest, SmapsShortGivesTheSixAospVmas) {
  const std::string text = Libmeminfo("testdata1/smaps_short");
  absl::StatusOr<std::vector<Vma>> vmas = ParseSmaps(text);
  ASSERT_TRUE(vmas.ok()) << vmas.status();
  ASSERT_EQ(vmas->size(),
            6u);  // ForEachVmaFromFile_SmapsTest: 6 callbacks; the parser keeps [vsyscall]
  for (size_t i = 0; i < 6; ++i) {
    const Vma& got = (*vmas)[i];
    const ExpectedVma& want = kSmapsShort[i];
    ExpectHeaderMatches(got, want);
    EXPECT_EQ(got.size_kb, want.vss) << want.name;
    EXPECT_EQ(got.rss_kb, want.rss) << want.name;
    EXPECT_EQ(got.pss_kb, want.pss) << want.name;
    EXPECT_EQ(got.private_clean_kb, want.private_clean) << want.name;
    EXPECT_EQ(got.private_dirty_kb, want.private_dirty) << want.name;
    EXPECT_EQ(got.shared_clean_kb, want.shared_clean) << want.name;
    EXPECT_EQ(got.shared_dirty_kb, want.shared_dirty) << want.name;
    EXPECT_EQ(got.swap_kb, want.swap) << want.name;
    EXPECT_EQ(got.swap_pss_kb, want.swap_pss) << want.name;
  }
  // dev is not in the AOSP table; read off the header lines of the fixture.
  EXPECT_EQ((*vmas)[0].dev, "00:00");
  EXPECT_EQ((*vmas)[1].dev, "fe:00");
}

TEST(ParseSmapsTest, SmapsShortTotalsMatchSmapsPopulatesUsageTest) {
  const std::string text = Libmeminfo("testdata1/smaps_short");
  absl::StatusOr<std::vector<Vma>> vmas = ParseSmaps(text);
  ASSERT_TRUE(vmas.ok()) << vmas.status();
  const Totals t = Sum(*vmas);
  EXPECT_EQ(t.vss_kb, 67192u);  // non-x86_64 figure: [vsyscall] kept
  EXPECT_EQ(t.rss_kb, 32900u);
  EXPECT_EQ(t.pss_kb, 19119u);
  EXPECT_EQ(t.uss_kb, 17192u);
  EXPECT_EQ(t.private_clean_kb, 260u);
  EXPECT_EQ(t.private_dirty_kb, 16932u);
  EXPECT_EQ(t.shared_clean_kb, 4212u);
  EXPECT_EQ(t.shared_dirty_kb, 11496u);
  EXPECT_EQ(t.swap_kb, 0u);
  EXPECT_EQ(t.swap_pss_kb, 0u);
}

TEST(ParseSmapsRollupTest, SmapsShortPssIsSmapsOrRollupPssSmapsTest) {
  absl::StatusOr<SmapsRollup> r = ParseSmapsRollup(Libmeminfo("testdata1/smaps_short"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->has_pss);
  EXPECT_EQ(r->pss_kb, 19119u);
}

TEST(ParseMapsTest, MapsShortGivesTheSameSixVmas) {
  const std::string text = Libmeminfo("testdata1/maps_short");
  absl::StatusOr<std::vector<Vma>> vmas = ParseMaps(text);
  ASSERT_TRUE(vmas.ok()) << vmas.status();
  ASSERT_EQ(vmas->size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    ExpectHeaderMatches((*vmas)[i], kSmapsShort[i]);
    EXPECT_EQ((*vmas)[i].pss_kb, 0u);
    EXPECT_EQ((*vmas)[i].size_kb, 0u);
  }
}

TEST(ParseSmapsTest, FullSmapsHas2760VmasAndPss108384) {
  const std::string text = Libmeminfo("testdata1/smaps");
  absl::StatusOr<std::vector<Vma>> vmas = ParseSmaps(text);
  ASSERT_TRUE(vmas.ok()) << vmas.status();
  ASSERT_EQ(vmas->size(), 2760u);
  EXPECT_EQ(vmas->front().name, "[anon:dalvik-main space (region space)]");
  const Totals t = Sum(*vmas);
  EXPECT_EQ(t.pss_kb, 108384u);  // A: BM_SmapsRollup CHECK_EQ
  // D values (independent re-implementation, EXPECTED.md §3), a cross-check of the other columns.
  EXPECT_EQ(t.vss_kb, 4218176u);
  EXPECT_EQ(t.rss_kb, 250332u);
  EXPECT_EQ(t.uss_kb, 90520u);
  EXPECT_EQ(t.private_clean_kb, 32664u);
  EXPECT_EQ(t.private_dirty_kb, 57856u);
  EXPECT_EQ(t.shared_clean_kb, 129552u);
  EXPECT_EQ(t.shared_dirty_kb, 30260u);
  EXPECT_EQ(t.swap_kb, 0u);
  bool has_vsyscall = false;
  for (const Vma& v : *vmas) has_vsyscall |= v.name == "[vsyscall]";
  EXPECT_TRUE(has_vsyscall);
}

TEST(ParseSmapsRollupTest, FullSmapsSumsToPss108384) {
  absl::StatusOr<SmapsRollup> r = ParseSmapsRollup(Libmeminfo("testdata1/smaps"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->has_pss);
  EXPECT_EQ(r->pss_kb, 108384u);
  EXPECT_EQ(r->rss_kb, 250332u);  // D
  EXPECT_EQ(r->private_clean_kb, 32664u);
  EXPECT_EQ(r->private_dirty_kb, 57856u);
  EXPECT_EQ(r->swap_pss_kb, 0u);
}

TEST(ParseSmapsRollupTest, InlineRollupFixture) {
  // The fixture's last line ("Locked: ... kB") has no newline: still a complete field line.
  const std::string text = Libmeminfo("_inline/libmeminfo_test/ProcMemInfo.SmapsOrRollupTest/smaps_rollup");
  absl::StatusOr<SmapsRollup> r = ParseSmapsRollup(text);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->has_pss);
  EXPECT_EQ(r->rss_kb, 331908u);
  EXPECT_EQ(r->pss_kb, 202052u);
  EXPECT_EQ(r->private_clean_kb, 90472u);
  EXPECT_EQ(r->private_dirty_kb, 64016u);
  EXPECT_EQ(r->private_clean_kb + r->private_dirty_kb, 154488u);  // uss
  EXPECT_EQ(r->swap_pss_kb, 442u);

  absl::StatusOr<std::vector<Vma>> vmas = ParseSmaps(text);
  ASSERT_TRUE(vmas.ok()) << vmas.status();
  ASSERT_EQ(vmas->size(), 1u);
  EXPECT_EQ((*vmas)[0].name, "[rollup]");
  EXPECT_EQ((*vmas)[0].start, 0x12c00000u);
  EXPECT_EQ((*vmas)[0].end, 0x7fe859e000u);
  EXPECT_EQ((*vmas)[0].perms, "---p");
  EXPECT_EQ((*vmas)[0].pss_kb, 202052u);
  EXPECT_EQ((*vmas)[0].swap_kb, 5344u);  // read off the fixture: "Swap: 5344 kB"
}

TEST(ParseSmapsRollupTest, OneVmaSmapsFixtures) {
  for (std::string_view test : {"ProcMemInfo.SmapsOrRollupSmapsTest", "ProcMemInfo.SmapsOrRollupPssRollupTest",
                                "AndroidProcHeaps.ExtractAndroidHeapStatsFromFileTest"}) {
    SCOPED_TRACE(test);
    const std::string text = Libmeminfo("_inline/libmeminfo_test/" + std::string(test) + "/smaps");
    absl::StatusOr<SmapsRollup> r = ParseSmapsRollup(text);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->rss_kb, 2652u);
    EXPECT_EQ(r->pss_kb, 2652u);
    EXPECT_EQ(r->private_clean_kb, 84u);
    EXPECT_EQ(r->private_dirty_kb, 2652u);
    EXPECT_EQ(r->private_clean_kb + r->private_dirty_kb, 2736u);  // uss > rss: synthetic data
    EXPECT_EQ(r->swap_pss_kb, 70u);

    // ExtractAndroidHeapStatsFromFileTest's per-field values, from the same VMA.
    absl::StatusOr<std::vector<Vma>> vmas = ParseSmaps(text);
    ASSERT_TRUE(vmas.ok()) << vmas.status();
    ASSERT_EQ(vmas->size(), 1u);
    const Vma& v = (*vmas)[0];
    EXPECT_EQ(v.name, "[anon:dalvik-main space (region space)]");
    EXPECT_EQ(v.pss_kb, 2652u);
    EXPECT_EQ(v.rss_kb, 2652u);
    EXPECT_EQ(v.private_dirty_kb, 2652u);
    EXPECT_EQ(v.shared_dirty_kb, 40u);
    EXPECT_EQ(v.private_clean_kb, 84u);
    EXPECT_EQ(v.shared_clean_kb, 840u);
    EXPECT_EQ(v.swap_kb, 102u);
    EXPECT_EQ(v.swap_pss_kb, 70u);
  }
}

TEST(ParseSmapsTest, PerfettoCatSmapsWithAndWithoutFinalNewline) {
  for (std::string_view file : {"cat_smaps", "cat_smaps_noeol"}) {
    SCOPED_TRACE(file);
    const std::string text = ReadTestData("aosp/external/perfetto/src/profiling/memory/test/data/" + std::string(file));
    absl::StatusOr<std::vector<Vma>> vmas = ParseSmaps(text);
    ASSERT_TRUE(vmas.ok()) << vmas.status();
    ASSERT_EQ(vmas->size(), 3u);
    EXPECT_EQ((*vmas)[0].name, "/bin/cat");
    EXPECT_EQ((*vmas)[0].size_kb, 8u);
    EXPECT_EQ((*vmas)[0].private_dirty_kb, 0u);
    EXPECT_EQ((*vmas)[0].swap_kb, 0u);
    EXPECT_EQ((*vmas)[1].name, "/bin/cat");
    EXPECT_EQ((*vmas)[1].size_kb, 8u);
    EXPECT_EQ((*vmas)[1].private_dirty_kb, 0u);
    EXPECT_EQ((*vmas)[1].swap_kb, 0u);
    EXPECT_EQ((*vmas)[2].name, "[heap stuff]");  // a space inside the name
    EXPECT_EQ((*vmas)[2].size_kb, 132u);
    EXPECT_EQ((*vmas)[2].private_dirty_kb, 8u);
    EXPECT_EQ((*vmas)[2].swap_kb, 4u);
    EXPECT_EQ((*vmas)[2].swap_pss_kb, 4u);  // "Swap:" and "SwapPss:" are separate keys
  }
}

TEST(ParseSmapsTest, PerfettoTestSmapsAggregatedByName) {
  const std::string text = ReadTestData("aosp/external/perfetto/_inline/smaps_unittest/kTestSmaps/smaps");
  absl::StatusOr<std::vector<Vma>> vmas = ParseSmaps(text);
  ASSERT_TRUE(vmas.ok()) << vmas.status();
  ASSERT_EQ(vmas->size(), 7u);
  // The last VMA has no name and its header line ends in a space.
  EXPECT_EQ(vmas->back().name, "");
  EXPECT_EQ(vmas->back().start, 0x7273ac9000u);
  EXPECT_EQ(vmas->back().end, 0x7274504000u);
  EXPECT_EQ(vmas->back().inode, 0u);
  // Pss_Dirty: must not override Pss: (boot-framework.oat: Pss 35 and 107, Pss_Dirty 0).
  EXPECT_EQ((*vmas)[2].pss_kb, 35u);
  EXPECT_EQ((*vmas)[3].pss_kb, 107u);

  struct Agg {
    int count = 0;
    uint64_t size_kb = 0, rss_kb = 0;
  };
  std::map<std::string_view, Agg> by_name;
  for (const Vma& v : *vmas) {
    Agg& a = by_name[v.name];
    ++a.count;
    a.size_kb += v.size_kb;
    a.rss_kb += v.rss_kb;
  }
  // SmapsParserTest.DefaultAggregatedMode: aggregate_count, size_kb, rss_kb per name.
  struct Want {
    std::string_view name;
    int count;
    uint64_t size_kb, rss_kb;
  };
  const Want wants[] = {{"", 1, 10476, 0},
                        {"[anon:dalvik-Boot image reservation]", 2, 24, 0},
                        {"/system/framework/arm64/boot-apache-xml.oat", 1, 16, 0},
                        {"/system/framework/arm64/boot-framework.oat", 2, 8564, 7984},
                        {"[anon:.bss]", 1, 4, 4}};
  ASSERT_EQ(by_name.size(), 5u);
  for (const Want& w : wants) {
    SCOPED_TRACE(w.name);
    ASSERT_EQ(by_name.count(w.name), 1u);
    EXPECT_EQ(by_name[w.name].count, w.count);
    EXPECT_EQ(by_name[w.name].size_kb, w.size_kb);
    EXPECT_EQ(by_name[w.name].rss_kb, w.rss_kb);
  }
}

TEST(ParseSmapsTest, PerfettoCustomConfigAndUnaggregated) {
  const std::string custom_text =
      ReadTestData("aosp/external/perfetto/_inline/smaps_unittest/kTestSmapsCustomConfig/smaps");
  const std::string unagg_text =
      ReadTestData("aosp/external/perfetto/_inline/smaps_unittest/kTestSmapsUnaggregated/smaps");
  absl::StatusOr<std::vector<Vma>> custom = ParseSmaps(custom_text);
  ASSERT_TRUE(custom.ok()) << custom.status();
  ASSERT_EQ(custom->size(), 1u);
  EXPECT_EQ((*custom)[0].name, "[anon:dalvik]");
  EXPECT_EQ((*custom)[0].size_kb, 10u);
  EXPECT_EQ((*custom)[0].swap_kb, 20u);
  EXPECT_EQ((*custom)[0].rss_kb, 5u);

  absl::StatusOr<std::vector<Vma>> unagg = ParseSmaps(unagg_text);
  ASSERT_TRUE(unagg.ok()) << unagg.status();
  ASSERT_EQ(unagg->size(), 2u);
  EXPECT_EQ((*unagg)[0].name, "/lib/libc.so");
  EXPECT_EQ((*unagg)[1].name, "/lib/libc.so");
  EXPECT_EQ((*unagg)[0].size_kb, 10u);
  EXPECT_EQ((*unagg)[1].size_kb, 20u);
}

TEST(ParseMapsTest, DmaBufMapsNodeSample) {
  const std::string text = ReadTestData("nodes/maps.txt");  // the names point into it
  absl::StatusOr<std::vector<Vma>> vmas = ParseMaps(text);
  ASSERT_TRUE(vmas.ok()) << vmas.status();
  ASSERT_EQ(vmas->size(), 3u);
  EXPECT_EQ((*vmas)[0].name, "/dmabuf:");
  EXPECT_EQ((*vmas)[0].inode, 48213u);
  EXPECT_EQ((*vmas)[0].start, 0x7b2f400000u);
  EXPECT_EQ((*vmas)[0].end, 0x7b2fd08000u);
  EXPECT_EQ((*vmas)[0].perms, "rw-s");
  EXPECT_EQ((*vmas)[0].dev, "00:0d");
  EXPECT_EQ((*vmas)[1].name, "/dmabuf:qcom,system");
  EXPECT_EQ((*vmas)[1].inode, 176u);
  EXPECT_EQ((*vmas)[2].name, "/dev/kgsl-3d0");
  EXPECT_EQ((*vmas)[2].inode, 1094u);
  EXPECT_EQ((*vmas)[2].offset, 0x139000u);
  EXPECT_EQ((*vmas)[2].dev, "00:12");
}

TEST(ParseMapsTest, ReconstructedDmaBufMapsWithoutFinalNewline) {
  const std::string base = "_reconstructed/dmabufinfo_test/DmaBufProcessStatsTest.";
  const std::string info_text = Libmeminfo(base + "TestReadDmaBufInfo/proc/10/maps");
  const std::string refs_text = Libmeminfo(base + "TestReadDmaBufMapRefs/proc/10/maps");
  absl::StatusOr<std::vector<Vma>> info = ParseMaps(info_text);
  ASSERT_TRUE(info.ok()) << info.status();
  ASSERT_EQ(info->size(), 2u);
  EXPECT_EQ((*info)[0].name, "/not/dmabuf/");
  EXPECT_EQ((*info)[0].inode, 3u);
  EXPECT_EQ((*info)[1].name, "/dmabuf:");
  EXPECT_EQ((*info)[1].inode, 4u);
  EXPECT_EQ((*info)[1].end - (*info)[1].start, 0x400u);  // the 1024-byte buffer of §8d

  absl::StatusOr<std::vector<Vma>> refs = ParseMaps(refs_text);
  ASSERT_TRUE(refs.ok()) << refs.status();
  ASSERT_EQ(refs->size(), 4u);
  EXPECT_EQ((*refs)[1].inode, 2u);
  EXPECT_EQ((*refs)[2].inode, 2u);  // ino 2 mapped twice
  EXPECT_EQ((*refs)[3].inode, 3u);
  EXPECT_EQ((*refs)[3].end - (*refs)[3].start, 0x800u);
}

// --- Formats the kernel can print that the fixtures do not show ---

TEST(ParseSmapsTest, ExactKeysOnly) {
  const std::string text =
      "1000-2000 rw-p 00000000 00:00 0 [anon:x]\n"
      "Pss:                 5 kB\n"
      "Pss_Anon:           11 kB\n"
      "Pss_File:           12 kB\n"
      "Pss_Shmem:          13 kB\n"
      "Pss_Dirty:          14 kB\n"
      "Swap:                6 kB\n"
      "SwapPss:             7 kB\n"
      "Rss:\t8 kB\n"  // the kernel may use a tab after the colon
      "ProtectionKey:        0\n"
      "VmFlags: rd wr mr mw me ac \n";
  absl::StatusOr<std::vector<Vma>> vmas = ParseSmaps(text);
  ASSERT_TRUE(vmas.ok()) << vmas.status();
  ASSERT_EQ(vmas->size(), 1u);
  EXPECT_EQ((*vmas)[0].pss_kb, 5u);
  EXPECT_EQ((*vmas)[0].swap_kb, 6u);
  EXPECT_EQ((*vmas)[0].swap_pss_kb, 7u);
  EXPECT_EQ((*vmas)[0].rss_kb, 8u);
  absl::StatusOr<SmapsRollup> r = ParseSmapsRollup(text);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->pss_kb, 5u);
  EXPECT_EQ(r->swap_pss_kb, 7u);
}

TEST(ParseSmapsTest, HeaderVariants) {
  const std::string text =
      "1000-2000 rw-p 00000000 00:00 0\n"                         // no name, no trailing space
      "3000-4000 r--s 00001000 fd:05 42     /a b  c (deleted)\n"  // spaces kept inside the name
      "ffffffffffffe000-ffffffffffffffff r-xp 00000000 00:00 0 [vectors]\n";
  absl::StatusOr<std::vector<Vma>> vmas = ParseMaps(text);
  ASSERT_TRUE(vmas.ok()) << vmas.status();
  ASSERT_EQ(vmas->size(), 3u);
  EXPECT_EQ((*vmas)[0].name, "");
  EXPECT_EQ((*vmas)[1].name, "/a b  c (deleted)");
  EXPECT_EQ((*vmas)[1].offset, 0x1000u);
  EXPECT_EQ((*vmas)[1].dev, "fd:05");
  EXPECT_EQ((*vmas)[1].inode, 42u);
  EXPECT_EQ((*vmas)[2].end, 0xffffffffffffffffu);
  // Names are views into the input, not copies.
  EXPECT_GE((*vmas)[1].name.data(), text.data());
  EXPECT_LE((*vmas)[1].name.data() + (*vmas)[1].name.size(), text.data() + text.size());
}

TEST(ParseSmapsTest, HeaderWithoutFieldsHasZeros) {
  absl::StatusOr<std::vector<Vma>> vmas =
      ParseSmaps("1000-2000 rw-p 00000000 00:00 0\n3000-4000 rw-p 00000000 00:00 0\nPss: 3 kB\n");
  ASSERT_TRUE(vmas.ok()) << vmas.status();
  ASSERT_EQ(vmas->size(), 2u);
  EXPECT_EQ((*vmas)[0].pss_kb, 0u);
  EXPECT_EQ((*vmas)[1].pss_kb, 3u);
}

// --- Bad input ---

TEST(ParseSmapsBadInputTest, EmptyTextHasNoVmas) {
  absl::StatusOr<std::vector<Vma>> smaps = ParseSmaps("");
  ASSERT_TRUE(smaps.ok());
  EXPECT_TRUE(smaps->empty());
  absl::StatusOr<std::vector<Vma>> maps = ParseMaps("");
  ASSERT_TRUE(maps.ok());
  EXPECT_TRUE(maps->empty());
  absl::StatusOr<SmapsRollup> rollup = ParseSmapsRollup("");
  ASSERT_TRUE(rollup.ok());
  EXPECT_FALSE(rollup->has_pss);
  EXPECT_EQ(rollup->pss_kb, 0u);
}

TEST(ParseSmapsBadInputTest, FieldBeforeAnyHeader) {
  absl::StatusOr<std::vector<Vma>> vmas = ParseSmaps("Pss:   12 kB\n1000-2000 rw-p 0 00:00 0\n");
  ASSERT_EQ(vmas.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(MessageHas(vmas.status(), "line 1")) << vmas.status();
  EXPECT_EQ(ParseSmapsRollup("Rss: 1 kB\n").status().code(), absl::StatusCode::kInvalidArgument);
  // Even unterminated, a field before a header is misplaced, not cut.
  EXPECT_EQ(ParseSmaps("Pss: 1 kB").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ParseSmapsBadInputTest, EveryPrefixOfAFileIsOkOrDataLoss) {
  // A short read cuts the text anywhere: a prefix must never look malformed (InvalidArgument) and
  // never yield more VMAs than the whole file.
  const std::string smaps = Libmeminfo("testdata1/smaps_short");
  const std::string maps = Libmeminfo("testdata1/maps_short");
  for (size_t n = 1; n < smaps.size(); ++n) {
    const std::string_view prefix(smaps.data(), n);
    absl::StatusOr<std::vector<Vma>> vmas = ParseSmaps(prefix);
    if (vmas.ok()) {
      EXPECT_LE(vmas->size(), 6u);
    } else {
      ASSERT_EQ(vmas.status().code(), absl::StatusCode::kDataLoss) << n << ": " << vmas.status();
    }
    if (smaps[n - 1] == '\n') {
      EXPECT_TRUE(vmas.ok()) << n;
    }
    absl::StatusOr<SmapsRollup> r = ParseSmapsRollup(prefix);
    if (!r.ok()) {
      ASSERT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << n;
    }
    EXPECT_EQ(r.ok(), vmas.ok()) << n;
  }
  for (size_t n = 1; n < maps.size(); ++n) {
    absl::StatusOr<std::vector<Vma>> vmas = ParseMaps(std::string_view(maps.data(), n));
    if (!vmas.ok()) {
      ASSERT_EQ(vmas.status().code(), absl::StatusCode::kDataLoss) << n << ": " << vmas.status();
    }
  }
}

TEST(ParseSmapsBadInputTest, TruncatedMidLine) {
  const std::string header = "1000-2000 rw-p 00000000 00:00 0 [anon:x]\n";
  // A known kB field cut before its unit.
  absl::StatusOr<std::vector<Vma>> cut = ParseSmaps(header + "Pss:                 11");
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(MessageHas(cut.status(), "line 2")) << cut.status();
  EXPECT_EQ(ParseSmaps(header + "Pss:     11 k").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseSmaps(header + "Pss:").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseSmaps(header + "Shared_Cl").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseSmapsRollup(header + "Rss:  1").status().code(), absl::StatusCode::kDataLoss);
  // A header cut before its inode.
  EXPECT_EQ(ParseSmaps(header + "3000-4000 rw-p 00000000 00:").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseMaps("1000-2000 rw-p 0000").status().code(), absl::StatusCode::kDataLoss);
  // The same lines with their newline are malformed, not cut.
  EXPECT_EQ(ParseSmaps(header + "Pss:                 11\n").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseMaps("1000-2000 rw-p 0000\n").status().code(), absl::StatusCode::kInvalidArgument);
  // Complete last lines without a newline are fine.
  EXPECT_TRUE(ParseSmaps(header + "Pss: 11 kB").ok());
  EXPECT_TRUE(ParseSmaps(header + "VmFlags: rd wr").ok());
  EXPECT_TRUE(ParseSmaps(header + "THPeligible:    0").ok());
}

TEST(ParseSmapsBadInputTest, GarbageAndNulBytes) {
  using namespace std::string_literals;
  for (const std::string& text :
       {"hello world\n"s, "\0\0\0\n"s, "\xff\xfe\x01\x02\n"s, "1000-2000 rw-p 00000000 00:00 0 a\0b\n"s,
        "1000-2000\0rw-p 00000000 00:00 0\n"s, "-\n"s, ":\n"s, " Pss: 1 kB\n"s}) {
    SCOPED_TRACE(::testing::PrintToString(text));
    EXPECT_EQ(ParseSmaps(text).status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(ParseMaps(text).status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(ParseSmapsRollup(text).status().code(), absl::StatusCode::kInvalidArgument);
  }
  // Garbage in the middle of a good file names its line.
  std::string text = Libmeminfo("testdata1/smaps_short");
  text.insert(text.find('\n', text.find('\n', text.find('\n') + 1) + 1) + 1, "!!garbage!!\n");
  absl::StatusOr<std::vector<Vma>> vmas = ParseSmaps(text);
  ASSERT_EQ(vmas.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(MessageHas(vmas.status(), "line 4")) << vmas.status();
}

TEST(ParseSmapsBadInputTest, HugeNumbersOverflow) {
  const std::string header = "1000-2000 rw-p 00000000 00:00 0\n";
  const std::string thirty_digits = "123456789012345678901234567890";
  EXPECT_EQ(ParseSmaps(header + "Pss: " + thirty_digits + " kB\n").status().code(), absl::StatusCode::kInvalidArgument);
  // Overflow is never mistaken for truncation.
  EXPECT_EQ(ParseSmaps(header + "Pss: " + thirty_digits).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseMaps(thirty_digits + "-" + thirty_digits + " rw-p 0 00:00 0\n").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseMaps("10000000000000000-10000000000000001 rw-p 0 00:00 0\n").status().code(),
            absl::StatusCode::kInvalidArgument);  // 17 hex digits
  EXPECT_EQ(ParseMaps("1000-2000 rw-p " + thirty_digits + " 00:00 0\n").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseMaps("1000-2000 rw-p 0 00:00 " + thirty_digits + "\n").status().code(),
            absl::StatusCode::kInvalidArgument);
  // The largest value fits; one more does not.
  absl::StatusOr<std::vector<Vma>> max = ParseSmaps(header + "Pss: 18446744073709551615 kB\n");
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ((*max)[0].pss_kb, 18446744073709551615u);
  EXPECT_EQ(ParseSmaps(header + "Pss: 18446744073709551616 kB\n").status().code(), absl::StatusCode::kInvalidArgument);
  // The rollup sum of two valid values can overflow too.
  const std::string big = header + "Pss: 18446744073709551615 kB\n" + header + "Pss: 1 kB\n";
  EXPECT_TRUE(ParseSmaps(big).ok());
  EXPECT_EQ(ParseSmapsRollup(big).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ParseSmapsBadInputTest, MissingOrBadHeaderFields) {
  for (const char* line : {
           "1000-2000 rw-p 00000000 00:00\n",    // no inode
           "1000-2000 rw-p 00000000\n",          // no dev, no inode
           "1000-2000 rw-p\n",                   // only perms
           "1000-2000\n",                        // only the range
           "1000- rw-p 00000000 00:00 0\n",      // no end
           "1000 rw-p 00000000 00:00 0\n",       // no '-'
           "2000-1000 rw-p 00000000 00:00 0\n",  // end below start
           "1000-2000 rwzp 00000000 00:00 0\n",  // bad perms
           "1000-2000 rw-pp 00000000 00:00 0\n",
           "1000-2000 rw-p 0000000g 00:00 0\n",  // bad offset
           "1000-2000 rw-p 00000000 0000 0\n",   // dev without ':'
           "1000-2000 rw-p 00000000 00:00 x\n",  // bad inode
           "1000-2000 rw-p 00000000 00:00 12x /lib\n",
       }) {
    SCOPED_TRACE(line);
    EXPECT_EQ(ParseMaps(line).status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(ParseSmaps(line).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(ParseSmapsBadInputTest, MissingOrBadFieldValues) {
  const std::string header = "1000-2000 rw-p 00000000 00:00 0\n";
  for (const char* field : {"Pss:\n", "Pss: kB\n", "Pss: abc kB\n", "Pss: -1 kB\n", "Pss: 12\n", "Pss: 12 MB\n",
                            "Pss: 12 kB extra\n", "Pss: 12kBx\n", "Rss: 0x10 kB\n"}) {
    SCOPED_TRACE(field);
    absl::StatusOr<std::vector<Vma>> vmas = ParseSmaps(header + field);
    ASSERT_EQ(vmas.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(MessageHas(vmas.status(), "line 2")) << vmas.status();
  }
}

TEST(ParseMapsBadInputTest, SmapsFieldLinesAreNotMaps) {
  absl::StatusOr<std::vector<Vma>> vmas = ParseMaps(Libmeminfo("testdata1/smaps_short"));
  ASSERT_EQ(vmas.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(MessageHas(vmas.status(), "line 2")) << vmas.status();
}

}  // namespace
}  // namespace memfleet::accounting

namespace memfleet::accounting {
namespace {

// ParseSmapsSummary is what Account uses (no Vma per mapping): ParseSmaps folded as it goes. Its
// generic path alone, which the fast path is fuzzed against, gives the same figures (every field line
// of testdata1 is one the fast path takes) and the same errors.
TEST(ParseSmapsSummaryTest, FullSmapsSumsToPss108384OnBothPaths) {
  for (auto* parse : {&ParseSmapsSummary, &ParseSmapsSummaryGenericPath}) {
    absl::StatusOr<SmapsSummary> s = parse(Libmeminfo("testdata1/smaps"), GpuDeviceNaming::kKgsl);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->vma_count, 2760u);
    EXPECT_EQ(s->pss_kb, 108384u);  // A: BM_SmapsRollup CHECK_EQ
    EXPECT_EQ(s->swap_pss_kb, 0u);
    EXPECT_EQ(s->gpu_device_pss_kb, 0u);  // no /dev/kgsl mapping in testdata1
    EXPECT_TRUE(s->dmabuf_vmas.empty());
    EXPECT_FALSE(s->overflowed);
  }
  const std::string cut = "1000-2000 rw-p 00000000 00:00 0\nPss:                   4 k";
  EXPECT_EQ(ParseSmapsSummaryGenericPath(cut, GpuDeviceNaming::kKgsl).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseSmapsSummaryGenericPath(cut, GpuDeviceNaming::kKgsl).status(),
            ParseSmapsSummary(cut, GpuDeviceNaming::kKgsl).status());
}

TEST(ParseSmapsSummaryTest, GpuDevicePssDmaBufMappingsAndLastLineWins) {
  const std::string text =
      "1000-2000 rw-s 00000000 00:12 1094 /dev/kgsl-3d0\n"
      "Pss:                   8 kB\n"
      "SwapPss:               1 kB\n"
      "7b2f400000-7b2fd08000 rw-s 00000000 00:0d 48213 /dmabuf:\n"
      "Pss:                  20 kB\n"
      "Pss:                  30 kB\n"  // a repeated key: the last line is the VMA's value, as in ParseSmaps
      "3000-4000 r--p 00000000 fd:05 7 /system/lib64/libc.so\n"
      "Pss:                 100 kB\n"
      "SwapPss:               2 kB\n"
      "5000-6000 rw-s 00000000 00:0d 9 /dmabuf (deleted)\n"
      "Pss:                   4 kB\n"
      "6000-7000 rw-s 00000000 00:0d 10 /data/dmabuf\n";
  absl::StatusOr<SmapsSummary> s = ParseSmapsSummary(text, GpuDeviceNaming::kKgsl);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->vma_count, 5u);
  EXPECT_EQ(s->pss_kb, 8u + 30u + 100u + 4u);
  EXPECT_EQ(s->swap_pss_kb, 1u + 2u);
  EXPECT_EQ(s->gpu_device_pss_kb, 8u);
  // Any name starting with "/dmabuf" (AOSP's FileIsDmaBuf), "/dmabuf (deleted)" included; "/data/dmabuf" is a file.
  ASSERT_EQ(s->dmabuf_vmas.size(), 2u);
  EXPECT_EQ(s->dmabuf_vmas[1].inode, 9u);
  EXPECT_EQ(s->dmabuf_vmas[0].inode, 48213u);
  EXPECT_EQ(s->dmabuf_vmas[0].end - s->dmabuf_vmas[0].start, 0x908000u);
  EXPECT_EQ(s->dmabuf_vmas[0].pss_kb, 30u);
  // No prefix (generic): no GPU device mappings are counted.
  absl::StatusOr<SmapsSummary> generic = ParseSmapsSummary(text, GpuDeviceNaming::kNone);
  ASSERT_TRUE(generic.ok()) << generic.status();
  EXPECT_EQ(generic->gpu_device_pss_kb, 0u);
  EXPECT_EQ(generic->pss_kb, s->pss_kb);
}

// Qualcomm 6.x kernels map KGSL memory from a shmem file named "/kgsl-3d0": a name containing kgsl-3d0
// is the GPU device's on qcom (AOSP's heap rule matches it anywhere), never on a Mali platform.
TEST(ParseSmapsSummaryTest, KgslShmemFileIsTheGpuDeviceOnQcomOnly) {
  const std::string text =
      "1000-2000 rw-s 00000000 00:01 77 /kgsl-3d0\n"
      "Pss:                  12 kB\n"
      "2000-3000 rw-s 00000000 00:12 1094 /dev/kgsl-3d0\n"
      "Pss:                   3 kB\n"
      "3000-4000 rw-s 00000000 00:12 1095 /dev/mali0\n"
      "Pss:                   5 kB\n"
      "4000-5000 rw-p 00000000 00:00 0 [anon:kgsl]\n"
      "Pss:                   7 kB\n";
  for (auto* parse : {&ParseSmapsSummary, &ParseSmapsSummaryGenericPath}) {
    EXPECT_EQ(parse(text, GpuDeviceNaming::kKgsl)->gpu_device_pss_kb, 12u + 3u);
    EXPECT_EQ(parse(text, GpuDeviceNaming::kMali)->gpu_device_pss_kb, 5u);
    EXPECT_EQ(parse(text, GpuDeviceNaming::kNone)->gpu_device_pss_kb, 0u);
  }
}

TEST(ParseSmapsSummaryTest, SameErrorsAsParseSmaps) {
  for (const std::string& text : {std::string("Pss: 4 kB\n"),  // a field before any header
                                  std::string("1000-2000 rw-p 00000000 00:00 0\nPss: abc kB\n"),
                                  std::string("1000-2000 rw-p 00000000 00:00 0\nPss: 4 k"),  // cut short
                                  std::string("1000-2000 rw-p 00000000 00:00 x\n")}) {
    SCOPED_TRACE(text);
    const absl::Status want = ParseSmaps(text).status();
    ASSERT_FALSE(want.ok());
    EXPECT_EQ(ParseSmapsSummary(text, GpuDeviceNaming::kKgsl).status(), want);
  }
  absl::StatusOr<SmapsSummary> empty = ParseSmapsSummary("", GpuDeviceNaming::kKgsl);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->vma_count, 0u);
}

TEST(ParseSmapsSummaryTest, SumBeyond64BitsIsFlagged) {
  const std::string vma = "1000-2000 rw-p 00000000 00:00 0\nPss: 18446744073709551615 kB\n";
  absl::StatusOr<std::vector<Vma>> one = ParseSmaps(vma);
  ASSERT_TRUE(one.ok()) << one.status();  // 2^64 - 1 is a value; two of them do not sum
  absl::StatusOr<SmapsSummary> s = ParseSmapsSummary(vma + vma, GpuDeviceNaming::kKgsl);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->overflowed);
  absl::StatusOr<SmapsSummary> single = ParseSmapsSummary(vma, GpuDeviceNaming::kKgsl);
  ASSERT_TRUE(single.ok());
  EXPECT_FALSE(single->overflowed);
}

// Keys the parser does not sum are skipped by their line's end; a short line whose next line ends
// where a 28-byte kB line would must not swallow that next line.
TEST(ParseSmapsSummaryTest, SkippedKeysNeverSwallowTheNextLine) {
  const std::string text =
      "1000-2000 rw-p 00000000 00:00 0\n"
      "Locked: 1\n"
      "Pss:         8 kB\n"
      "Referenced:   zz kB\n"
      "2000-3000 rw-p 00000000 00:00 0\n"
      "Referenced:            4 kB\n"  // the kernel's 28-byte layout
      "Pss:                  16 kB\n";
  ASSERT_EQ(text.substr(32 + 24, 4), " kB\n");
  ASSERT_EQ(text.find("Pss:                  16"),
            text.find("Referenced:            4") + 28);  // the first VMA's Pss line ends at Locked's 28th byte
  absl::StatusOr<SmapsSummary> s = ParseSmapsSummary(text, GpuDeviceNaming::kKgsl);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->vma_count, 2u);
  EXPECT_EQ(s->pss_kb, 8u + 16u);  // Locked's and Referenced's values are never read
}

}  // namespace
}  // namespace memfleet::accounting
