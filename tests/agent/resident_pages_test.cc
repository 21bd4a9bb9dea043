// DropCleanCodePages: only file-backed, read-only mappings with no modified page are dropped, and the
// process goes on running the code whose pages it dropped.
#include "agent/resident_pages.h"

#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace memfleet::agent {
namespace {

constexpr char kSmaps[] =
    "00400000-00404000 r--p 00000000 08:01 42     /data/local/tmp/memfleet/memfleet-agent\n"
    "Size:                 16 kB\n"
    "Rss:                  16 kB\n"
    "Anonymous:             0 kB\n"
    "00404000-00e38000 r-xp 00004000 08:01 42     /data/local/tmp/memfleet/memfleet-agent\n"
    "Rss:                8000 kB\n"
    "Anonymous:             0 kB\n"
    "0115d000-011e4000 r--p 00d5d000 08:01 42     /data/local/tmp/memfleet/memfleet-agent\n"
    "Anonymous:            12 kB\n"  // relocated (RELRO): its modified pages must stay
    "011e4000-011f7000 rw-p 00de4000 08:01 42     /data/local/tmp/memfleet/memfleet-agent\n"
    "Anonymous:             0 kB\n"  // writable: never dropped
    "01ff0000-02011000 rw-p 00000000 00:00 0      [heap]\n"
    "Anonymous:           132 kB\n"
    "7f0000000000-7f0000021000 r--p 00000000 00:00 0 \n"
    "Anonymous:             0 kB\n"  // no file behind it
    "7ffd5a3f0000-7ffd5a3f2000 r-xp 00000000 00:00 0      [vdso]\n"
    "Anonymous:             0 kB\n"
    "7f1234560000-7f1234570000 r-xs 00000000 00:05 7      /dev/shm/shared\n"
    "Anonymous:             0 kB\n";  // shared mapping: not ours to drop

TEST(ResidentPagesTest, OnlyCleanReadOnlyPrivateFileMappingsAreDropped) {
  std::vector<AddressRange> r = CleanFileMappings(kSmaps);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].begin, 0x400000u);
  EXPECT_EQ(r[0].end, 0x404000u);
  EXPECT_EQ(r[1].begin, 0x404000u);
  EXPECT_EQ(r[1].end, 0xe38000u);
}

TEST(ResidentPagesTest, GarbageIsNoMapping) {
  EXPECT_TRUE(CleanFileMappings("").empty());
  EXPECT_TRUE(CleanFileMappings("zz-yy r-xp 0 0 0 /x\nAnonymous: 0 kB\n").empty());
  EXPECT_TRUE(CleanFileMappings("00400000-00404000 r-xp 0 08:01 42 /x\nAnonymous: lots\n").empty());
  // A mapping whose Anonymous line never comes is not dropped.
  EXPECT_TRUE(CleanFileMappings("00400000-00404000 r-xp 0 08:01 42 /x\nRss: 4 kB\n").empty());
}

long RssFileKb() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("RssFile:", 0) == 0) return std::stol(line.substr(8));
  }
  return -1;
}

// This test binary's own code and libraries: dropped from its resident set, and running on.
TEST(ResidentPagesTest, DroppedPagesLeaveTheResidentSetAndComeBackWhenRun) {
  const long before_kb = RssFileKb();
  ASSERT_GT(before_kb, 0);
  EXPECT_GT(DropCleanCodePages(), 0u);
  const long after_kb = RssFileKb();
  EXPECT_LT(after_kb, before_kb) << "RssFile " << before_kb << " -> " << after_kb << " kB";
  // Code and read-only data of the dropped mappings run and read as before.
  std::vector<AddressRange> again = CleanFileMappings(kSmaps);
  EXPECT_EQ(again.size(), 2u);
}

}  // namespace
}  // namespace memfleet::agent
