#include "agent/reader/device_root_fs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace memfleet::agent {
namespace {

namespace fs = std::filesystem;

using memfleet::testing::TempDir;

TEST(DeviceRootFsTest, ReadsProcfsToEndThoughItReportsSizeZero) {
  DeviceRootFs fs("/");
  struct stat st;
  ASSERT_EQ(stat("/proc/self/smaps", &st), 0);
  EXPECT_EQ(st.st_size, 0);  // why a read loop to EOF is needed at all
  std::string smaps_path = "proc/" + std::to_string(getpid()) + "/smaps";
  NodeRead smaps = fs.Read(smaps_path);
  ASSERT_TRUE(smaps.ok()) << smaps.errno_name;
  // A test binary has dozens of mappings, far more than one 4 KiB page of smaps; a complete read ends
  // with the last mapping's VmFlags line and its newline.
  EXPECT_GT(smaps.content.size(), 4096u);
  ASSERT_EQ(smaps.content.back(), '\n');
  size_t last_line = smaps.content.rfind('\n', smaps.content.size() - 2);
  ASSERT_NE(last_line, std::string::npos);
  EXPECT_EQ(smaps.content.compare(last_line + 1, 8, "VmFlags:"), 0);

  NodeRead meminfo = fs.Read("proc/meminfo");
  ASSERT_TRUE(meminfo.ok());
  EXPECT_EQ(meminfo.content.compare(0, 9, "MemTotal:"), 0);
}

TEST(DeviceRootFsTest, ListsProcWithPidFolders) {
  DeviceRootFs fs("/");
  DirList proc = fs.List("proc");
  ASSERT_TRUE(proc.ok()) << proc.errno_name;
  std::string me = std::to_string(getpid());
  bool found = false;
  for (size_t i = 0; i < proc.entries.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(proc.entries[i - 1].name, proc.entries[i].name);  // sorted
    }
    if (proc.entries[i].name == me) found = proc.entries[i].is_directory;
    EXPECT_NE(proc.entries[i].name, ".");
    EXPECT_NE(proc.entries[i].name, "..");
  }
  EXPECT_TRUE(found);
  EXPECT_TRUE(fs.IsDirectory("proc/" + me));
}

TEST(DeviceRootFsTest, FolderRootKeepsPathsInside) {
  TempDir dir;
  dir.Write("root/proc/meminfo", "MemTotal: 1 kB\n");
  std::string secret = dir.Write("secret", "TOPSECRET");
  std::string root = dir.path() + "/root";
  fs::create_symlink(secret, root + "/proc/escape");
  fs::create_symlink("../../secret", root + "/proc/escape2");
  DeviceRootFs fs(root);
  EXPECT_EQ(fs.Read("proc/meminfo").content, "MemTotal: 1 kB\n");
  EXPECT_EQ(fs.Read("proc/escape").errno_name, "EINVAL");
  EXPECT_EQ(fs.Read("proc/escape2").errno_name, "EINVAL");
  EXPECT_EQ(fs.Read("../secret").errno_name, "EINVAL");
  EXPECT_EQ(fs.Read(secret).errno_name, "EINVAL");  // absolute
  EXPECT_EQ(fs.Read("proc/nope").errno_name, "ENOENT");
  EXPECT_EQ(fs.Read("proc").errno_name, "EISDIR");
  EXPECT_EQ(fs.List("proc/meminfo").errno_name, "ENOTDIR");
  // A live root has no `.err` convention: a file by that name is just a file.
  dir.Write("root/proc/x.err", "EACCES");
  EXPECT_EQ(fs.Read("proc/x").errno_name, "ENOENT");
}

// A folder standing for a running system (--live-root): the only way a folder's programs run.
DeviceRootFs::Options LiveFolder() {
  DeviceRootFs::Options o;
  o.live_folder = true;
  return o;
}

