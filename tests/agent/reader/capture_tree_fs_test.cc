#include "agent/reader/capture_tree_fs.h"

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/load_tree.h"
#include "tests/support/temp_dir.h"

namespace memfleet::agent {
namespace {

namespace fs = std::filesystem;
using memfleet::testing::ReadFileForTest;
using memfleet::testing::TestData;

using memfleet::testing::TempDir;

std::string EdgeTree() { return TestData("captures/qcom-edge/tree"); }

TEST(CaptureTreeFsTest, ReadsFixtureBytesVerbatim) {
  CaptureTreeFs fs(EdgeTree());
  NodeRead meminfo = fs.Read("proc/meminfo");
  ASSERT_TRUE(meminfo.ok()) << meminfo.errno_name;
  EXPECT_EQ(meminfo.content, ReadFileForTest(EdgeTree() + "/proc/meminfo"));
  EXPECT_NE(meminfo.content.find("MemTotal:"), std::string::npos);
  // config.gz is binary (gzip, with NUL bytes): nothing may stop at a NUL or translate bytes.
  NodeRead config = fs.Read("proc/config.gz");
  ASSERT_TRUE(config.ok());
  std::string expected = ReadFileForTest(EdgeTree() + "/proc/config.gz");
  ASSERT_GE(expected.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(expected[0]), 0x1f);  // gzip magic
  EXPECT_EQ(config.content, expected);
}

TEST(CaptureTreeFsTest, ErrFileGivesItsErrno) {
  CaptureTreeFs fs(EdgeTree());
  // The fixture's proc/22459/oom_score_adj.err holds "EACCES\n".
  NodeRead r = fs.Read("proc/22459/oom_score_adj");
  EXPECT_EQ(r.errno_name, "EACCES");
  EXPECT_TRUE(r.content.empty());
  EXPECT_FALSE(r.ok());
}

TEST(CaptureTreeFsTest, AbsentNodeIsEnoent) {
  CaptureTreeFs fs(EdgeTree());
  EXPECT_EQ(fs.Read("proc/22459/maps").errno_name, "ENOENT");
  EXPECT_EQ(fs.Read("proc/99999/smaps").errno_name, "ENOENT");
  EXPECT_EQ(fs.Read("proc/mtk_mali/gpu_memory").errno_name, "ENOENT");
}

TEST(CaptureTreeFsTest, WriteThenReadReplaysTheArgNode) {
  std::string tree = TestData("captures/mtk-mt6989/tree");
  CaptureTreeFs fs(tree);
  NodeRead r = fs.WriteThenRead("proc/dma_heap/rss_pid", "pid:11750\n", "11750");
  ASSERT_TRUE(r.ok()) << r.errno_name;
  EXPECT_EQ(r.content, ReadFileForTest(tree + "/proc/dma_heap/rss_pid@11750"));
  EXPECT_EQ(fs.WriteThenRead("proc/dma_heap/rss_pid", "pid:1\n", "1").errno_name, "ENOENT");
  EXPECT_EQ(fs.WriteThenRead("proc/dma_heap/rss_pid", "", "").errno_name, "EINVAL");
  EXPECT_EQ(fs.WriteThenRead("proc/dma_heap/rss_pid", "", "1/../../../capture.json").errno_name, "EINVAL");
}

TEST(CaptureTreeFsTest, RunCommandReadsCmdFolder) {
  CaptureTreeFs fs(EdgeTree());
  NodeRead heap = fs.RunCommand("native_heap", "14969");
  ASSERT_TRUE(heap.ok()) << heap.errno_name;
  EXPECT_EQ(heap.content, ReadFileForTest(EdgeTree() + "/cmd/native_heap@14969"));
  EXPECT_EQ(fs.RunCommand("native_heap", "2").errno_name, "ENOENT");
  EXPECT_EQ(fs.RunCommand("dumpsys_meminfo", "").errno_name, "ENOENT");

  TempDir dir;
  dir.Write("cmd/dumpsys_meminfo.err", "EPERM\n");
  dir.Write("cmd/native_heap@7", "dump of 7");
  CaptureTreeFs tmp(dir.path());
  EXPECT_EQ(tmp.RunCommand("dumpsys_meminfo", "").errno_name, "EPERM");
  EXPECT_EQ(tmp.RunCommand("native_heap", "7").content, "dump of 7");
  for (const char* name : {"", ".", "..", "../cmd/native_heap", "a/b", "x y"}) {
    EXPECT_EQ(tmp.RunCommand(name, "").errno_name, "EINVAL") << name;
  }
  EXPECT_EQ(tmp.RunCommand("native_heap", "../7").errno_name, "EINVAL");
  EXPECT_EQ(tmp.RunCommand("native_heap", "..").errno_name, "EINVAL");
}

TEST(CaptureTreeFsTest, ListShowsErrNodesUnderTheirOwnName) {
  CaptureTreeFs fs(EdgeTree());
  DirList list = fs.List("proc/22459");
  ASSERT_TRUE(list.ok()) << list.errno_name;
  std::vector<std::string> names;
  for (const DirEntry& e : list.entries) names.push_back(e.name);
  // The fixture folder holds cmdline, fdinfo/, oom_score_adj.err, smaps, status.
  EXPECT_EQ(names, (std::vector<std::string>{"cmdline", "fdinfo", "oom_score_adj", "smaps", "status"}));
  EXPECT_TRUE(list.entries[1].is_directory);
  EXPECT_FALSE(list.entries[1].is_error);
  EXPECT_FALSE(list.entries[2].is_directory);
  EXPECT_TRUE(list.entries[2].is_error);
  EXPECT_FALSE(list.entries[3].is_error);

  DirList root = fs.List("");
  ASSERT_TRUE(root.ok());
  ASSERT_EQ(root.entries.size(), 4u);  // capture.json cmd proc sys
  EXPECT_EQ(root.entries[0].name, "capture.json");
  EXPECT_FALSE(root.entries[0].is_directory);
  EXPECT_TRUE(root.entries[3].is_directory);
  EXPECT_EQ(fs.List("proc/nope").errno_name, "ENOENT");
}

TEST(CaptureTreeFsTest, FolderErrFileAndStaleErrFile) {
  TempDir dir;
  dir.Write("proc/5/fdinfo.err", "EACCES");
  dir.Write("proc/5/status", "Name: x\n");
  dir.Write("proc/5/status.err", "EIO\n");  // stale: the node itself is there and wins
  CaptureTreeFs fs(dir.path());
  EXPECT_EQ(fs.List("proc/5/fdinfo").errno_name, "EACCES");
  DirList list = fs.List("proc/5");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list.entries.size(), 2u);
  EXPECT_EQ(list.entries[0].name, "fdinfo");
  EXPECT_TRUE(list.entries[0].is_error);
  EXPECT_EQ(list.entries[1].name, "status");
  EXPECT_FALSE(list.entries[1].is_error);
  EXPECT_EQ(fs.Read("proc/5/status").content, "Name: x\n");
}

TEST(CaptureTreeFsTest, MalformedErrFileIsEinvalNotItsText) {
  TempDir dir;
  dir.Write("proc/1/smaps.err", "permission denied\n");
  dir.Write("proc/1/status.err", "");
  dir.Write("proc/1/cmdline.err", "  ENODATA \n");
  CaptureTreeFs fs(dir.path());
  EXPECT_EQ(fs.Read("proc/1/smaps").errno_name, "EINVAL");
  EXPECT_EQ(fs.Read("proc/1/status").errno_name, "EINVAL");
  EXPECT_EQ(fs.Read("proc/1/cmdline").errno_name, "ENODATA");
}

TEST(CaptureTreeFsTest, RealFailuresGiveTheRealErrno) {
  CaptureTreeFs fs(EdgeTree());
  EXPECT_EQ(fs.Read("proc").errno_name, "EISDIR");
  EXPECT_EQ(fs.Read("proc/meminfo/x").errno_name, "ENOTDIR");
  EXPECT_EQ(fs.List("proc/meminfo").errno_name, "ENOTDIR");
}

TEST(CaptureTreeFsTest, UnreadableFileIsEacces) {
  TempDir dir;
  std::string file = dir.Write("proc/meminfo", "MemTotal: 1 kB\n");
  chmod(dir.path().c_str(), 0755);
  chmod((dir.path() + "/proc").c_str(), 0755);
  chmod(file.c_str(), 0);
  CaptureTreeFs fs(dir.path());
  // Root reads anything, so the read runs in a child that has dropped to nobody.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(2);
    _exit(fs.Read("proc/meminfo").errno_name == "EACCES" ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 2) GTEST_SKIP() << "cannot drop privileges here";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(CaptureTreeFsTest, FifoIsRefusedWithoutBlocking) {
  TempDir dir;
  dir.Write("proc/meminfo", "x");
  ASSERT_EQ(mkfifo((dir.path() + "/proc/pipe").c_str(), 0644), 0);
  CaptureTreeFs fs(dir.path());
  // Opening a FIFO for reading blocks until a writer comes: a planted FIFO must not hang the agent.
  EXPECT_EQ(fs.Read("proc/pipe").errno_name, "EINVAL");
}

TEST(CaptureTreeFsTest, ReadsLargeFilesToEnd) {
  TempDir dir;
  std::string big;
  for (int i = 0; big.size() < (3u << 20); ++i) big += "line " + std::to_string(i) + "\n";
  dir.Write("proc/1/smaps", big);
  CaptureTreeFs fs(dir.path());
  NodeRead r = fs.Read("proc/1/smaps");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.content.size(), big.size());
  EXPECT_EQ(r.content, big);
}

TEST(CaptureTreeFsTest, MissingRootFailsEveryCall) {
  CaptureTreeFs fs("/nonexistent/memfleet/tree");
  EXPECT_EQ(fs.Read("proc/meminfo").errno_name, "ENOENT");
  EXPECT_EQ(fs.List("").errno_name, "ENOENT");
  EXPECT_FALSE(fs.IsDirectory("proc"));
  EXPECT_EQ(fs.RootName(), "/nonexistent/memfleet/tree");
}

// Path refusal and containment, with the kernel's openat2 checks and with the realpath() fallback.
class CaptureTreeFsPathTest : public ::testing::TestWithParam<bool> {
 protected:
  CaptureTreeFs::Options options() const {
    CaptureTreeFs::Options o;
    o.allow_openat2 = GetParam();
    return o;
  }
};

TEST_P(CaptureTreeFsPathTest, RefusesPathsOutsideTheContract) {
  CaptureTreeFs fs(EdgeTree(), options());
  using namespace std::string_literals;
  for (const std::string& path :
       {"/etc/passwd"s, "/proc/meminfo"s, "../qcom-sm8450/tree/proc/meminfo"s, "proc/../capture.json"s,
        "proc/22459/../../capture.json"s, "./proc/meminfo"s, "proc/./meminfo"s, "proc//meminfo"s, "proc/meminfo/"s,
        "proc\0/meminfo"s, "proc/meminfo\0"s, ".."s, "."s, ""s}) {
    EXPECT_EQ(fs.Read(path).errno_name, "EINVAL") << path;
    EXPECT_EQ(fs.WriteThenRead(path, "pid:1\n", "1").errno_name, "EINVAL") << path;
    if (!path.empty()) {
      EXPECT_EQ(fs.List(path).errno_name, "EINVAL") << path;
      EXPECT_FALSE(fs.IsDirectory(path)) << path;
    }
  }
}

TEST_P(CaptureTreeFsPathTest, RefusesSymlinksLeavingTheTree) {
  TempDir dir;
  std::string secret = dir.Write("outside/secret", "TOPSECRET");
  dir.Write("outside/EACCES.txt", "EACCES");
  dir.Write("tree/proc/meminfo", "MemTotal: 1 kB\n");
  std::string tree = dir.path() + "/tree";
  fs::create_symlink(secret, tree + "/proc/absolute");
  fs::create_symlink("../../outside/secret", tree + "/proc/relative");
  fs::create_symlink(dir.path() + "/outside", tree + "/sys");
  fs::create_symlink("../outside/EACCES.txt", tree + "/proc/leak.err");
  fs::create_symlink("meminfo", tree + "/proc/alias");  // stays inside: allowed
  CaptureTreeFs cfs(tree, options());
  EXPECT_EQ(cfs.Read("proc/absolute").errno_name, "EINVAL");
  EXPECT_EQ(cfs.Read("proc/relative").errno_name, "EINVAL");
  EXPECT_EQ(cfs.Read("sys/secret").errno_name, "EINVAL");
  EXPECT_EQ(cfs.List("sys").errno_name, "EINVAL");
  EXPECT_FALSE(cfs.IsDirectory("sys"));
  // An escaping `.err` is not read either: the node stays absent.
  EXPECT_EQ(cfs.Read("proc/leak").errno_name, "ENOENT");
  NodeRead alias = cfs.Read("proc/alias");
  ASSERT_TRUE(alias.ok()) << alias.errno_name;
  EXPECT_EQ(alias.content, "MemTotal: 1 kB\n");
}

INSTANTIATE_TEST_SUITE_P(Openat2AndRealpath, CaptureTreeFsPathTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "openat2" : "realpath";
                         });

}  // namespace
}  // namespace memfleet::agent
