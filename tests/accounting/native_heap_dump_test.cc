#include "accounting/native_heap_dump.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "accounting/graphics_libraries.h"
#include "tests/support/test_data.h"

namespace memfleet::accounting {
namespace {

using memfleet::testing::ReadTestData;

uint64_t GraphicsBytesOf(const std::string& relative) {
  absl::StatusOr<NativeHeapDump> dump = ParseNativeHeapDump(ReadTestData(relative));
  EXPECT_TRUE(dump.ok()) << relative << ": " << dump.status();
  if (!dump.ok()) return 0;
  return GraphicsNativeBytes(*dump, GraphicsLibraries::Default());
}

TEST(NativeHeapDumpTest, ParsesRecordsAndMaps) {
  absl::StatusOr<NativeHeapDump> dump =
      ParseNativeHeapDump(ReadTestData("captures-samples/qcom-edge/cmd/native_heap@22459"));
  ASSERT_TRUE(dump.ok()) << dump.status();
  ASSERT_EQ(dump->records.size(), 4u);
  EXPECT_TRUE(dump->records[0].zygote);
  EXPECT_EQ(dump->records[0].size_bytes, 1028u);
  EXPECT_EQ(dump->records[0].count, 28u);
  ASSERT_EQ(dump->records[0].frames.size(), 1u);
  EXPECT_EQ(dump->records[0].frames[0], 0x1ad37449u);
  EXPECT_FALSE(dump->records[3].zygote);
  EXPECT_EQ(dump->records[3].size_bytes, 1048673u);
  EXPECT_EQ(dump->records[3].count, 31u);
  ASSERT_EQ(dump->records[3].frames.size(), 6u);
  EXPECT_EQ(dump->records[3].frames[5], 0x1b5d84a0u);
  ASSERT_EQ(dump->maps.size(), 7u);
  EXPECT_EQ(dump->maps[0].start, 0x14b37000u);
  EXPECT_EQ(dump->maps[0].end, 0x14df1000u);
  EXPECT_EQ(dump->maps[0].path, "/system/lib64/libgui.so");
  EXPECT_EQ(dump->maps[6].path, "/system/lib64/libbinder.so");
}

// Golden values: each capture's expected.json native_graphics_kb for the pid; the byte sums were
// worked out by hand from the dump (records whose frames fall in a graphics mapping).
TEST(NativeHeapDumpTest, QcomEdge22459) {
  // graphics maps: libgui, libvulkan 194fb000-19a33000, libhwui, libgsl 1aa24000-1aee9000.
  //   z1 1028 x 28, pc 1ad37449 in libgsl           ->     28,784
  //   z1 1058 x 26, pcs in libart and libc          ->          0
  //   z0   87 x  8, pc in libbinder                 ->          0
  //   z0 1048673 x 31, first pc 199bdeb9 in libvulkan -> 32,508,863
  // 32,537,647 bytes -> floor(/1024) = 31775, expected.json's value.
  const uint64_t bytes = GraphicsBytesOf("captures-samples/qcom-edge/cmd/native_heap@22459");
  EXPECT_EQ(bytes, 32537647u);
  EXPECT_EQ(bytes / 1024, 31775u);
}

TEST(NativeHeapDumpTest, QcomEdge18483PcAtMappingEndIsOutside) {
  // graphics maps: libvulkan [13882000,13b89000), libgsl [14a69000,14e9e000),
  // libhwui [15f75000,1619f000), libgui [16e1d000,16f0d000).
  //   65559 x 16 (16e9c72d libgui)         1,048,944
  //    1075 x 34 (13b2f5fb libvulkan)         36,550
  //   65600 x 25 (13b89000 = vulkan end, libc)     0   <- 1,640,000 if the end counted
  //      60 x 36 (13ad6aee libvulkan)          2,160
  //      70 x  8 (14aaedf9 libgsl)               560
  //    4122 x 16 (16f0d000 = gui end, libutils, 13b89000 = vulkan end)  0
  //      75 x 23 (13b81bb8 libvulkan)          1,725
  //    1041 x 26 (1610e68b libhwui)           27,066
  //   65557 x 27 (13a7c1ca libvulkan)      1,770,039
  //    4179 x  4 (16e53807 libgui)            16,716
  // 2,903,760 bytes -> 2835 kB, expected.json's value.
  const uint64_t bytes = GraphicsBytesOf("captures-samples/qcom-edge/cmd/native_heap@18483");
  EXPECT_EQ(bytes, 2903760u);
  EXPECT_EQ(bytes / 1024, 2835u);
}

TEST(NativeHeapDumpTest, Mt6989_5478RecordCountsOnce) {
  // graphics maps: libgui, libGLES_mali [17685000,17b5a000), libvulkan [18565000,18bb4000),
  // libmtk_mali [1b9c7000,1bbf4000).
  //    290 x 21 (1bbb0d57 libmtk_mali)                          6,090
  //   1048634 x 26 (17e688d5 libsqlite)                            0
  //   4114 x 38 (17ab725b libGLES_mali and 1873cd0f libvulkan)  156,332  once, not twice
  //   4178 x 30 (176cd2f0 libGLES_mali and 1bbcdf2a libmtk_mali) 125,340
  //   1104 x 19 (1ba5c9ef and 1ba83690, both libmtk_mali)       20,976
  // 308,738 bytes -> 301 kB, expected.json's value.
  const uint64_t bytes = GraphicsBytesOf("captures-samples/mtk-mt6989/cmd/native_heap@5478");
  EXPECT_EQ(bytes, 308738u);
  EXPECT_EQ(bytes / 1024, 301u);
}

TEST(NativeHeapDumpTest, XringO1_24246) {
  // graphics maps: libmtk_mali [12ff8000,13348000), libgui [15592000,15838000), libGLES_mali,
  // libvulkan.
  //        343 x 20 (156971c5 libgui)              6,860
  //    1048580 x 36 (130437c7 libmtk_mali)    37,748,880
  //        283 x  6 (1718d163 libsqlite)               0
  //         83 x 34 (132a2ddc libmtk_mali)         2,822
  //        344 x 40 (156d303d libgui)             13,760
  // 37,772,322 bytes -> 36887 kB, expected.json's value.
  const uint64_t bytes = GraphicsBytesOf("captures-samples/xring-o1/cmd/native_heap@24246");
  EXPECT_EQ(bytes, 37772322u);
  EXPECT_EQ(bytes / 1024, 36887u);
}

constexpr char kHeader[] =
    "Android Native Heap Dump v1.2\n\nBuild fingerprint: 'x'\n\nTotal memory: 1\n"
    "Allocation records: 1\nBacktrace size: 16\n\n";

TEST(NativeHeapDumpTest, OverlappingMappingsCountARecordOnce) {
  const std::string text = std::string(kHeader) +
                           "z 0  sz     1000  num    3  bt 1500 1600 2500\n"
                           "z 1  sz       10  num    1  bt 3000\n"
                           "MAPS\n"
                           "1000-2000 r-xp 00000000 fd:05 1 /system/lib64/libgui.so\n"
                           "1400-1800 r-xp 00000000 fd:05 2 /vendor/lib64/libGLESv2_adreno.so\n"
                           "2000-3000 r-xp 00000000 fd:05 3 /system/lib64/libhwui.so\n"
                           "END\n";
  absl::StatusOr<NativeHeapDump> dump = ParseNativeHeapDump(text);
  ASSERT_TRUE(dump.ok()) << dump.status();
  // Record 1: three graphics frames, two of them in two mappings each: 3000 bytes once.
  // Record 2: pc 3000 is libhwui's end: outside.
  EXPECT_EQ(GraphicsNativeBytes(*dump, GraphicsLibraries::Default()), 3000u);
}

TEST(NativeHeapDumpTest, AnonymousAndDeletedMappings) {
  const std::string text = std::string(kHeader) +
                           "z 0  sz     100  num    1  bt 1500\n"
                           "z 0  sz     200  num    1  bt 2500\n"
                           "z 0  sz     400  num    1  bt\n"
                           "MAPS\n"
                           "1000-2000 rw-p 00000000 00:00 0\n"
                           "2000-3000 r-xp 00000000 fd:05 3     /data/app/libvulkan_app.so (deleted)\n"
                           "END\n";
  absl::StatusOr<NativeHeapDump> dump = ParseNativeHeapDump(text);
  ASSERT_TRUE(dump.ok()) << dump.status();
  ASSERT_EQ(dump->maps.size(), 2u);
  EXPECT_EQ(dump->maps[0].path, "");
  EXPECT_EQ(dump->maps[1].path, "/data/app/libvulkan_app.so (deleted)");
  ASSERT_EQ(dump->records.size(), 3u);
  EXPECT_TRUE(dump->records[2].frames.empty());
  EXPECT_EQ(GraphicsNativeBytes(*dump, GraphicsLibraries::Default()), 200u);
}

TEST(NativeHeapDumpTest, HugeSizesSaturate) {
  const std::string text = std::string(kHeader) +
                           "z 0  sz 18446744073709551615  num 2  bt 1500\n"
                           "z 0  sz 4294967296  num 4294967296  bt 1500\n"
                           "z 0  sz 1  num 1  bt 1500\n"
                           "MAPS\n"
                           "1000-2000 r-xp 00000000 fd:05 1 /system/lib64/libgui.so\n"
                           "END\n";
  absl::StatusOr<NativeHeapDump> dump = ParseNativeHeapDump(text);
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_EQ(GraphicsNativeBytes(*dump, GraphicsLibraries::Default()), std::numeric_limits<uint64_t>::max());
}

TEST(NativeHeapDumpTest, NumberOverflowIsInvalid) {
  const std::string text = std::string(kHeader) + "z 0  sz 18446744073709551616  num 2  bt 1500\nMAPS\nEND\n";
  EXPECT_EQ(ParseNativeHeapDump(text).status().code(), absl::StatusCode::kInvalidArgument);
  const std::string pc = std::string(kHeader) + "z 0  sz 1  num 2  bt 1ffffffffffffffff\nMAPS\nEND\n";
  EXPECT_EQ(ParseNativeHeapDump(pc).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(NativeHeapDumpTest, TruncatedIsDataLoss) {
  const std::string full = ReadTestData("captures-samples/qcom-edge/cmd/native_heap@22459");
  for (size_t keep : {full.size() - 4, full.find("MAPS") + 20, full.find("MAPS"), full.size() / 3}) {
    SCOPED_TRACE(keep);
    EXPECT_EQ(ParseNativeHeapDump(full.substr(0, keep)).status().code(), absl::StatusCode::kDataLoss);
  }
}

TEST(NativeHeapDumpTest, GarbageIsInvalid) {
  EXPECT_EQ(ParseNativeHeapDump("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseNativeHeapDump("hello\nMAPS\nEND\n").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseNativeHeapDump(std::string("\x00\xff\x10", 3)).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(NativeHeapDumpTest, BadLinesNameTheLine) {
  // Line 9 is the first record line after the 8 header lines.
  absl::StatusOr<NativeHeapDump> dump =
      ParseNativeHeapDump(std::string(kHeader) + "z 0  sz  12  num  x  bt 1500\nMAPS\nEND\n");
  EXPECT_EQ(dump.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(dump.status().message()).find("line 9"), std::string::npos) << dump.status();

  for (const char* record : {"z 2  sz 1  num 1  bt 10\n", "z 0  size 1  num 1  bt 10\n", "z 0  sz 1  num 1  bt 10 zz\n",
                             "z 0  sz 1  num 1\n", "z 0  sz -1  num 1  bt\n"}) {
    SCOPED_TRACE(record);
    EXPECT_EQ(ParseNativeHeapDump(std::string(kHeader) + record + "MAPS\nEND\n").status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  for (const char* map :
       {"1000 r-xp 00000000 fd:05 1 /a.so\n", "1000-2000\n", "2000-1000 r-xp 00000000 fd:05 1 /a.so\n",
        "1000-2000 r-xp 00000000 fd:05 x /a.so\n", "1000-zz r-xp 00000000 fd:05 1 /a.so\n"}) {
    SCOPED_TRACE(map);
    absl::StatusOr<NativeHeapDump> d =
        ParseNativeHeapDump(std::string(kHeader) + "z 0  sz 1  num 1  bt 10\nMAPS\n" + map + "END\n");
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(d.status().message()).find("line 11"), std::string::npos) << d.status();
  }
}

// Fields are split at runs of spaces and tabs, as `am dumpheap -n` pads them; a record's values do not
// depend on the padding, and consecutive records do not leak fields into each other.
TEST(NativeHeapDumpTest, RecordsSplitAtRunsOfSpacesAndTabs) {
  const std::string text = std::string(kHeader) +
                           "z 1\tsz \t 4096\t\tnum  3  bt 1500  1a2b\t \n"
                           "  z 0  sz 12  num 1  bt\tff\n"
                           "z 0 sz 7 num 2 bt 10\n"
                           "MAPS\nEND\n";
  absl::StatusOr<NativeHeapDump> dump = ParseNativeHeapDump(text);
  ASSERT_TRUE(dump.ok()) << dump.status();
  ASSERT_EQ(dump->records.size(), 3u);
  EXPECT_TRUE(dump->records[0].zygote);
  EXPECT_EQ(dump->records[0].size_bytes, 4096u);
  EXPECT_EQ(dump->records[0].count, 3u);
  ASSERT_EQ(dump->records[0].frames.size(), 2u);
  EXPECT_EQ(dump->records[0].frames[1], 0x1a2bu);
  EXPECT_FALSE(dump->records[1].zygote);
  EXPECT_EQ(dump->records[1].size_bytes, 12u);
  ASSERT_EQ(dump->records[1].frames.size(), 1u);
  EXPECT_EQ(dump->records[1].frames[0], 0xffu);
  EXPECT_EQ(dump->records[2].count, 2u);
  ASSERT_EQ(dump->records[2].frames.size(), 1u);
  EXPECT_EQ(dump->records[2].frames[0], 0x10u);
}

TEST(NativeHeapDumpTest, EmptyDumpIsZero) {
  absl::StatusOr<NativeHeapDump> dump = ParseNativeHeapDump(std::string(kHeader) + "MAPS\nEND\n");
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_TRUE(dump->records.empty());
  EXPECT_EQ(GraphicsNativeBytes(*dump, GraphicsLibraries::Default()), 0u);
}

}  // namespace
}  // namespace memfleet::accounting