TEST(DeviceRootFsTest, WriteThenReadWritesOnceAtStartThenReadsFromStart) {
  TempDir dir;
  dir.Write("proc/dma_heap/rss_pid", std::string(16, 'X'));
  DeviceRootFs fs(dir.path(), LiveFolder());
  // A regular file shows what happened: the 6-byte request overwrote the first 6 of 16 bytes, and the read
  // started again at offset 0 (without the lseek it would return only the 10 bytes after the request).
  NodeRead r = fs.WriteThenRead("proc/dma_heap/rss_pid", "pid:7\n", "7");
  ASSERT_TRUE(r.ok()) << r.errno_name;
  EXPECT_EQ(r.content, "pid:7\n" + std::string(10, 'X'));
  // Never created: the node must already exist.
  EXPECT_EQ(fs.WriteThenRead("proc/dma_heap/missing", "pid:7\n", "7").errno_name, "ENOENT");
  EXPECT_FALSE(fs::exists(dir.path() + "/proc/dma_heap/missing"));
  EXPECT_EQ(fs.WriteThenRead("/proc/dma_heap/rss_pid", "pid:7\n", "7").errno_name, "EINVAL");
}

DeviceRootFs::Options FastOptions(const std::string& scratch) {
  DeviceRootFs::Options o = LiveFolder();
  o.command_timeout_ms = 2000;
  o.scratch_dir = scratch;
  return o;
}

