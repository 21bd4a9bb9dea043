// anon_inode:dmabuf mappings of legacy kernels: counted with their length, never taken for a buffer.
#include "accounting/legacy_dmabuf.h"

#include <gtest/gtest.h>

#include <string>

#include "accounting/smaps_parser.h"

namespace memfleet::accounting {
namespace {

constexpr char kSmaps[] =
    "12d0c000-134f5000 rw-s 00000000 00:0a 11957                              anon_inode:dmabuf\n"
    "Size:               8100 kB\nPss:                   0 kB\n"
    "1b520000-1c521000 rw-s 00000000 00:0d 3554                               /dmabuf:qcom,system\n"
    "Size:              16388 kB\nPss:                   0 kB\n"
    "1c52f000-1c530000 rw-s 00000000 00:0a 11957                              anon_inode:dmabuf\n"
    "Size:                  4 kB\nPss:                   0 kB\n"
    "1d000000-1d001000 rw-s 00000000 00:0a 11957                              anon_inode:dmabuf_x\n"
    "Size:                  4 kB\nPss:                   0 kB\n";

TEST(LegacyDmaBufTest, SmapsSummaryKeepsThemApartFromNamedBuffers) {
  absl::StatusOr<SmapsSummary> s = ParseSmapsSummary(kSmaps, GpuDeviceNaming::kNone);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->dmabuf_vmas.size(), 1u);  // only /dmabuf:qcom,system names its buffer (inode 3554)
  LegacyDmaBufMappings m = CountLegacyDmaBufMappings(s->legacy_dmabuf_vmas);
  EXPECT_EQ(m.count, 3u);  // any name starting with anon_inode:dmabuf, "anon_inode:dmabuf_x" too
  EXPECT_EQ(m.bytes, (0x134f5000u - 0x12d0c000u) + 0x1000u + 0x1000u);
}

TEST(LegacyDmaBufTest, MapsCountToo) {
  absl::StatusOr<std::vector<Vma>> maps =
      ParseMaps("7000-9000 rw-s 00000000 00:0a 11957 anon_inode:dmabuf\n9000-a000 r--p 00000000 00:00 0\n");
  ASSERT_TRUE(maps.ok()) << maps.status();
  LegacyDmaBufMappings m = CountLegacyDmaBufMappings(*maps);
  EXPECT_EQ(m.count, 1u);
  EXPECT_EQ(m.bytes, 0x2000u);
}

TEST(LegacyDmaBufTest, WarningGivesCountAndLength) {
  // The 765G launcher: 142 mappings, 10,136 kB.
  std::string w = LegacyDmaBufWarning("proc/3740/smaps", {142, 10136u * 1024});
  EXPECT_EQ(w.rfind("proc/3740/smaps: 142 anon_inode:dmabuf mappings (10136 kB", 0), 0u) << w;
  EXPECT_NE(w.find("dma_kb null"), std::string::npos) << w;
}

}  // namespace
}  // namespace memfleet::accounting
