// Rules of docs/accounting.md on small hand-built captures: each test states the rule, builds the nodes it
// needs, and checks the figure by arithmetic done in the comment.
#include "accounting/account.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "tests/support/load_tree.h"

namespace memfleet::accounting {
namespace {

struct Mapping {
  std::string header;  // "start-end perms offset dev inode name"
  int pss_kb = 0;
  int swap_pss_kb = 0;
};

std::string Smaps(const std::vector<Mapping>& maps) {
  std::string out;
  for (const Mapping& m : maps) {
    out += m.header + "\n";
    out += "Size:                  4 kB\nRss:      " + std::to_string(m.pss_kb) + " kB\n";
    out += "Pss:      " + std::to_string(m.pss_kb) + " kB\nPss_Dirty:      1 kB\n";
    out += "Swap:     " + std::to_string(m.swap_pss_kb) + " kB\nSwapPss:  " + std::to_string(m.swap_pss_kb) + " kB\n";
    out += "VmFlags: rd wr mr mw me ac\n";
  }
  return out;
}

constexpr char kMeminfo[] =
    "MemTotal:        7000000 kB\nMemFree:          100000 kB\nBuffers:            1000 kB\n"
    "Cached:           200000 kB\nSwapCached:            0 kB\nMapped:            50000 kB\n"
    "Shmem:              1000 kB\nKReclaimable:      30000 kB\nSReclaimable:      20000 kB\n"
    "SUnreclaim:        40000 kB\nKernelStack:        9000 kB\nPageTables:        30000 kB\n"
    "VmallocUsed:       60000 kB\nSwapTotal:        100000 kB\nSwapFree:          50000 kB\n";

// A device with meminfo, a plain-text kernel config (VMAP stacks) and two ordinary processes.
Capture BaseCapture(
    const std::string& header_json =
        R"({"format":1,"captured_at":"2026-11-30T08:00:00Z","device_id":"t","page_size":4096,"ddr_size_kb":8388608})") {
  Capture c;
  c.AddFile("capture.json", header_json);
  c.AddFile("proc/meminfo", kMeminfo);
  c.AddFile("proc/config.gz", "CONFIG_VMAP_STACK=y\n");
  for (int pid : {100, 200}) {
    std::string dir = "proc/" + std::to_string(pid);
    c.AddFile(dir + "/cmdline", std::string("app") + std::to_string(pid) + std::string("\0--flag\0", 8));
    c.AddFile(dir + "/oom_score_adj", "0\n");
    c.AddFile(dir + "/smaps", Smaps({{"12c00000-12c01000 rw-p 00000000 00:00 0  [anon:libc_malloc]", 1000, 10}}));
  }
  return c;
}

// A warning containing `part` (the messages carry numbers the tests need not repeat whole).
bool HasWarningWith(const Report& r, const std::string& part) {
  for (const std::string& w : r.warnings) {
    if (w.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(PlatformTest, FirstMatchWins) {
  Capture c = BaseCapture();
  EXPECT_EQ(Account(c).platform, Platform::kGeneric);
  c.AddFile("proc/xgpu/gpu_memory", "mali0  10  0\n");
  EXPECT_EQ(Account(c).platform, Platform::kXring);
  c.AddError("proc/mtk_mali/gpu_memory", "ENOENT");  // an ENOENT node still decides the platform
  EXPECT_EQ(Account(c).platform, Platform::kMtk);
  c.AddDirectory("sys/class/kgsl/kgsl");
  EXPECT_EQ(Account(c).platform, Platform::kQcom);
}

TEST(PlatformTest, MaliDebugfsNodeIsMaliUnlessAVendorNodeIsThere) {
  Capture c = BaseCapture();
  c.AddFile("sys/kernel/debug/mali0/gpu_memory", "mali0 0\n");
  EXPECT_EQ(Account(c).platform, Platform::kMali);
  c.AddFile("proc/xgpu/gpu_memory", "mali0  10  0\n");  // XRing's own node comes first
  EXPECT_EQ(Account(c).platform, Platform::kXring);
}

TEST(ProcessTest, KernelThreadsAndExitedProcessesAreNotProcesses) {
  Capture c = BaseCapture();
  c.AddFile("proc/2/smaps", "");  // kernel thread: empty smaps
  c.AddFile("proc/2/cmdline", "");
  c.AddFile("proc/3/cmdline", "gone");  // exited: no smaps at all
  c.AddFile("proc/4/smaps_rollup", "00400000-00401000 ---p 00000000 00:00 0  [rollup]\nRss: 5 kB\n");  // no Pss:
  Report r = Account(c);
  EXPECT_EQ(r.processes.size(), 2u);
  EXPECT_EQ(r.processes.count(2), 0u);
  EXPECT_EQ(r.processes.count(3), 0u);
  EXPECT_EQ(r.processes.count(4), 0u);
}

// Processes that exit while a live root is read (their smaps ESRCH or ENOENT) are left out, and said in
// one counted warning rather than a line each (a host's capture had 63 such lines).
TEST(ProcessTest, ProcessesThatExitedMidCaptureMakeOneCountedWarning) {
  Capture c = BaseCapture();
  for (int pid : {301, 302, 303}) {
    c.AddFile("proc/" + std::to_string(pid) + "/cmdline", "short-lived");
    c.AddError("proc/" + std::to_string(pid) + "/smaps", pid == 302 ? "ENOENT" : "ESRCH");
  }
  Report r = Account(c);
  EXPECT_EQ(r.processes.size(), 2u);
  size_t about_exits = 0;
  for (const std::string& w : r.warnings) {
    if (w.find("exited") != std::string::npos) {
      ++about_exits;
      EXPECT_EQ(w,
                "3 processes exited during the capture (their smaps unreadable, ENOENT or ESRCH) and are left out: "
                "proc/301, proc/302, proc/303");
    }
  }
  EXPECT_EQ(about_exits, 1u);
}

TEST(ProcessTest, NameIsTheFirstCmdlineFieldElseStatusName) {
  Capture c = BaseCapture();
  c.AddFile("proc/100/cmdline", std::string("/system/bin/surfaceflinger\0arg\0", 31));
  c.AddFile("proc/200/cmdline", "");
  c.AddFile("proc/200/status", "Name:\tkworker-ish\nState:\tS (sleeping)\n");
  Report r = Account(c);
  EXPECT_EQ(r.processes.at(100).name, "/system/bin/surfaceflinger");
  EXPECT_EQ(r.processes.at(200).name, "kworker-ish");
}

TEST(ProcessTest, FiguresOfAPlainProcess) {
  Report r = Account(BaseCapture());
  const ProcessReport& p = r.processes.at(100);
  EXPECT_EQ(p.name, "app100");
  EXPECT_EQ(p.pss_kb, 1000);
  EXPECT_EQ(p.swap_pss_kb, 10);
  EXPECT_EQ(p.gl_kb, 0);
  EXPECT_EQ(p.dma_kb, 0);
  EXPECT_EQ(p.native_graphics_kb, 0);
  EXPECT_EQ(p.native_graphics_source, "none");
  EXPECT_EQ(p.non_graphics_kb, 1010);
  EXPECT_EQ(p.total_kb, 1010);
  EXPECT_FALSE(p.cached);
}

TEST(ProcessTest, UnreadableOomScoreAdjIsNullNotCachedAndWarned) {
  Capture c = BaseCapture();
  c.AddFile("proc/100/oom_score_adj", "950\n");
  c.AddError("proc/200/oom_score_adj", "EACCES");
  Report r = Account(c);
  EXPECT_TRUE(r.processes.at(100).cached);
  EXPECT_FALSE(r.processes.at(200).oom_score_adj.has_value());
  EXPECT_FALSE(r.processes.at(200).cached);
  // processes_kb: only the non-cached pid 200 (1010).
  EXPECT_EQ(r.device.processes_kb, 1010);
  bool warned = false;
  for (const std::string& w : r.warnings) warned |= w.find("proc/200/oom_score_adj") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(QcomTest, GlIsMappedPlusUnmappedAndGfxdevIsTheKgslMappings) {
  Capture c = BaseCapture();
  c.AddFile("proc/100/smaps", Smaps({{"12c00000-12c01000 rw-p 00000000 00:00 0  [anon:libc_malloc]", 1000, 0},
                                     {"15472000-15cab000 rw-s 00000000 00:12 1094   /dev/kgsl-3d0", 300, 0}}));
  c.AddFile("sys/class/kgsl/kgsl/proc/100/gpumem_mapped", "307200\n");     // 300 KiB
  c.AddFile("sys/class/kgsl/kgsl/proc/100/gpumem_unmapped", "1048577\n");  // 1024 KiB + 1 byte
  c.AddFile("sys/class/kgsl/kgsl/proc/100/imported_mem", "2048\n");
  Report r = Account(c);
  ASSERT_EQ(r.platform, Platform::kQcom);
  const ProcessReport& p = r.processes.at(100);
  EXPECT_EQ(p.gfxdev_kb, 300);
  EXPECT_EQ(p.gl_kb, 1324);            // floor((307200 + 1048577) / 1024)
  EXPECT_EQ(p.non_graphics_kb, 1000);  // 1300 pss - 300 gfx dev
  EXPECT_EQ(p.total_kb, 1000 + 1324);
  EXPECT_EQ(p.gl_mtrack_kb, 1024);          // dumpsys GL mtrack = gpumem_unmapped
  EXPECT_EQ(p.egl_mtrack_kb, 2);            // EGL mtrack = imported_mem
  EXPECT_EQ(r.processes.at(200).gl_kb, 0);  // no KGSL directory: 0
}

TEST(QcomTest, EioOnUnmappedMakesOnlyThatProcessNull) {
  Capture c = BaseCapture();
  c.AddFile("sys/class/kgsl/kgsl/proc/100/gpumem_mapped", "4096\n");
  c.AddError("sys/class/kgsl/kgsl/proc/100/gpumem_unmapped", "EIO");
  Report r = Account(c);
  EXPECT_FALSE(r.processes.at(100).gl_kb.has_value());
  EXPECT_FALSE(r.processes.at(100).total_kb.has_value());
  EXPECT_EQ(r.processes.at(200).total_kb, 1010);
  EXPECT_EQ(r.device.processes_kb, 1010);  // computed over the known ones
  bool counted = false;
  for (const std::string& w : r.warnings) {
    counted |= w == "1 processes with unknown total_kb left out of processes_kb";
  }
  EXPECT_TRUE(counted);
  EXPECT_TRUE(r.device.total_kb.has_value());
}

TEST(QcomTest, RollupOnlyTakesGfxdevFromGpumemMapped) {
  Capture c = BaseCapture();
  c.AddFile("proc/100/smaps", "");
  c.AddFile("proc/100/smaps_rollup",
            "00400000-7fff0000 ---p 00000000 00:00 0   [rollup]\nRss: 900 kB\nPss:  800 kB\nSwapPss: 5 kB\n");
  c.AddFile("sys/class/kgsl/kgsl/proc/100/gpumem_mapped", "205824\n");  // 201 KiB
  c.AddFile("sys/class/kgsl/kgsl/proc/100/gpumem_unmapped", "0\n");
  c.AddFile("sys/class/kgsl/kgsl/proc/100/imported_mem", "0\n");
  Report r = Account(c);
  const ProcessReport& p = r.processes.at(100);
  EXPECT_EQ(p.pss_kb, 800);
  EXPECT_EQ(p.swap_pss_kb, 5);
  EXPECT_EQ(p.gfxdev_kb, 201);
  EXPECT_EQ(p.non_graphics_kb, 800 + 5 - 201);
  EXPECT_EQ(r.sources.at("processes.100.pss_kb"), "proc/100/smaps_rollup");
}

// A KGSL root the agent could not list: the driver is there (platform qcom), but no process's folder
// was seen, so every gl_kb is unknown rather than the 0 of a process without a KGSL folder.
TEST(QcomTest, AnUnlistableKgslRootMakesEveryGlNullNotZero) {
  Capture c = BaseCapture();
  c.AddError("sys/class/kgsl/kgsl", "EACCES");
  Report r = Account(c);
  ASSERT_EQ(r.platform, Platform::kQcom);
  for (const auto& [pid, p] : r.processes) {
    EXPECT_FALSE(p.gl_kb.has_value()) << pid;
    EXPECT_EQ(p.pss_kb, 1000) << pid;  // the rest is still computed
  }
  EXPECT_FALSE(r.device.processes_kb.has_value());
  EXPECT_TRUE(HasWarningWith(r, "sys/class/kgsl/kgsl: unreadable (EACCES): gl_kb unknown for every process"));
}

TEST(MtkTest, ContextsOfAProcessAreSummedInPages) {
  Capture c = BaseCapture(
      R"({"format":1,"captured_at":"2026-11-30T08:00:00Z","device_id":"t","page_size":16384,"ddr_size_kb":8388608})");
  c.AddFile("proc/mtk_mali/gpu_memory",
            "mali0                 500\n  kctx-0x00000000e2b1c4a5         10        100\n"
            "  kctx-0x000000003c9d01f7          5        100\n  kctx-0x00000000a81f66d2          7        999\n");
  c.AddFile("proc/dma_heap/rss_pid@100",
            "PID     PSS(KB)   RSS(KB)\n100     64        128\n-----EGL memtrack data end\n"
            "--sum: userspace_pss:64 KB rss:128 KB\n--sum: kernel rss: 4 KB\n\npid table:\n\tpid:100  name:app\n\n");
  Report r = Account(c);
  ASSERT_EQ(r.platform, Platform::kMtk);
  EXPECT_EQ(r.page_size, 16384u);
  EXPECT_EQ(r.processes.at(100).gl_kb, 15 * 16);  // (10 + 5) pages x 16 KiB: never 4 KiB pages
  EXPECT_EQ(r.processes.at(200).gl_kb, 0);
  EXPECT_EQ(r.processes.at(100).egl_mtrack_kb, 64);
}

TEST(MtkTest, InvalidNodeMakesEveryGlAndTheDeviceTotalsNull) {
  Capture c = BaseCapture();
  c.AddFile("proc/mtk_mali/gpu_memory", "<INVALID>");
  Report r = Account(c);
  for (const auto& [pid, p] : r.processes) {
    EXPECT_FALSE(p.gl_kb.has_value()) << pid;
    EXPECT_FALSE(p.total_kb.has_value()) << pid;
    EXPECT_EQ(p.pss_kb, 1000) << pid;  // the rest is still computed
  }
  EXPECT_FALSE(r.device.processes_kb.has_value());
  EXPECT_FALSE(r.device.total_kb.has_value());
  EXPECT_TRUE(r.device.kernel_kb.has_value());
}

TEST(MtkTest, DeniedNodeIsLikeInvalid) {
  Capture c = BaseCapture();
  c.AddError("proc/mtk_mali/gpu_memory", "EACCES");
  Report r = Account(c);
  EXPECT_EQ(r.platform, Platform::kMtk);
  EXPECT_FALSE(r.processes.at(100).gl_kb.has_value());
  EXPECT_FALSE(r.device.processes_kb.has_value());
}

TEST(XringTest, V1AndV2LayoutsGiveTheSameGl) {
  Capture v1 = BaseCapture();
  v1.AddFile("proc/xgpu/gpu_memory",
             "mali0                 181734\n100 kctx-0x0000000000000000      61204\n"
             "100 kctx-0x0000000000000000       1532\n200 kctx-0x0000000000000000     118998\n");
  Capture v2 = BaseCapture();
  v2.AddFile("proc/xgpu/gpu_memory",
             "mali0                 181734      210944\n100                   62736       30212       95874\n"
             "200                  118998        2048        4096\n");
  for (Capture* c : {&v1, &v2}) {
    Report r = Account(*c);
    EXPECT_EQ(r.platform, Platform::kXring);
    EXPECT_EQ(r.processes.at(100).gl_kb, (61204 + 1532) * 4);
    EXPECT_EQ(r.processes.at(200).gl_kb, 118998 * 4);
  }
}

TEST(DmaBufTest, SharedBuffersAreSplitAndOneProcessCountsABufferOnce) {
  Capture c = BaseCapture();
  // ino 7: 10000 bytes (sysfs), held by pid 100 through two fds and a mapping, and by pid 200 by fd.
  c.AddFile("sys/kernel/dmabuf/buffers/7/size", "10000\n");
  c.AddFile("sys/kernel/dmabuf/buffers/7/exporter_name", "system\n");
  std::string fd = "pos:\t0\nflags:\t02000002\nmnt_id:\t16\nino:\t7\nsize:\t10000\ncount:\t3\nexp_name:\tsystem\n";
  c.AddFile("proc/100/fdinfo/40", fd);
  c.AddFile("proc/100/fdinfo/41", fd);
  c.AddFile("proc/200/fdinfo/9", fd);
  c.AddFile("proc/100/fdinfo/3", "pos:\t0\nflags:\t02\nmnt_id:\t2\nino:\t8\n");  // not a dma-buf: no exp_name
  c.AddFile("proc/100/smaps", Smaps({{"12c00000-12c01000 rw-p 00000000 00:00 0  [anon:libc_malloc]", 1000, 10},
                                     {"7b2f400000-7b2f403000 rw-s 00000000 00:0d 7    /dmabuf:", 0, 0}}));
  // ino 9: no sysfs, no fdinfo size: the largest mapping of pid 200, 0x3000 = 12288 bytes.
  c.AddFile("proc/200/smaps", Smaps({{"12c00000-12c01000 rw-p 00000000 00:00 0  [anon:libc_malloc]", 1000, 10},
                                     {"7b00000000-7b00001000 rw-s 00000000 00:0d 9    /dmabuf:cam", 0, 0},
                                     {"7b10000000-7b10003000 rw-s 00000000 00:0d 9    /dmabuf:cam", 0, 0},
                                     {"7b20000000-7b20009000 rw-s 00000000 00:0d 11   /dmabufx", 0, 0},
                                     {"7b30000000-7b30001000 rw-s 00000000 00:0d 12   /data/dmabuf", 0, 0}}));
  Report r = Account(c);
  EXPECT_EQ(r.processes.at(100).dma_kb, 4);  // floor(5000 / 1024)
  // Any name starting with "/dmabuf" is a dma-buf (AOSP's FileIsDmaBuf): ino 11's 0x9000 bytes count,
  // "/data/dmabuf" is a file.
  EXPECT_EQ(r.processes.at(200).dma_kb, (5000 + 12288 + 0x9000) / 1024);
}

// An agent running as shell: another app's fdinfo folder (or, without smaps, its maps) is denied. What
// that app holds cannot be seen, so its dma_kb is null, not 0; a folder that is gone (the process exited)
// is not a denial, and maps are not needed when full smaps names the mappings.
TEST(DmaBufTest, DeniedFdinfoOrMapsMakesDmaNullNotZero) {
  Capture c = BaseCapture();
  c.AddError("proc/100/fdinfo", "EACCES");
  c.AddError("proc/200/fdinfo", "ENOENT");
  c.AddError("proc/200/maps", "EACCES");  // pid 200 has full smaps: its maps are not needed
  Report r = Account(c);
  EXPECT_FALSE(r.processes.at(100).dma_kb.has_value());
  EXPECT_FALSE(r.processes.at(100).dma_by_exporter_kb.has_value());
  EXPECT_FALSE(r.processes.at(100).total_kb.has_value());
  EXPECT_EQ(r.processes.at(100).pss_kb, 1000);  // the rest of the process is still computed
  EXPECT_EQ(r.sources.at("processes.100.dma_kb"), "unavailable: proc/100/fdinfo unreadable (EACCES)");
  EXPECT_EQ(r.processes.at(200).dma_kb, 0);
  EXPECT_TRUE(HasWarningWith(r, "proc/100/fdinfo unreadable (EACCES): the dma-bufs it holds cannot be seen"));
  EXPECT_EQ(std::count_if(r.warnings.begin(), r.warnings.end(),
                          [](const std::string& w) { return w.find("proc/200/") != std::string::npos; }),
            0);

  Capture rollup_only = BaseCapture();
  rollup_only.AddError("proc/100/smaps", "EACCES");
  rollup_only.AddFile("proc/100/smaps_rollup", "00400000-7ffc0000 ---p 00000000 00:00 0  [rollup]\nPss: 60 kB\n");
  rollup_only.AddError("proc/100/maps", "EACCES");
  Report q = Account(rollup_only);
  EXPECT_EQ(q.processes.at(100).pss_kb, 60);
  EXPECT_FALSE(q.processes.at(100).dma_kb.has_value());
  EXPECT_EQ(q.sources.at("processes.100.dma_kb"), "unavailable: proc/100/maps unreadable (EACCES)");
}

// dma_by_exporter_kb: the same shares as dma_kb, by the buffer's exporter (fdinfo exp_name:, else sysfs
// exporter_name, else "unknown"), each entry floored on its own.
TEST(DmaBufTest, ByExporterSplitsTheSameShares) {
  Capture c = BaseCapture();
  // ino 7: 10000 bytes, fds of 100 and 200 name "qcom,system": 5000 bytes each.
  c.AddFile("sys/kernel/dmabuf/buffers/7/size", "10000\n");
  std::string fd7 = "ino:\t7\nsize:\t10000\ncount:\t2\nexp_name:\tqcom,system\n";
  c.AddFile("proc/100/fdinfo/40", fd7);
  c.AddFile("proc/200/fdinfo/9", fd7);
  // ino 8: mapped by 100 only, 3000 bytes in sysfs, exporter from sysfs.
  c.AddFile("sys/kernel/dmabuf/buffers/8/size", "3000\n");
  c.AddFile("sys/kernel/dmabuf/buffers/8/exporter_name", "system\n");
  // ino 9: mapped by 100 only, no sysfs: its mapping's 0x1000 bytes, exporter unknown.
  c.AddFile("proc/100/smaps", Smaps({{"12c00000-12c01000 rw-p 00000000 00:00 0  [anon:libc_malloc]", 1000, 10},
                                     {"7b00000000-7b00001000 rw-s 00000000 00:0d 8    /dmabuf:", 0, 0},
                                     {"7b10000000-7b10001000 rw-s 00000000 00:0d 9    /dmabuf:", 0, 0}}));
  Report r = Account(c);
  const ProcessReport& p = r.processes.at(100);
  EXPECT_EQ(p.dma_kb, (5000 + 3000 + 4096) / 1024);  // 11
  ASSERT_TRUE(p.dma_by_exporter_kb.has_value());
  EXPECT_EQ(*p.dma_by_exporter_kb,
            (std::map<std::string, int64_t>{{"qcom,system", 5000 / 1024}, {"system", 3000 / 1024}, {"unknown", 4}}));
  // 4 + 2 + 4 = 10: each entry floored on its own, a kB less than dma_kb.
  ASSERT_TRUE(r.processes.at(200).dma_by_exporter_kb.has_value());
  EXPECT_EQ(*r.processes.at(200).dma_by_exporter_kb, (std::map<std::string, int64_t>{{"qcom,system", 4}}));
}

TEST(DmaBufTest, ByExporterIsEmptyWithoutBuffersAndNullWhenDmaIs) {
  Capture c = BaseCapture();
  c.AddFile("proc/100/smaps", Smaps({{"12c00000-12c01000 rw-p 00000000 00:00 0  [anon:libc_malloc]", 1000, 10},
                                     {"12d0c000-134f5000 rw-s 00000000 00:0a 11957  anon_inode:dmabuf", 0, 0}}));
  Report r = Account(c);
  EXPECT_FALSE(r.processes.at(100).dma_by_exporter_kb.has_value());
  ASSERT_TRUE(r.processes.at(200).dma_by_exporter_kb.has_value());
  EXPECT_TRUE(r.processes.at(200).dma_by_exporter_kb->empty());
}

TEST(DmaBufTest, MalformedSysfsSizeFallsBackToFdinfo) {
  Capture c = BaseCapture();
  c.AddFile("sys/kernel/dmabuf/buffers/7/size", "garbage\n");
  c.AddFile("proc/100/fdinfo/40", "ino:\t7\nsize:\t8192\ncount:\t1\nexp_name:\tsystem\n");
  Report r = Account(c);
  EXPECT_EQ(r.processes.at(100).dma_kb, 8);
  bool warned = false;
  for (const std::string& w : r.warnings) warned |= w.find("sys/kernel/dmabuf/buffers/7/size") != std::string::npos;
  EXPECT_TRUE(warned);
}

// AOSP's own dma-buf trees (libdmabufinfo DmaBufProcessStatsTest, EXPECTED.md 8d): pid 10's buffers and
// the sizes AOSP asserts, shared by one process, so dma_kb = floor(Σ size / 1024).
Capture AospDmaBufTree(const std::string& test) {
  std::string dir = testing::TestData("aosp/system/memory/libmeminfo/_reconstructed/dmabufinfo_test/" + test);
  Capture c = BaseCapture();
  testing::LoadTreeInto(c, dir + "/proc", "proc");
  testing::LoadTreeInto(c, dir + "/buffers", "sys/kernel/dmabuf/buffers");
  // The AOSP tree has no smaps: a rollup makes pid 10 a process of the report.
  c.AddFile("proc/10/smaps_rollup", "00400000-7fff0000 ---p 00000000 00:00 0   [rollup]\nPss:  1 kB\n");
  return c;
}

TEST(DmaBufTest, AospReadDmaBufInfoTree) {
  // ino 2 by fd (2048) + ino 4 by map (sysfs 1024); ino 1 and 3 are not dma-bufs.
  Report r = Account(AospDmaBufTree("DmaBufProcessStatsTest.TestReadDmaBufInfo"));
  EXPECT_EQ(r.processes.at(10).dma_kb, (2048 + 1024) / 1024);
}

TEST(DmaBufTest, AospReadDmaBufFdRefsTree) {
  // ino 2 held by two fds counts once (2048) + ino 3 (1024).
  Report r = Account(AospDmaBufTree("DmaBufProcessStatsTest.TestReadDmaBufFdRefs"));
  EXPECT_EQ(r.processes.at(10).dma_kb, 3);
}

TEST(DmaBufTest, AospReadDmaBufMapRefsTree) {
  // ino 2 mapped twice counts once (sysfs 1024) + ino 3 (sysfs 2048, Android 14+ size rule).
  Report r = Account(AospDmaBufTree("DmaBufProcessStatsTest.TestReadDmaBufMapRefs"));
  EXPECT_EQ(r.processes.at(10).dma_kb, 3);
}

TEST(DeviceTest, DdrEstimatedFromMemTotalAndGcma) {
  Capture c = BaseCapture(R"({"format":1,"captured_at":"2026-11-30T08:00:00Z","device_id":"t","android_sdk":"34"})");
  Report r = Account(c);
  EXPECT_TRUE(r.device.ddr_estimated);
  EXPECT_EQ(r.device.ddr_kb, 8LL * 1048576);  // 7000000 kB fits in 8 GiB, not in 6 GiB
  EXPECT_EQ(r.device.static_reserved_kb, 8LL * 1048576 - 7000000);
  EXPECT_EQ(r.page_size, 4096u);
}

// A capture with no DDR size and nothing Android in it is a Linux host's: MemTotal rounded up to a phone's
// DDR size would be a made-up static reserved figure, so it is null, and the device total with it.
TEST(DeviceTest, NoDdrSizeAndNoAndroidDeviceIsNullNotAnEstimate) {
  const std::string host_header =
      R"({"format":1,"captured_at":"2026-11-30T08:00:00Z","device_id":"t","model":"linux-host","kernel":"6.8.0"})";
  Report r = Account(BaseCapture(host_header));
  EXPECT_FALSE(r.device.ddr_kb.has_value());
  EXPECT_FALSE(r.device.ddr_estimated);
  EXPECT_FALSE(r.device.static_reserved_kb.has_value());
  EXPECT_FALSE(r.device.total_kb.has_value());
  EXPECT_TRUE(HasWarningWith(r, "ddr_kb: no ddr_size_kb in capture.json, and the capture shows no Android device"));
  EXPECT_EQ(r.sources.at("device.ddr_kb"), "unavailable: no ddr_size_kb in capture.json and not an Android device");
  // The figures that do not need the DDR size are all there.
  EXPECT_EQ(r.device.mem_total_kb, 7000000);
  EXPECT_EQ(r.device.kernel_kb, 131000);
  EXPECT_EQ(r.device.processes_kb, 2020);

  // Each sign of an Android device brings the estimate back: a build property in the header, getprop's
  // output, or system_server among the processes (a tree with no build facts, as the spec's generic one).
  Capture with_getprop = BaseCapture(host_header);
  with_getprop.AddFile("cmd/getprop", "[ro.build.version.sdk]: [34]\n");
  Capture with_system_server = BaseCapture(host_header);
  with_system_server.AddFile("proc/300/cmdline", std::string("system_server\0", 14));
  with_system_server.AddFile("proc/300/oom_score_adj", "-900\n");
  with_system_server.AddFile("proc/300/smaps",
                             Smaps({{"12c00000-12c01000 rw-p 00000000 00:00 0  [anon:libc_malloc]", 1000, 10}}));
  for (const Capture* android : {&with_getprop, &with_system_server}) {
    Report a = Account(*android);
    EXPECT_TRUE(a.device.ddr_estimated);
    EXPECT_EQ(a.device.static_reserved_kb, 8LL * 1048576 - 7000000);
  }
  Report fingerprint = Account(BaseCapture(
      R"({"format":1,"captured_at":"2026-11-30T08:00:00Z","device_id":"t","build_fingerprint":"google/panther/panther:14/UQ1A/1:user/release-keys"})"));
  EXPECT_EQ(fingerprint.device.static_reserved_kb, 8LL * 1048576 - 7000000);
}

TEST(DeviceTest, DdrAbove64GiBIsNull) {
  Capture c = BaseCapture(R"({"format":1,"captured_at":"2026-11-30T08:00:00Z","device_id":"t","android_sdk":"34"})");
  std::string big = kMeminfo;
  big.replace(big.find("7000000"), 7, "70000000");  // ~66.8 GiB
  c.AddFile("proc/meminfo", big);
  Report r = Account(c);
  EXPECT_FALSE(r.device.ddr_kb.has_value());
  EXPECT_FALSE(r.device.total_kb.has_value());
}

TEST(DeviceTest, DdrBelowMemTotalMakesStaticReservedNull) {
  Capture c = BaseCapture(R"({"format":1,"captured_at":"2026-11-30T08:00:00Z","device_id":"t","ddr_size_kb":4194304})");
  Report r = Account(c);
  EXPECT_FALSE(r.device.static_reserved_kb.has_value());
  EXPECT_FALSE(r.device.total_kb.has_value());
}

bool HasWarning(const Report& r, const std::string& want) {
  for (const std::string& w : r.warnings) {
    if (w == want) return true;
  }
  return false;
}

TEST(DeviceTest, ImplausibleDdrSizeIsNullWithAWarningAndTheRestComputed) {
  // 2^63 - 1 kB used to be taken as given (total_kb about 9.2e18); 2^63 did not fit and nulled the
  // figures without a word.
  for (const char* v : {"9223372036854775807", "9223372036854775808"}) {
    SCOPED_TRACE(v);
    Capture c = BaseCapture(
        std::string(
            R"({"format":1,"captured_at":"2026-11-30T08:00:00Z","device_id":"t","page_size":4096,"ddr_size_kb":)") +
        v + "}");
    Report r = Account(c);
    EXPECT_FALSE(r.device.ddr_kb.has_value());
    EXPECT_FALSE(r.device.ddr_estimated);  // the header gave a size; a guess would hide that it is wrong
    EXPECT_FALSE(r.device.static_reserved_kb.has_value());
    EXPECT_FALSE(r.device.total_kb.has_value());
    EXPECT_TRUE(HasWarning(r, std::string("capture.json: \"ddr_size_kb\" is ") + v +
                                  "; more than the 64 TiB (68719476736 kB) a device can have: ddr_kb null"));
    EXPECT_EQ(r.sources.at("device.ddr_kb"), "unavailable: capture.json ddr_size_kb implausible");
    EXPECT_EQ(r.device_id, "t");  // the rest of the header stands
    EXPECT_EQ(r.device.kernel_kb, 131000);
    EXPECT_EQ(r.device.processes_kb, 2020);
  }
}

TEST(HeaderTest, BadHeaderWarnsOnceNamingTheFileOnce) {
  Report r = Account(BaseCapture(R"({"format":2,"captured_at":"2026-11-30T08:00:00Z","device_id":"t"})"));
  EXPECT_TRUE(HasWarning(r, "capture.json: \"format\" is 2; only format 1 is known: page_size 4096 assumed"));
  for (const std::string& w : r.warnings) EXPECT_EQ(w.find("capture.json: capture.json"), std::string::npos) << w;
}

TEST(HeaderTest, DeeplyNestedHeaderIsAWarningAndTheRestIsComputed) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  Report r = Account(BaseCapture(R"({"format":)" + deep + R"(,"captured_at":"2026-11-30T08:00:00Z","device_id":"t"})"));
  EXPECT_TRUE(HasWarning(r, "capture.json: nested more than 64 levels deep (at byte 73): page_size 4096 assumed"));
  EXPECT_EQ(r.device.processes_kb, 2020);
  EXPECT_EQ(r.device.kernel_kb, 131000);
  EXPECT_EQ(r.processes.at(100).total_kb, 1010);
}

TEST(DeviceTest, KernelKbWithAndWithoutVmapStack) {
  Capture c = BaseCapture();
  // Shmem 1000 + SUnreclaim 40000 + VmallocUsed 60000 + PageTables 30000 (+ no SecPageTables) + CMA 0.
  EXPECT_EQ(Account(c).device.kernel_kb, 131000);
  c.AddFile("proc/config.gz", "# CONFIG_VMAP_STACK is not set\n");
  EXPECT_EQ(Account(c).device.kernel_kb, 131000 + 9000);  // + KernelStack
  c.AddError("proc/config.gz", "EACCES");                 // unreadable: assume VMAP (GKI default) and warn
  Report r = Account(c);
  EXPECT_EQ(r.device.kernel_kb, 131000);
  bool warned = false;
  for (const std::string& w : r.warnings) warned |= w.find("proc/config.gz") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(DeviceTest, MissingMeminfoLineMakesKernelNullButProcessesStay) {
  Capture c = BaseCapture();
  std::string m = kMeminfo;
  m.erase(m.find("SUnreclaim:"), std::string("SUnreclaim:        40000 kB\n").size());
  c.AddFile("proc/meminfo", m);
  Report r = Account(c);
  EXPECT_FALSE(r.device.kernel_kb.has_value());
  EXPECT_FALSE(r.device.total_kb.has_value());
  EXPECT_EQ(r.device.processes_kb, 2020);
}

TEST(DeviceTest, GarbageMeminfoLosesOnlyTheDeviceFigures) {
  Capture c = BaseCapture();
  c.AddFile("proc/meminfo", std::string("\x01\x02garbage\0\xff", 11));
  Report r = Account(c);
  EXPECT_FALSE(r.device.mem_total_kb.has_value());
  EXPECT_FALSE(r.device.total_kb.has_value());
  EXPECT_EQ(r.processes.at(100).total_kb, 1010);
  EXPECT_FALSE(r.warnings.empty());
}

TEST(CmaTest, GcmaAndKernelCmaFromSysfsAndDebugfs) {
  Capture c = BaseCapture();
  // linux,cma: sysfs counters (alloc - release = 100 pages); debugfs dir of the 5.x naming.
  c.AddFile("sys/kernel/mm/cma/linux,cma/alloc_pages_success", "300\n");
  c.AddFile("sys/kernel/mm/cma/linux,cma/release_pages_success", "200\n");
  c.AddFile("sys/kernel/mm/cma/linux,cma/gcma", "0\n");
  // gcma_heap: GCMA, no release counter (pre-6.9): held = debugfs used; size = debugfs count of the
  // truncated "cma-<name>" folder (15 characters).
  c.AddFile("sys/kernel/mm/cma/gcma_heap_region/alloc_pages_success", "999\n");
  c.AddFile("sys/kernel/mm/cma/gcma_heap_region/gcma", "1\n");
  c.AddFile("sys/kernel/debug/cma/cma-gcma_heap_r/count", "1024\n");
  c.AddFile("sys/kernel/debug/cma/cma-gcma_heap_r/used", "10\n");
  // A region seen only in debugfs counts by used.
  c.AddFile("sys/kernel/debug/cma/other/used", "5\n");
  Report r = Account(c);
  EXPECT_EQ(r.device.gcma_kb, 1024 * 4);
  EXPECT_EQ(r.device.kernel_cma_kb, (100 + 10 + 5) * 4);
  EXPECT_EQ(r.device.kernel_kb, 131000 + (100 + 10 + 5) * 4);
  // static reserved = DDR - MemTotal - GCMA.
  EXPECT_EQ(r.device.static_reserved_kb, 8388608 - 7000000 - 4096);
}

TEST(CmaTest, UnreadableGcmaFlagMakesGcmaNull) {
  Capture c = BaseCapture();
  c.AddFile("sys/kernel/mm/cma/a/alloc_pages_success", "1\n");
  c.AddFile("sys/kernel/mm/cma/a/release_pages_success", "1\n");
  c.AddError("sys/kernel/mm/cma/a/gcma", "EACCES");
  Report r = Account(c);
  EXPECT_FALSE(r.device.gcma_kb.has_value());
  EXPECT_EQ(r.device.kernel_cma_kb, 0);
  EXPECT_FALSE(r.device.total_kb.has_value());
}

TEST(CmaTest, RegionWithNoCountersMakesKernelCmaNull) {
  Capture c = BaseCapture();
  c.AddFile("sys/kernel/mm/cma/a/alloc_pages_fail", "0\n");
  Report r = Account(c);
  EXPECT_FALSE(r.device.kernel_cma_kb.has_value());
  EXPECT_FALSE(r.device.kernel_kb.has_value());
}

// An agent that could not list the CMA sysfs folder (denied, not absent) cannot say whether GCMA regions
// are there: gcma_kb null, not the 0 of a kernel without CMA sysfs.
TEST(CmaTest, DeniedSysfsFolderMakesGcmaNullNotZero) {
  Capture c = BaseCapture();
  c.AddError("sys/kernel/mm/cma", "EACCES");
  Report r = Account(c);
  EXPECT_FALSE(r.device.gcma_kb.has_value());
  EXPECT_FALSE(r.device.static_reserved_kb.has_value());
  EXPECT_FALSE(r.device.total_kb.has_value());
  EXPECT_EQ(r.device.kernel_cma_kb, 0);  // no CmaTotal in meminfo: the kernel has no CMA
  EXPECT_TRUE(HasWarningWith(r, "sys/kernel/mm/cma: unreadable (EACCES): gcma_kb null"));
  c.AddError("sys/kernel/mm/cma", "ENOENT");  // absent: no CMA sysfs, 0
  EXPECT_EQ(Account(c).device.gcma_kb, 0);
}

TEST(NativeGraphicsTest, FailedDumpIsZeroWithWarning) {
  Capture c = BaseCapture();
  c.AddError("cmd/native_heap@100", "ETIMEDOUT");
  Report r = Account(c);
  EXPECT_EQ(r.processes.at(100).native_graphics_kb, 0);
  EXPECT_EQ(r.processes.at(100).native_graphics_source, "none");
  bool warned = false;
  for (const std::string& w : r.warnings) warned |= w.find("cmd/native_heap@100") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(NativeGraphicsTest, GraphicsFramesCountAndAreTakenOutOfNonGraphics) {
  Capture c = BaseCapture();
  c.AddFile("cmd/native_heap@100",
            "Android Native Heap Dump v1.2\n\nTotal memory: 1\nAllocation records: 2\nBacktrace size: 16\n\n"
            "z 0  sz     1024  num   100  bt 1000 2000\n"  // frame 0x2000 in libGLESv2_adreno.so
            "z 1  sz     4096  num    10  bt 9000\n"       // libc only
            "MAPS\n"
            "1000-2000 r-xp 00000000 fd:05 1     /system/lib64/libc.so\n"
            "2000-3000 r-xp 00000000 fd:05 2     /vendor/lib64/egl/libGLESv2_adreno.so\n"
            "9000-a000 r-xp 00000000 fd:05 3     /system/lib64/libc++.so\n"
            "END\n");
  Report r = Account(c);
  const ProcessReport& p = r.processes.at(100);
  EXPECT_EQ(p.native_graphics_source, "heap_dump");
  EXPECT_EQ(p.native_graphics_kb, 100);  // 1024 x 100 bytes
  EXPECT_EQ(p.non_graphics_kb, 1000 + 10 - 100);
  EXPECT_EQ(p.graphics_dma_kb, 100);
  EXPECT_EQ(p.total_kb, 1010);
}

TEST(RobustnessTest, TruncatedSmapsMakesThatProcessUnknown) {
  Capture c = BaseCapture();
  c.AddFile("proc/100/smaps", "12c00000-12c01000 rw-p 00000000 00:00 0  [anon:libc_malloc]\nPss:   10");
  Report r = Account(c);
  ASSERT_EQ(r.processes.count(100), 1u);
  EXPECT_FALSE(r.processes.at(100).pss_kb.has_value());
  EXPECT_FALSE(r.processes.at(100).total_kb.has_value());
  EXPECT_EQ(r.device.processes_kb, 1010);
}

// ---- What real phones print (docs/accounting.md: Mali layouts, legacy kernels, hidden quantities) ----

TEST(MaliTest, RockchipContextsAreSummedPerPidAndDevMaliIsGfxDev) {
  Capture c = BaseCapture();
  c.AddFile("sys/kernel/debug/mali0/gpu_memory",
            "mali0                 330219\n  kctx               comm                 tgid       used_pages\n"
            "  kctx-0x00000000a248d410 surfaceflinger       100            13639\n"
            "  kctx-0x00000000639ecb82 GLThread 12          100            12296\n"
            "  kctx-0x00000000f4f9a6e8 RenderThread         999             1261\n");
  c.AddFile("proc/100/smaps", Smaps({{"12c00000-12c01000 rw-p 00000000 00:00 0  [anon:libc_malloc]", 1000, 10},
                                     {"7b00000000-7b00100000 rw-s 00000000 00:12 77  /dev/mali0", 40, 0}}));
  Report r = Account(c);
  ASSERT_EQ(r.platform, Platform::kMali);
  const ProcessReport& p = r.processes.at(100);
  EXPECT_EQ(p.gl_kb, (13639 + 12296) * 4);
  EXPECT_EQ(p.gfxdev_kb, 40);                      // taken out of non_graphics, gl_kb counts it
  EXPECT_EQ(p.non_graphics_kb, 1000 + 10);         // 1050 - 40
  EXPECT_EQ(p.gl_mtrack_kb, (13639 + 12296) * 4);  // Arm's memtrack HAL reads the same counters
  EXPECT_EQ(p.egl_mtrack_kb, 0);
  EXPECT_EQ(r.processes.at(200).gl_kb, 0);
  EXPECT_TRUE(r.device.processes_kb.has_value());
}

TEST(MaliTest, ArmStockLayoutWithoutPidMakesEveryGlAndTheTotalsNull) {
  Capture c = BaseCapture();
  c.AddFile("sys/kernel/debug/mali0/gpu_memory", "mali0   1000\n  kctx-0x00000000a248d410   600\n  kctx-0x1   400\n");
  Report r = Account(c);
  ASSERT_EQ(r.platform, Platform::kMali);
  for (const auto& [pid, p] : r.processes) {
    EXPECT_FALSE(p.gl_kb.has_value()) << pid;
    EXPECT_FALSE(p.total_kb.has_value()) << pid;
    EXPECT_EQ(p.pss_kb, 1000) << pid;
  }
  EXPECT_FALSE(r.device.processes_kb.has_value());  // never a plausible-looking undercount
  EXPECT_FALSE(r.device.total_kb.has_value());
  EXPECT_TRUE(HasWarningWith(r, "carries no pid"));
}

TEST(MaliTest, UnparsableNodeNamesItself) {
  Capture c = BaseCapture();
  c.AddFile("sys/kernel/debug/mali0/gpu_memory", "mali0 10\nkctx-0x1 x 100\n");
  Report r = Account(c);
  EXPECT_FALSE(r.processes.at(100).gl_kb.has_value());
  EXPECT_TRUE(HasWarningWith(r, "sys/kernel/debug/mali0/gpu_memory: mali0/gpu_memory line 2"));
}

TEST(GpuMemTotalTest, AndroidsCounterIsReportedBesideGlAndNeverInATotal) {
  Capture c = BaseCapture();
  c.AddFile("cmd/dumpsys_gpu_gpumem", "Memory snapshot for GPU 0:\nGlobal total: 10485760\nProc 100 total: 2049000\n");
  Report r = Account(c);
  EXPECT_EQ(r.device.gpu_mem_global_kb, 10240);
  EXPECT_EQ(r.processes.at(100).gpu_mem_total_kb, 2000);  // floor(2049000 / 1024)
  EXPECT_EQ(r.processes.at(100).total_kb, 1010);          // unchanged
  EXPECT_FALSE(r.processes.at(200).gpu_mem_total_kb.has_value());
  EXPECT_TRUE(HasWarningWith(r, "1 processes have no Proc line"));
}

TEST(GpuMemTotalTest, AbsentNodeIsNullWithoutWarningAndNotAvailableIsNull) {
  Report absent = Account(BaseCapture());
  EXPECT_FALSE(absent.device.gpu_mem_global_kb.has_value());
  EXPECT_FALSE(absent.processes.at(100).gpu_mem_total_kb.has_value());
  EXPECT_FALSE(HasWarningWith(absent, "dumpsys_gpu_gpumem"));
  Capture c = BaseCapture();
  c.AddFile("cmd/dumpsys_gpu_gpumem", "Memory snapshot for GPU 0:\nGlobal total: N/A\nProc 100 total: 4096\n");
  Report na = Account(c);
  EXPECT_FALSE(na.device.gpu_mem_global_kb.has_value());
  EXPECT_EQ(na.processes.at(100).gpu_mem_total_kb, 4);
}

// heaps and app_summary need the mapping names of full smaps: null, with one counted warning, for a
// process captured with smaps_rollup only; dma_by_exporter_kb follows dma_kb (fdinfo and maps still
// name the buffers).
TEST(HeapsTest, NullWithSmapsRollupOnly) {
  Capture c = BaseCapture();
  c.AddFile("proc/200/smaps", "");
  c.AddFile("proc/200/smaps_rollup", "00400000-00401000 ---p 00000000 00:00 0  [rollup]\nPss: 700 kB\n");
  Report r = Account(c);
  EXPECT_FALSE(r.processes.at(200).heaps.has_value());
  EXPECT_FALSE(r.processes.at(200).app_summary.has_value());
  ASSERT_TRUE(r.processes.at(200).dma_by_exporter_kb.has_value());
  EXPECT_EQ(r.sources.at("processes.200.heaps"), "unavailable: only smaps_rollup (no mapping names)");
  EXPECT_TRUE(HasWarningWith(r, "1 of 2 processes have only smaps_rollup: their heaps and app_summary are null"));
  ASSERT_TRUE(r.processes.at(100).heaps.has_value());
  EXPECT_EQ(r.processes.at(100).heaps->at("native"), (report::HeapFigures{1000, 10, 0, 0}));
  ASSERT_TRUE(r.processes.at(100).app_summary.has_value());
  EXPECT_EQ(r.processes.at(100).app_summary->total_pss_kb, 1010);
}

TEST(LegacyKernelTest, AnonInodeDmabufMappingMakesDmaNullForThatProcessOnly) {
  Capture c = BaseCapture();
  c.AddFile("proc/100/smaps", Smaps({{"12c00000-12c01000 rw-p 00000000 00:00 0  [anon:libc_malloc]", 1000, 10},
                                     {"12d0c000-134f5000 rw-s 00000000 00:0a 11957  anon_inode:dmabuf", 0, 0},
                                     {"14000000-14001000 rw-s 00000000 00:0a 11957  anon_inode:dmabuf", 0, 0}}));
  Report r = Account(c);
  EXPECT_FALSE(r.processes.at(100).dma_kb.has_value());  // 0 would be a plausible-looking undercount
  EXPECT_FALSE(r.processes.at(100).total_kb.has_value());
  EXPECT_EQ(r.processes.at(100).non_graphics_kb, 1010);
  EXPECT_EQ(r.processes.at(200).dma_kb, 0);
  EXPECT_EQ(r.device.processes_kb, 1010);  // pid 200 only, with the left-out warning
  EXPECT_TRUE(HasWarningWith(r, "1 processes with unknown total_kb left out of processes_kb"));
  // 0x7e9000 + 0x1000 bytes = 8104 kB.
  EXPECT_TRUE(HasWarningWith(r, "proc/100/smaps: 2 anon_inode:dmabuf mappings (8104 kB"));
}

TEST(LegacyKernelTest, AnonInodeDmabufInMapsCountsToo) {
  Capture c = BaseCapture();
  c.AddFile("proc/200/maps",
            "12c00000-12c01000 rw-p 00000000 00:00 0  [anon:libc_malloc]\n"
            "7000-9000 rw-s 00000000 00:0a 11957  anon_inode:dmabuf\n");
  Report r = Account(c);
  EXPECT_FALSE(r.processes.at(200).dma_kb.has_value());
  EXPECT_TRUE(HasWarningWith(r, "proc/200/maps: 1 anon_inode:dmabuf mapping (8 kB"));
}

TEST(HiddenTest, CmaTotalWithoutACapturedRegionIsNullNotZero) {
  Capture c = BaseCapture();
  c.AddFile("proc/meminfo", std::string(kMeminfo) + "CmaTotal:        4182016 kB\nCmaFree:           3265 kB\n");
  Report r = Account(c);
  EXPECT_FALSE(r.device.kernel_cma_kb.has_value());
  EXPECT_FALSE(r.device.kernel_kb.has_value());
  EXPECT_FALSE(r.device.total_kb.has_value());
  EXPECT_TRUE(r.device.processes_kb.has_value());
  EXPECT_TRUE(HasWarningWith(r, "CmaTotal 4182016 kB"));
  // CmaTotal 0: the kernel has no CMA, and 0 is the truth.
  c.AddFile("proc/meminfo", std::string(kMeminfo) + "CmaTotal:              0 kB\n");
  EXPECT_EQ(Account(c).device.kernel_cma_kb, 0);
}

TEST(HiddenTest, NoZramNodeWhileSwapIsUsedIsNullAndZeroWithoutSwap) {
  // kMeminfo: SwapTotal 100000, SwapFree 50000.
  Report used = Account(BaseCapture());
  EXPECT_FALSE(used.dumpsys.zram_kb.has_value());
  EXPECT_TRUE(HasWarningWith(used, "sys/block/zram0: no zram node captured while 50000 kB of swap is in use"));
  Capture c = BaseCapture();
  std::string no_swap = kMeminfo;
  no_swap.replace(no_swap.find("SwapFree:          50000"), 24, "SwapFree:         100000");
  c.AddFile("proc/meminfo", no_swap);
  EXPECT_EQ(Account(c).dumpsys.zram_kb, 0);
}

TEST(HiddenTest, ZramDevicesSumUpToTheFirstMissingNumber) {
  Capture c = BaseCapture();
  c.AddFile("sys/block/zram0/mm_stat", "8192 4096 2048 0 2048 0 0 0 0\n");
  c.AddFile("sys/block/zram1/mem_used_total", "1024\n");
  c.AddFile("sys/block/zram3/mem_used_total", "1048576\n");  // after the gap at zram2: AOSP stops
  Report r = Account(c);
  EXPECT_EQ(r.dumpsys.zram_kb, 3);  // (2048 + 1024) / 1024
}

TEST(VendorMeminfoTest, AVendorLineIsSkippedWithAWarningAndTheDeviceFiguresStay) {
  Capture c = BaseCapture();
  c.AddFile("proc/meminfo", std::string(kMeminfo) + "GPUTotalUsed:         39735 pages\nRsvPool:           reserved\n");
  Report r = Account(c);
  EXPECT_EQ(r.device.mem_total_kb, 7000000);
  EXPECT_TRUE(r.device.kernel_kb.has_value());
  EXPECT_TRUE(HasWarningWith(r, "proc/meminfo line 16"));
  EXPECT_TRUE(HasWarningWith(r, "GPUTotalUsed"));
  EXPECT_TRUE(HasWarningWith(r, "RsvPool"));
}

TEST(QcomTest, NegativeGpumemMappedIsNamedAndNullsOnlyThatProcess) {
  Capture c = BaseCapture();
  c.AddFile("sys/class/kgsl/kgsl/proc/100/gpumem_mapped", "-4096\n");
  c.AddFile("sys/class/kgsl/kgsl/proc/100/gpumem_unmapped", "8192\n");
  c.AddFile("sys/class/kgsl/kgsl/proc/100/imported_mem", "0\n");
  Report r = Account(c);
  EXPECT_FALSE(r.processes.at(100).gl_kb.has_value());
  EXPECT_EQ(r.processes.at(200).gl_kb, 0);
  EXPECT_TRUE(HasWarningWith(r, "sys/class/kgsl/kgsl/proc/100/gpumem_mapped: negative byte count \"-4096\""));
}

TEST(DeviceTextTest, IonLineIsComparedLikeDmaBufAndCachedIonIsShown) {
  Capture c = BaseCapture();
  c.AddFile("cmd/dumpsys_meminfo",
            "Total RAM: 7,000,000K (status normal)\n"
            " Free RAM: 3,141,292K (1,041,888K cached pss + 1,975,308K cached kernel +    34,616K cached ion +    "
            "89,480K free)\n"
            "      ION:    57,896K (   57,932K mapped +       -36K unmapped +         0K pools)\n");
  c.AddFile("sys/kernel/dmabuf/buffers/7/size", "10240\n");  // one buffer nobody maps
  Report r = Account(c);
  EXPECT_EQ(r.dumpsys.device_text_kb.at("ion_total_kb"), 57896);
  EXPECT_EQ(r.dumpsys.device_text_kb.at("ion_mapped_kb"), 57932);
  EXPECT_EQ(r.dumpsys.device_text_kb.at("ion_unmapped_kb"), -36);
  EXPECT_EQ(r.dumpsys.device_text_kb.at("cached_ion_kb"), 34616);
  // Computed: 10 kB exported, none mapped.
  EXPECT_EQ(r.dumpsys.difference_kb.at("ion_total_kb"), 10 - 57896);
  EXPECT_EQ(r.dumpsys.difference_kb.at("ion_mapped_kb"), -57932);
  EXPECT_EQ(r.dumpsys.difference_kb.at("ion_unmapped_kb"), 10 + 36);
  EXPECT_EQ(r.dumpsys.difference_kb.count("cached_ion_kb"), 0u);  // nothing computed to set against it
}

TEST(RobustnessTest, HugeValuesNeverWrap) {
  Capture c = BaseCapture();
  c.AddFile("sys/class/kgsl/kgsl/proc/100/gpumem_mapped", "18446744073709551615\n");
  c.AddFile("sys/class/kgsl/kgsl/proc/100/gpumem_unmapped", "18446744073709551615\n");
  c.AddFile("sys/class/kgsl/kgsl/proc/100/imported_mem", "0\n");
  Report r = Account(c);
  EXPECT_FALSE(r.processes.at(100).gl_kb.has_value());  // the sum overflows: null, not a wrapped number
}

}  // namespace
}  // namespace memfleet::accounting