TEST(DeviceRootFsTest, DataFolderRunsNothingAndWritesNothing) {
  // A folder laid out like a device root, holding programs that would leave a mark: unless it is said to
  // be a live system, it is only read.
  TempDir dir;
  TempDir scratch;
  std::string marker = scratch.path() + "/ran";
  dir.Write("proc/meminfo", "MemTotal: 1 kB\n");
  dir.Write("proc/dma_heap/rss_pid", "untouched");
  for (const char* program : {"system/bin/dumpsys", "system/bin/am"}) {
    dir.Write(program, "#!/bin/sh\necho ran >> " + marker + "\n", true);
  }
  DeviceRootFs::Options o = FastOptions(scratch.path());
  o.live_folder = false;
  DeviceRootFs fs(dir.path(), o);
  EXPECT_EQ(fs.Read("proc/meminfo").content, "MemTotal: 1 kB\n");
  EXPECT_EQ(fs.RunCommand("dumpsys_meminfo", "").errno_name, "EPERM");
  EXPECT_EQ(fs.RunCommand("native_heap", "1").errno_name, "EPERM");
  EXPECT_EQ(fs.WriteThenRead("proc/dma_heap/rss_pid", "pid:1\n", "1").errno_name, "EPERM");
  EXPECT_FALSE(fs::exists(marker));
  std::ifstream node(dir.path() + "/proc/dma_heap/rss_pid");
  std::string content((std::istreambuf_iterator<char>(node)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "untouched");
  EXPECT_TRUE(fs::is_empty(scratch.path()));  // no scratch file for am either
}

TEST(DeviceRootFsTest, CommandsAreEnoentWhereTheRootLacksThem) {
  TempDir dir;
  dir.Write("proc/meminfo", "x");
  DeviceRootFs fs(dir.path(), FastOptions(dir.path()));
  EXPECT_EQ(fs.RunCommand("dumpsys_meminfo", "").errno_name, "ENOENT");
  EXPECT_EQ(fs.RunCommand("native_heap", "1").errno_name, "ENOENT");
}

TEST(DeviceRootFsTest, OnlyTheThreeCommandsWithValidArgs) {
  TempDir dir;
  dir.Write("system/bin/dumpsys", "#!/bin/sh\necho \"$@\"\n", true);
  dir.Write("system/bin/am", "#!/bin/sh\nexit 0\n", true);
  DeviceRootFs fs(dir.path(), FastOptions(dir.path()));
  EXPECT_EQ(fs.RunCommand("sh", "").errno_name, "EINVAL");
  EXPECT_EQ(fs.RunCommand("dumpsys", "").errno_name, "EINVAL");
  EXPECT_EQ(fs.RunCommand("dumpsys_meminfo", "-a").errno_name, "EINVAL");
  EXPECT_EQ(fs.RunCommand("dumpsys_gpu_gpumem", "--all").errno_name, "EINVAL");
  EXPECT_EQ(fs.RunCommand("native_heap", "").errno_name, "EINVAL");
  EXPECT_EQ(fs.RunCommand("native_heap", "12a").errno_name, "EINVAL");
  EXPECT_EQ(fs.RunCommand("native_heap", "1;reboot").errno_name, "EINVAL");
  EXPECT_EQ(fs.RunCommand("native_heap", "-1").errno_name, "EINVAL");
}

TEST(DeviceRootFsTest, DumpsysMeminfoRunsWithoutShellAndCapturesStdout) {
  TempDir dir;
  // Prints its arguments one per line, and noise on stderr that must not end up in the node.
  dir.Write("system/bin/dumpsys", "#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done\necho noise >&2\n", true);
  DeviceRootFs fs(dir.path(), FastOptions(dir.path()));
  NodeRead r = fs.RunCommand("dumpsys_meminfo", "");
  ASSERT_TRUE(r.ok()) << r.errno_name;
  EXPECT_EQ(r.content, "[meminfo]\n");
}

TEST(DeviceRootFsTest, DumpsysGpuGpumemRunsWithItsTwoArguments) {
  TempDir dir;
  dir.Write("system/bin/dumpsys", "#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done\n", true);
  DeviceRootFs fs(dir.path(), FastOptions(dir.path()));
  NodeRead r = fs.RunCommand("dumpsys_gpu_gpumem", "");
  ASSERT_TRUE(r.ok()) << r.errno_name;
  EXPECT_EQ(r.content, "[gpu]\n[--gpumem]\n");
}

TEST(DeviceRootFsTest, NativeHeapReadsTheFileAmWroteAndRemovesIt) {
  TempDir dir;
  TempDir scratch;
  // Like `am dumpheap -n <pid> <file>`: the dump goes to the file named by the last argument.
  dir.Write("system/bin/am",
            "#!/bin/sh\n[ \"$1\" = dumpheap ] && [ \"$2\" = -n ] || exit 9\n"
            "printf 'Android Native Heap Dump v1.2\\n\\nTotal memory: 42\\npid %s\\n' \"$3\" > \"$4\"\n"
            "echo 'Waiting for dump to finish...'\n",
            true);
  DeviceRootFs fs(dir.path(), FastOptions(scratch.path()));
  NodeRead r = fs.RunCommand("native_heap", "1234");
  ASSERT_TRUE(r.ok()) << r.errno_name;
  EXPECT_EQ(r.content, "Android Native Heap Dump v1.2\n\nTotal memory: 42\npid 1234\n");
  EXPECT_TRUE(fs::is_empty(scratch.path()));  // the scratch file is gone
}

TEST(DeviceRootFsTest, NativeHeapWithNoDumpIsEnodata) {
  TempDir dir;
  TempDir scratch;
  dir.Write("system/bin/am", "#!/bin/sh\nexit 0\n", true);
  DeviceRootFs fs(dir.path(), FastOptions(scratch.path()));
  EXPECT_EQ(fs.RunCommand("native_heap", "1").errno_name, "ENODATA");
  EXPECT_TRUE(fs::is_empty(scratch.path()));
}

TEST(DeviceRootFsTest, FailingCommandIsEio) {
  TempDir dir;
  dir.Write("system/bin/dumpsys", "#!/bin/sh\necho partial\nexit 3\n", true);
  DeviceRootFs fs(dir.path(), FastOptions(dir.path()));
  EXPECT_EQ(fs.RunCommand("dumpsys_meminfo", "").errno_name, "EIO");
}

TEST(DeviceRootFsTest, HungCommandIsKilledAtTheTimeout) {
  TempDir dir;
  // The background sleep keeps stdout open after the script exits: only the timeout ends the wait, and
  // killing the process group ends the sleep too.
  dir.Write("system/bin/dumpsys", "#!/bin/sh\nsleep 30 &\nsleep 30\n", true);
  DeviceRootFs::Options o = FastOptions(dir.path());
  o.command_timeout_ms = 300;
  DeviceRootFs fs(dir.path(), o);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(fs.RunCommand("dumpsys_meminfo", "").errno_name, "ETIMEDOUT");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(DeviceRootFsTest, GetpropRunsWithoutArguments) {
  TempDir dir;
  dir.Write("system/bin/getprop", "#!/bin/sh\necho \"[args]: [$#]\"\necho '[ro.product.model]: [Pixel 7]'\n", true);
  DeviceRootFs fs(dir.path(), FastOptions(dir.path()));
  NodeRead r = fs.RunCommand("getprop", "");
  ASSERT_TRUE(r.ok()) << r.errno_name;
  EXPECT_EQ(r.content, "[args]: [0]\n[ro.product.model]: [Pixel 7]\n");
  EXPECT_EQ(fs.RunCommand("getprop", "ro.product.model").errno_name, "EINVAL");
}

// A heap dump has its own, shorter budget: `am` hung past it is killed with whatever it started.
TEST(DeviceRootFsTest, HungHeapDumpIsKilledAtItsOwnTimeout) {
  TempDir dir;
  TempDir scratch;
  const std::string pid_file = dir.path() + "/sleeper.pid";
  dir.Write("system/bin/am", "#!/bin/sh\nsleep 600 &\necho $! > '" + pid_file + "'\nwait\n", true);
  DeviceRootFs::Options o = FastOptions(scratch.path());
  o.heap_dump_timeout_ms = 300;
  o.command_timeout_ms = 60000;
  DeviceRootFs fs(dir.path(), o);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(fs.RunCommand("native_heap", "1234").errno_name, "ETIMEDOUT");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_TRUE(fs::is_empty(scratch.path()));  // the scratch file is gone
  // The sleep `am` started was in its process group: killed too (ESRCH once reaped by init, or a zombie).
  std::ifstream in(pid_file);
  pid_t sleeper = 0;
  ASSERT_TRUE(in >> sleeper);
  // SIGKILL is delivered asynchronously: wait (bounded) until it is dead, gone or a zombie.
  auto running = [&] {
    std::ifstream stat("/proc/" + std::to_string(sleeper) + "/stat");
    std::string line;
    return std::getline(stat, line) && line.find(") Z") == std::string::npos && line.find(") X") == std::string::npos;
  };
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (running() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  EXPECT_FALSE(running()) << "the sleep am started outlived the timeout";
}

TEST(DeviceRootFsTest, OversizedOutputIsEfbig) {
  TempDir dir;
  dir.Write("system/bin/dumpsys", "#!/bin/sh\nhead -c 100000 /dev/zero\n", true);
  DeviceRootFs::Options o = FastOptions(dir.path());
  o.max_command_output_bytes = 1000;
  DeviceRootFs fs(dir.path(), o);
  EXPECT_EQ(fs.RunCommand("dumpsys_meminfo", "").errno_name, "EFBIG");
}

TEST(DeviceRootFsTest, CommandSymlinkedOutOfTheRootIsNotRun) {
  TempDir dir;
  std::string outside = dir.Write("outside/dumpsys", "#!/bin/sh\necho ran\n", true);
  fs::create_directories(dir.path() + "/root/system/bin");
  fs::create_symlink(outside, dir.path() + "/root/system/bin/dumpsys");
  DeviceRootFs fs(dir.path() + "/root", FastOptions(dir.path()));
  EXPECT_EQ(fs.RunCommand("dumpsys_meminfo", "").errno_name, "ENOENT");
}

}  // namespace
}  // namespace memfleet::agent
