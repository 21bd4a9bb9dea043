#include "agent/reader/collector.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "accounting/account.h"
#include "agent/device_facts.h"
#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/device_root_fs.h"
#include "agent/reader/node_allowlist.h"
#include "capture/capture_header.h"
#include "capture/node_path.h"
#include "gtest/gtest.h"
#include "tests/support/fake_root_fs.h"
#include "tests/support/load_tree.h"
#include "tests/support/temp_dir.h"

namespace memfleet::agent {
namespace {

using capture::Capture;
using capture::Node;
using memfleet::testing::FakeRootFs;
using memfleet::testing::LoadTree;
using memfleet::testing::TestData;

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
using Strings = std::vector<std::string>;

// Passes every call through and remembers what was asked, to check it against the allowlist.
class RecordingRootFs : public RootFs {
 public:
  explicit RecordingRootFs(RootFs& inner) : inner_(inner) {}
  NodeRead ReadAtMost(std::string_view path, size_t max_bytes) override {
    reads_.emplace_back(path);
    return inner_.ReadAtMost(path, max_bytes);
  }
  NodeRead WriteThenRead(std::string_view path, std::string_view request, std::string_view arg) override {
    reads_.push_back(std::string(path) + "@" + std::string(arg));
    return inner_.WriteThenRead(path, request, arg);
  }
  DirList List(std::string_view path) override {
    lists_.emplace_back(path);
    return inner_.List(path);
  }
  bool IsDirectory(std::string_view path) override {
    lists_.emplace_back(path);
    return inner_.IsDirectory(path);
  }
  NodeRead RunCommand(std::string_view name, std::string_view arg) override {
    reads_.push_back("cmd/" + std::string(name) + (arg.empty() ? "" : "@" + std::string(arg)));
    return inner_.RunCommand(name, arg);
  }
  const std::vector<std::string>& reads() const { return reads_; }
  const std::vector<std::string>& lists() const { return lists_; }

 private:
  RootFs& inner_;
  std::vector<std::string> reads_;
  std::vector<std::string> lists_;
};

void ExpectOnlyAllowlistedAccess(const std::vector<std::string>& reads, const std::vector<std::string>& lists) {
  for (const std::string& p : reads) EXPECT_TRUE(IsAllowed(p)) << "read outside the allowlist: " << p;
  for (const std::string& p : lists) EXPECT_TRUE(IsAllowedDirectory(p)) << "listed outside the allowlist: " << p;
}

const char* KindName(Node::Kind k) {
  switch (k) {
    case Node::Kind::kFile:
      return "file";
    case Node::Kind::kDirectory:
      return "directory";
    case Node::Kind::kError:
      return "error";
  }
  return "?";
}

// ---- Capture trees: collecting a tree must reproduce it exactly. ----

class CollectTreeTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CollectTreeTest, HoldsEveryNodeOfTheTreeAndNothingElse) {
  std::string tree = TestData(std::string("captures/") + GetParam() + "/tree");
  ASSERT_TRUE(std::filesystem::is_directory(tree)) << tree;
  // The tree read the plain way: every file with its bytes, every `.err` as its errno, every folder.
  Capture expected = LoadTree(tree);
  ASSERT_GT(expected.size(), 100u);

  CaptureTreeFs tree_fs(tree);
  RecordingRootFs fs(tree_fs);
  absl::StatusOr<Capture> got = CollectCapture(fs, CollectOptions{});
  ASSERT_TRUE(got.ok()) << got.status();

  for (const auto& [path, node] : expected.nodes()) {
    const Node* n = got->Find(path);
    ASSERT_NE(n, nullptr) << "missing from the capture: " << path;
    EXPECT_EQ(KindName(n->kind), KindName(node.kind)) << path;
    EXPECT_TRUE(n->content == node.content) << "different bytes: " << path;
  }
  for (const auto& [path, node] : got->nodes()) {
    EXPECT_NE(expected.Find(path), nullptr) << "not in the tree: " << path;
    if (!node.is_directory()) {
      EXPECT_TRUE(IsAllowed(path)) << path;
    }
  }
  EXPECT_EQ(got->size(), expected.size());
  EXPECT_EQ(got->ContentBytes(), expected.ContentBytes());
  ExpectOnlyAllowlistedAccess(fs.reads(), fs.lists());
}

INSTANTIATE_TEST_SUITE_P(AllCaptures, CollectTreeTest,
                         ::testing::Values("generic-noddr", "mtk-mt6989", "qcom-edge", "qcom-sm8450", "xring-o1",
                                           "mali-rockchip", "legacy-419"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(CollectorTest, QcomEdgeFactsTheEngineRelies) {
  CaptureTreeFs fs(TestData("captures/qcom-edge/tree"));
  absl::StatusOr<Capture> c = CollectCapture(fs, CollectOptions{});
  ASSERT_TRUE(c.ok()) << c.status();
  // Denied, not absent (the fixture's oom_score_adj.err).
  const Node* adj = c->Find("proc/22459/oom_score_adj");
  ASSERT_NE(adj, nullptr);
  EXPECT_TRUE(adj->is_error());
  EXPECT_EQ(adj->content, "EACCES");
  // The qcom platform is detected from this folder.
  EXPECT_TRUE(c->IsDirectory("sys/class/kgsl/kgsl"));
  // 31999's KGSL folder has only gpumem_mapped and gpumem_unmapped: the missing two stay absent.
  EXPECT_TRUE(c->IsDirectory("sys/class/kgsl/kgsl/proc/31999"));
  EXPECT_EQ(c->Find("sys/class/kgsl/kgsl/proc/31999/imported_mem"), nullptr);
  // 13090 was captured as smaps_rollup + maps.
  EXPECT_EQ(c->Find("proc/13090/smaps"), nullptr);
  EXPECT_NE(c->FileContent("proc/13090/smaps_rollup"), nullptr);
  EXPECT_NE(c->FileContent("proc/13090/maps"), nullptr);
  // The header is the tree's own, verbatim.
  ASSERT_NE(c->FileContent("capture.json"), nullptr);
  EXPECT_TRUE(Has(*c->FileContent("capture.json"), "\"device_id\": \"sim-qcom-505\""));
}

// ---- A device root, faked: which failures become facts. ----

void AddDevice(FakeRootFs& fs) {
  fs.AddFile("proc/meminfo", "MemTotal: 100 kB\n");
  fs.AddFile("proc/100/cmdline", std::string("com.app\0", 8));
  fs.AddFile("proc/100/status", "Name:\tcom.app\n");
  fs.AddError("proc/100/oom_score_adj", "EACCES");
  fs.AddFile("proc/100/smaps", "00400000-00401000 r-xp 00000000 00:00 0\nPss: 4 kB\n");
  fs.AddFile("proc/100/smaps_rollup", "Pss: 4 kB\n");
  // 100 and 200 map the GPU device: GPU processes, so full smaps is read for them.
  fs.AddFile("proc/100/maps",
             "00400000-00401000 r-xp 00000000 00:00 0\n"
             "7f100000-7f200000 rw-s 00000000 00:05 12      /dev/mali0\n");
  fs.AddFile("proc/100/environ", "SECRET=1");
  fs.AddError("proc/100/fdinfo/3", "ENOENT");  // closed between the listing and the read
  fs.AddError("proc/100/fdinfo/6", "ESRCH");
  fs.AddFile("proc/100/fdinfo/4", "pos:\t0\nflags:\t02\nexp_name:\tsystem\nsize:\t4096\nino:\t77\n");
  fs.AddError("proc/100/fdinfo/5", "EACCES");
  fs.AddFile("proc/200/cmdline", std::string("svc\0", 4));
  fs.AddFile("proc/200/status", "Name:\tsvc\n");
  fs.AddFile("proc/200/oom_score_adj", "0\n");
  fs.AddError("proc/200/smaps", "EIO");
  fs.AddFile("proc/200/smaps_rollup", "Pss: 10 kB\n");
  fs.AddFile("proc/200/maps",
             "7f000000-7f001000 rw-s 00000000 00:0a 77 /dmabuf:\n"
             "7f100000-7f200000 rw-s 00000000 00:05 12 /dev/kgsl-3d0\n");
  fs.AddFile("proc/2/cmdline", "");
  fs.AddFile("proc/2/smaps", "");     // a kernel thread
  fs.AddError("proc/300", "ENOENT");  // exited between the proc listing and its own
  fs.AddFile("proc/self/smaps", "the agent itself");
  fs.AddFile("proc/0100/smaps", "not a kernel pid name");
  fs.AddFile("sys/kernel/mm/cma/linux,cma/alloc_pages_success", "10\n");
  fs.AddFile("sys/kernel/mm/cma/linux,cma/uevent", "not allowlisted");
  fs.AddFile("sys/kernel/mm/cma/bad region/gcma", "1\n");
  fs.AddFile("etc/shadow", "root:x");
}

CollectOptions DeviceOptions() {
  CollectOptions o;
  o.device_id = "dev-1";
  o.captured_at = "2026-01-02T03:04:05Z";
  o.page_size = 16384;
  return o;
}

TEST(CollectorTest, InjectedFailuresBecomeErrorNodes) {
  FakeRootFs fs;
  AddDevice(fs);
  absl::StatusOr<Capture> c = CollectCapture(fs, DeviceOptions());
  ASSERT_TRUE(c.ok()) << c.status();

  const Node* adj = c->Find("proc/100/oom_score_adj");
  ASSERT_NE(adj, nullptr);
  EXPECT_TRUE(adj->is_error());
  EXPECT_EQ(adj->content, "EACCES");
  const Node* smaps = c->Find("proc/200/smaps");
  ASSERT_NE(smaps, nullptr);
  EXPECT_TRUE(smaps->is_error());
  EXPECT_EQ(smaps->content, "EIO");
  // Without readable smaps, the rollup and maps stand in for it; with it, they are not read.
  ASSERT_NE(c->FileContent("proc/200/smaps_rollup"), nullptr);
  EXPECT_EQ(*c->FileContent("proc/200/smaps_rollup"), "Pss: 10 kB\n");
  EXPECT_NE(c->FileContent("proc/200/maps"), nullptr);
  EXPECT_EQ(c->Find("proc/100/smaps_rollup"), nullptr);
  EXPECT_EQ(c->Find("proc/100/maps"), nullptr);
  EXPECT_EQ(*c->FileContent("proc/100/cmdline"), std::string("com.app\0", 8));
  EXPECT_EQ(*c->FileContent("proc/2/smaps"), "");  // empty is a fact too (a kernel thread)

  // fd races are skipped; a denied fd is a fact.
  EXPECT_EQ(c->Find("proc/100/fdinfo/3"), nullptr);
  EXPECT_EQ(c->Find("proc/100/fdinfo/6"), nullptr);
  EXPECT_NE(c->FileContent("proc/100/fdinfo/4"), nullptr);
  ASSERT_NE(c->Find("proc/100/fdinfo/5"), nullptr);
  EXPECT_EQ(c->Find("proc/100/fdinfo/5")->content, "EACCES");
  EXPECT_EQ(c->Find("proc/300"), nullptr);

  // No KGSL on this device: nothing about it, not even ENOENT.
  EXPECT_TRUE(c->Children("sys/class").empty());
  EXPECT_EQ(c->Find("sys/class/kgsl/kgsl"), nullptr);
  EXPECT_EQ(c->Find("proc/mtk_mali/gpu_memory"), nullptr);

  EXPECT_NE(c->FileContent("sys/kernel/mm/cma/linux,cma/alloc_pages_success"), nullptr);
  for (const char* never : {"proc/100/environ", "proc/self/smaps", "proc/0100/smaps", "etc/shadow",
                            "sys/kernel/mm/cma/linux,cma/uevent", "sys/kernel/mm/cma/bad region/gcma"}) {
    EXPECT_FALSE(Contains(fs.reads(), never)) << never;
    EXPECT_EQ(c->Find(never), nullptr) << never;
  }
  ExpectOnlyAllowlistedAccess(fs.reads(), fs.lists());
}

TEST(CollectorTest, DeviceRootGetsAHeaderFromTheOptions) {
  FakeRootFs fs;
  AddDevice(fs);
  absl::StatusOr<Capture> c = CollectCapture(fs, DeviceOptions());
  ASSERT_TRUE(c.ok()) << c.status();
  const std::string* text = c->FileContent("capture.json");
  ASSERT_NE(text, nullptr);
  nlohmann::json header = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(header.is_object()) << *text;
  EXPECT_EQ(header["format"], 1);
  EXPECT_EQ(header["device_id"], "dev-1");
  EXPECT_EQ(header["captured_at"], "2026-01-02T03:04:05Z");
  EXPECT_EQ(header["page_size"], 16384);
}

TEST(CollectorTest, HeaderSurvivesADeviceIdThatIsNotUtf8) {
  FakeRootFs fs;
  AddDevice(fs);
  CollectOptions o = DeviceOptions();
  o.device_id = "bad\xff\xfe";
  absl::StatusOr<Capture> c = CollectCapture(fs, o);
  ASSERT_TRUE(c.ok()) << c.status();
  nlohmann::json header = nlohmann::json::parse(*c->FileContent("capture.json"), nullptr, false);
  ASSERT_TRUE(header.is_object());
  EXPECT_EQ(header["format"], 1);
}

TEST(CollectorTest, RssPidIsWrittenOncePerProcessWithMemory) {
  FakeRootFs fs;
  AddDevice(fs);
  fs.AddFile("proc/dma_heap/rss_pid", "");
  fs.AddFile("proc/dma_heap/rss_pid@100", "PID     PSS(KB)   RSS(KB)\n100     4         4\n");
  absl::StatusOr<Capture> c = CollectCapture(fs, DeviceOptions());
  ASSERT_TRUE(c.ok()) << c.status();
  // 100 (smaps) and 200 (smaps_rollup) have memory; 2 is a kernel thread. The request is exactly
  // "pid:<pid>\n": the MTK driver wants the newline, in one write.
  EXPECT_EQ(fs.write_requests(),
            (Strings{"proc/dma_heap/rss_pid@100=pid:100\n", "proc/dma_heap/rss_pid@200=pid:200\n"}));
  ASSERT_NE(c->FileContent("proc/dma_heap/rss_pid@100"), nullptr);
  EXPECT_TRUE(Has(*c->FileContent("proc/dma_heap/rss_pid@100"), "100     4"));
  EXPECT_EQ(c->Find("proc/dma_heap/rss_pid@200"), nullptr);  // ENOENT: skipped
  EXPECT_EQ(c->Find("proc/dma_heap/rss_pid"), nullptr);
}

TEST(CollectorTest, NoRssPidWithoutTheNode) {
  FakeRootFs fs;
  AddDevice(fs);
  fs.AddFile("proc/dma_heap/all_heaps", "x");
  absl::StatusOr<Capture> c = CollectCapture(fs, DeviceOptions());
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(fs.write_requests().empty());
}

TEST(CollectorTest, CommandsRecordOutputAndRealFailures) {
  FakeRootFs fs;
  AddDevice(fs);
  fs.AddError("cmd/native_heap@100", "EPERM");
  fs.AddFile("cmd/dumpsys_meminfo", "Total RAM: 1K\n");
  fs.AddFile("cmd/dumpsys_gpu_gpumem", "Memory snapshot for GPU 0:\nGlobal total: 4096\n");
  absl::StatusOr<Capture> c = CollectCapture(fs, DeviceOptions());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(fs.commands(), (Strings{"cmd/native_heap@100", "cmd/native_heap@200", "cmd/dumpsys_meminfo",
                                    "cmd/dumpsys_gpu_gpumem", "cmd/getprop"}));
  ASSERT_NE(c->Find("cmd/native_heap@100"), nullptr);
  EXPECT_EQ(c->Find("cmd/native_heap@100")->content, "EPERM");
  EXPECT_EQ(c->Find("cmd/native_heap@200"), nullptr);  // ENOENT: the command is not there
  EXPECT_EQ(*c->FileContent("cmd/dumpsys_meminfo"), "Total RAM: 1K\n");
  EXPECT_EQ(*c->FileContent("cmd/dumpsys_gpu_gpumem"), "Memory snapshot for GPU 0:\nGlobal total: 4096\n");
}

// Full smaps only for GPU processes; the others cost a rollup and maps. Heap dumps too: a dump stops
// the process for up to seconds, so only GPU processes, whose graphics native heap is what it measures.
TEST(CollectorTest, OnlyGpuProcessesGetFullSmaps) {
  FakeRootFs fs;
  fs.AddFile("proc/meminfo", "MemTotal: 100 kB\n");
  const std::string smaps = "00400000-00401000 r-xp 00000000 00:00 0\nPss: 4 kB\n";
  // 400: no GPU device mapping, no KGSL folder. 500: a KGSL folder only. 600: "/dev/mali" inside a
  // file name that is not the device (a false hit is allowed: it only costs the full smaps). 700: KGSL
  // memory mapped from the shmem file "/kgsl-3d0", as Qualcomm 6.x kernels name it.
  for (const char* pid : {"400", "500", "600", "700"}) {
    const std::string dir = std::string("proc/") + pid;
    fs.AddFile(dir + "/cmdline", "app");
    fs.AddFile(dir + "/smaps", smaps);
    fs.AddFile(dir + "/smaps_rollup", "Pss: 4 kB\n");
  }
  fs.AddFile("proc/400/maps", "00400000-00401000 r-xp 00000000 00:00 0 /system/lib64/libc.so\n");
  fs.AddFile("proc/500/maps", "00400000-00401000 r-xp 00000000 00:00 0\n");
  fs.AddFile("proc/600/maps", "00400000-00401000 r-xp 00000000 00:00 0 /data/x /dev/mali.txt\n");
  fs.AddFile("proc/700/maps", "7f100000-7f200000 rw-s 00000000 00:01 77 /kgsl-3d0\n");
  fs.AddFile("sys/class/kgsl/kgsl/proc/500/gpumem_mapped", "0\n");
  absl::StatusOr<Capture> c = CollectCapture(fs, DeviceOptions());
  ASSERT_TRUE(c.ok()) << c.status();

  EXPECT_FALSE(Contains(fs.reads(), "proc/400/smaps"));
  EXPECT_NE(c->FileContent("proc/400/smaps_rollup"), nullptr);
  EXPECT_NE(c->FileContent("proc/400/maps"), nullptr);  // its dma-buf mappings
  for (const char* pid : {"500", "600", "700"}) {
    const std::string dir = std::string("proc/") + pid;
    ASSERT_NE(c->FileContent(dir + "/smaps"), nullptr) << pid;
    EXPECT_EQ(*c->FileContent(dir + "/smaps"), smaps);
    EXPECT_EQ(c->Find(dir + "/smaps_rollup"), nullptr) << pid;
    EXPECT_EQ(c->Find(dir + "/maps"), nullptr) << pid;  // smaps shows the same mappings
  }
  EXPECT_EQ(fs.commands(), (Strings{"cmd/native_heap@500", "cmd/native_heap@600", "cmd/dumpsys_meminfo",
                                    "cmd/dumpsys_gpu_gpumem", "cmd/getprop"}));
  ExpectOnlyAllowlistedAccess(fs.reads(), fs.lists());
}

// --smaps full / a sweep's --full-smaps: full smaps for every process (the heaps need it), no rollup
// or maps beside it, and the header says so.
TEST(CollectorTest, FullSmapsReadsEveryProcessAndTheHeaderSaysSo) {
  FakeRootFs fs;
  fs.AddFile("proc/meminfo", "MemTotal: 100 kB\n");
  const std::string smaps = "00400000-00401000 r-xp 00000000 00:00 0\nPss: 4 kB\n";
  for (const char* pid : {"400", "500"}) {
    const std::string dir = std::string("proc/") + pid;
    fs.AddFile(dir + "/cmdline", "app");
    fs.AddFile(dir + "/smaps", smaps);
    fs.AddFile(dir + "/smaps_rollup", "Pss: 4 kB\n");
    fs.AddFile(dir + "/maps", "00400000-00401000 r-xp 00000000 00:00 0 /system/lib64/libc.so\n");
  }
  CollectOptions o = DeviceOptions();
  o.full_smaps = true;
  absl::StatusOr<Capture> c = CollectCapture(fs, o);
  ASSERT_TRUE(c.ok()) << c.status();
  for (const char* pid : {"400", "500"}) {
    const std::string dir = std::string("proc/") + pid;
    ASSERT_NE(c->FileContent(dir + "/smaps"), nullptr) << pid;
    EXPECT_EQ(c->Find(dir + "/smaps_rollup"), nullptr) << pid;
    EXPECT_EQ(c->Find(dir + "/maps"), nullptr) << pid;
  }
  EXPECT_EQ(nlohmann::json::parse(*c->FileContent("capture.json")).value("smaps", ""), "full");
  // Without the option: no such header field.
  absl::StatusOr<Capture> plain = CollectCapture(fs, DeviceOptions());
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->FileContent("capture.json")->find("\"smaps\""), std::string::npos);
  EXPECT_EQ(plain->Find("proc/400/smaps"), nullptr);
}

TEST(CollectorTest, RunCommandsFalseRunsNone) {
  FakeRootFs fs;
  AddDevice(fs);
  fs.AddFile("cmd/dumpsys_meminfo", "Total RAM: 1K\n");
  CollectOptions o = DeviceOptions();
  o.run_commands = false;
  absl::StatusOr<Capture> c = CollectCapture(fs, o);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(fs.commands().empty());
  EXPECT_EQ(c->Find("cmd/dumpsys_meminfo"), nullptr);
}

// Heap dumps: at most max_heap_dumps GPU processes per capture, in pid order from round *
// max_heap_dumps on, so that successive captures take each in turn.
TEST(CollectorTest, HeapDumpsAreCappedAndTakenInTurn) {
  FakeRootFs fs;
  fs.AddFile("proc/meminfo", "MemTotal: 100 kB\n");
  // In numeric order 90, 100, 250, 1000, 3000 (not the listing's 100, 1000, 250, 3000, 90); 77 has no GPU.
  for (const char* pid : {"90", "100", "250", "1000", "3000", "77"}) {
    fs.AddFile(std::string("proc/") + pid + "/smaps_rollup", "Pss: 4 kB\n");
    if (std::string(pid) != "77") fs.AddFile(std::string("sys/class/kgsl/kgsl/proc/") + pid + "/gpumem_mapped", "0\n");
  }
  auto heap_dumps = [&](uint64_t round, size_t max) {
    FakeRootFs copy = fs;
    CollectOptions o = DeviceOptions();
    o.run_dumpsys = false;
    o.heap_dump_round = round;
    o.max_heap_dumps = max;
    EXPECT_TRUE(CollectCapture(copy, o).ok());
    return copy.commands();
  };
  EXPECT_EQ(heap_dumps(0, 2), (Strings{"cmd/native_heap@100", "cmd/native_heap@90"}));
  EXPECT_EQ(heap_dumps(1, 2), (Strings{"cmd/native_heap@1000", "cmd/native_heap@250"}));
  EXPECT_EQ(heap_dumps(2, 2), (Strings{"cmd/native_heap@3000", "cmd/native_heap@90"}));  // wraps
  EXPECT_EQ(heap_dumps(0, 9), (Strings{"cmd/native_heap@100", "cmd/native_heap@1000", "cmd/native_heap@250",
                                       "cmd/native_heap@3000", "cmd/native_heap@90"}));
  EXPECT_TRUE(heap_dumps(0, 0).empty());
}

// Between the captures that run dumpsys there is no dumpsys node at all, and the engine's view says so
// by leaving out device_text (nothing to compare with) rather than failing.
TEST(CollectorTest, CaptureWithoutDumpsysHasNoDumpsysNode) {
  FakeRootFs fs;
  AddDevice(fs);
  fs.AddFile("cmd/dumpsys_meminfo", "Total RAM: 1K\n");
  fs.AddFile("cmd/getprop", "[ro.product.model]: [Pixel 7]\n");
  CollectOptions o = DeviceOptions();
  o.run_dumpsys = false;
  absl::StatusOr<Capture> c = CollectCapture(fs, o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(fs.commands(), (Strings{"cmd/native_heap@100", "cmd/native_heap@200"}));
  EXPECT_EQ(c->Find("cmd/dumpsys_meminfo"), nullptr);
  EXPECT_EQ(c->Find("cmd/getprop"), nullptr);
}

// debugfs is not mounted on user builds of Android 12+: its Mali and CMA folders are absent (ENOENT),
// which leaves no trace and costs no wait. Read through the real DeviceRootFs over a folder without them.
TEST(CollectorTest, AbsentDebugfsLeavesNoTraceAndNoWait) {
  testing::TempDir dir;
  dir.Write("proc/meminfo", "MemTotal: 100 kB\n");
  dir.Write("sys/kernel/mm/cma/reserved/total_pages", "1024\n");
  DeviceRootFs device(dir.path());
  RecordingRootFs fs(device);
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Capture> c = CollectCapture(fs, DeviceOptions());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(Contains(fs.lists(), "sys/kernel/debug/mali0"));  // asked, and found absent
  EXPECT_TRUE(Contains(fs.lists(), "sys/kernel/debug/cma"));
  for (const auto& [path, node] : c->nodes()) EXPECT_EQ(path.rfind("sys/kernel/debug", 0), std::string::npos) << path;
  EXPECT_NE(c->FileContent("sys/kernel/mm/cma/reserved/total_pages"), nullptr);
}

// A live root's header carries the device's facts (DeviceFacts) after id, time and page size.
TEST(CollectorTest, DeviceRootHeaderCarriesTheDeviceFacts) {
  FakeRootFs fs;
  AddDevice(fs);
  CollectOptions o = DeviceOptions();
  o.header_facts = {{"model", "Pixel 7"}, {"android_sdk", "34"}, {"access", "shell"}, {"selinux", "enforcing"}};
  o.android_version = 14;
  absl::StatusOr<Capture> c = CollectCapture(fs, o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c->FileContent("capture.json"),
            "{\n \"format\": 1,\n \"device_id\": \"dev-1\",\n \"captured_at\": \"2026-01-02T03:04:05Z\",\n"
            " \"page_size\": 16384,\n \"android_version\": 14,\n \"model\": \"Pixel 7\",\n"
            " \"android_sdk\": \"34\",\n \"access\": \"shell\",\n \"selinux\": \"enforcing\"\n}\n");
}

TEST(CollectorTest, KgslFolderFileMissingOrFailing) {
  FakeRootFs fs;
  AddDevice(fs);
  fs.AddFile("sys/class/kgsl/kgsl/memstat", "not read");
  fs.AddFile("sys/class/kgsl/kgsl/proc/100/gpumem_mapped", "4096\n");
  fs.AddError("sys/class/kgsl/kgsl/proc/100/gpumem_unmapped", "EIO");
  absl::StatusOr<Capture> c = CollectCapture(fs, DeviceOptions());
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->IsDirectory("sys/class/kgsl/kgsl"));
  EXPECT_TRUE(c->IsDirectory("sys/class/kgsl/kgsl/proc/100"));
  EXPECT_EQ(*c->FileContent("sys/class/kgsl/kgsl/proc/100/gpumem_mapped"), "4096\n");
  EXPECT_EQ(c->Find("sys/class/kgsl/kgsl/proc/100/gpumem_unmapped")->content, "EIO");
  EXPECT_EQ(c->Find("sys/class/kgsl/kgsl/proc/100/imported_mem"), nullptr);
  EXPECT_EQ(c->Find("sys/class/kgsl/kgsl/memstat"), nullptr);
}

TEST(CollectorTest, UnlistableFolderIsAnErrorNode) {
  FakeRootFs fs;
  AddDevice(fs);
  fs.AddFile("proc/400/smaps", "00400000-00401000 r-xp 00000000 00:00 0\nPss: 4 kB\n");
  fs.AddError("proc/400/fdinfo", "EACCES");  // another user's process
  absl::StatusOr<Capture> c = CollectCapture(fs, DeviceOptions());
  ASSERT_TRUE(c.ok());
  ASSERT_NE(c->Find("proc/400/fdinfo"), nullptr);
  EXPECT_EQ(c->Find("proc/400/fdinfo")->content, "EACCES");
}

TEST(CollectorTest, CaptureTreeReplaysEvenEnoentItRecorded) {
  FakeRootFs fs;
  fs.AddFile("capture.json", "{\"format\": 1}");
  fs.AddFile("proc/meminfo", "MemTotal: 1 kB\n");
  fs.AddFile("proc/5/smaps", "00400000-00401000 r-xp 00000000 00:00 0\nPss: 4 kB\n");
  fs.AddError("proc/5/fdinfo/3", "ENOENT");
  fs.AddError("cmd/native_heap@5", "ENOENT");
  absl::StatusOr<Capture> c = CollectCapture(fs, CollectOptions{});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c->FileContent("capture.json"), "{\"format\": 1}");
  ASSERT_NE(c->Find("proc/5/fdinfo/3"), nullptr);
  EXPECT_EQ(c->Find("proc/5/fdinfo/3")->content, "ENOENT");
  ASSERT_NE(c->Find("cmd/native_heap@5"), nullptr);
  EXPECT_EQ(c->Find("cmd/native_heap@5")->content, "ENOENT");
}

TEST(CollectorTest, NeitherTreeNorDeviceIsFailedPrecondition) {
  FakeRootFs fs;
  fs.AddFile("etc/hostname", "box\n");
  absl::StatusOr<Capture> c = CollectCapture(fs, CollectOptions{});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Has(std::string(c.status().message()), "capture.json"));
  EXPECT_TRUE(Has(std::string(c.status().message()), "proc/meminfo"));
  EXPECT_TRUE(Has(std::string(c.status().message()), "'fake'"));

  CaptureTreeFs missing("/nonexistent/memfleet");
  EXPECT_EQ(CollectCapture(missing, CollectOptions{}).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(CollectorTest, UnreadableHeaderIsFailedPrecondition) {
  FakeRootFs fs;
  AddDevice(fs);
  fs.AddError("capture.json", "EACCES");
  absl::StatusOr<Capture> c = CollectCapture(fs, CollectOptions{});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Has(std::string(c.status().message()), "EACCES"));
}

// ---- This machine's own root. ----

TEST(CollectorTest, CollectsThisLinuxMachine) {
  DeviceRootFs device("/");
  RecordingRootFs fs(device);
  absl::StatusOr<Capture> c = CollectCapture(fs, DeviceOptions());
  ASSERT_TRUE(c.ok()) << c.status();
  std::string me = "proc/" + std::to_string(getpid());
  // No GPU here: the rollup (and maps) rather than full smaps.
  ASSERT_NE(c->FileContent(me + "/smaps_rollup"), nullptr) << "this test's own smaps_rollup";
  EXPECT_TRUE(Has(*c->FileContent(me + "/smaps_rollup"), "Pss:"));
  EXPECT_EQ(c->Find(me + "/smaps"), nullptr);
  EXPECT_NE(c->FileContent(me + "/maps"), nullptr);
  ASSERT_NE(c->FileContent(me + "/cmdline"), nullptr);
  // The test executable's own name, as the kernel gives it: the capture holds the node's text unchanged.
  std::ifstream own_cmdline("/proc/self/cmdline", std::ios::binary);
  std::string own_name;
  std::getline(own_cmdline, own_name, '\0');
  ASSERT_FALSE(own_name.empty());
  EXPECT_TRUE(Has(*c->FileContent(me + "/cmdline"), own_name)) << own_name;
  ASSERT_NE(c->FileContent("proc/meminfo"), nullptr);
  EXPECT_TRUE(Has(*c->FileContent("proc/meminfo"), "MemTotal:"));
  EXPECT_NE(c->FileContent("capture.json"), nullptr);
  EXPECT_TRUE(c->IsDirectory(me + "/fdinfo"));
  for (const auto& [path, node] : c->nodes()) {
    if (node.is_file()) {
      EXPECT_TRUE(IsAllowed(path)) << path;
    }
    if (node.is_error()) {
      // A node that failed, or a folder that could not be listed.
      EXPECT_TRUE(IsAllowed(path) || IsAllowedDirectory(path)) << path << ": " << node.content;
      // Optional nodes this kernel lacks leave no trace. (A pid's node may be ENOENT: processes of
      // this busy machine exit during the collection.)
      EXPECT_NE(path.rfind("sys/", 0), 0u) << path << ": " << node.content;
    }
  }
  ExpectOnlyAllowlistedAccess(fs.reads(), fs.lists());
}

// procfs reports size 0, so nodes are read into a 16 KiB buffer first; a capture that kept that slack
// held several times its size, and the agent's peak RSS with it.
TEST(CollectorTest, LiveNodesKeepNoReadBuffer) {
  DeviceRootFs fs("/");
  absl::StatusOr<Capture> c = CollectCapture(fs, DeviceOptions());
  ASSERT_TRUE(c.ok()) << c.status();
  size_t files = 0;
  for (const auto& [path, node] : c->nodes()) {
    if (!node.is_file() || path == "capture.json") continue;
    ++files;
    const size_t size = node.content.size();
    EXPECT_LE(node.content.capacity(), std::max<size_t>(15, size + size / 8 + 64)) << path << ": " << size << " bytes";
  }
  EXPECT_GT(files, 10u);
}

// What an agent with --root / on this machine collects with; nullopt, with a failure, when this machine
// is not the Linux host (no system/bin/getprop) the tests below are about.
std::optional<CollectOptions> ThisHostsOptions(RootFs& fs) {
  const DeviceFacts facts = LiveRootFacts(fs, static_cast<uint64_t>(sysconf(_SC_PAGESIZE)), geteuid());
  EXPECT_EQ(facts.model, kLiveRootModel) << "this test needs a Linux host without system/bin/getprop";
  if (facts.model != kLiveRootModel) return std::nullopt;
  CollectOptions options = DeviceOptions();
  options.page_size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  options.header_facts = HeaderFactsOf(facts);
  return options;
}

// This machine is a Linux host, not a phone: what an agent with --root / writes of it holds no Android
// build property and no system_server, and no DDR size. Its static reserved figure is null with the
// reason, not MemTotal rounded up to a phone's DDR size; the figures /proc gives are all there.
TEST(CollectorTest, ThisHostsCaptureHasNoGuessedStaticReserved) {
  DeviceRootFs fs("/");
  std::optional<CollectOptions> host = ThisHostsOptions(fs);
  ASSERT_TRUE(host.has_value());
  CollectOptions& options = *host;
  absl::StatusOr<Capture> c = CollectCapture(fs, options);
  ASSERT_TRUE(c.ok()) << c.status();
  const report::Report r = accounting::Account(*c);
  EXPECT_FALSE(r.device.ddr_kb.has_value());
  EXPECT_FALSE(r.device.ddr_estimated);
  EXPECT_FALSE(r.device.static_reserved_kb.has_value());
  EXPECT_FALSE(r.device.total_kb.has_value());
  EXPECT_NE(std::find_if(r.warnings.begin(), r.warnings.end(),
                         [](const std::string& w) {
                           return w.rfind(
                                      "ddr_kb: no ddr_size_kb in capture.json, and the capture shows no Android "
                                      "device",
                                      0) == 0;
                         }),
            r.warnings.end());
  EXPECT_GT(r.device.mem_total_kb.value_or(0), 0);
  EXPECT_TRUE(r.device.kernel_kb.has_value());
}

// The same host with its DDR size given (the agent's --ddr-size-kb): the capture says it, and the report
// takes it as given, not estimated, with the static reserved figure it implies.
TEST(CollectorTest, ThisHostsCaptureWithItsDdrSizeGivenHasItsStaticReserved) {
  DeviceRootFs fs("/");
  std::optional<CollectOptions> host = ThisHostsOptions(fs);
  ASSERT_TRUE(host.has_value());
  CollectOptions& options = *host;
  const int64_t mem_total_kb = [&] {
    absl::StatusOr<Capture> first = CollectCapture(fs, options);
    return first.ok() ? accounting::Account(*first).device.mem_total_kb.value_or(0) : 0;
  }();
  ASSERT_GT(mem_total_kb, 0);
  // The next whole GiB above MemTotal, plus one: what a host with some firmware carve-out would have.
  const uint64_t ddr_size_kb = (static_cast<uint64_t>(mem_total_kb) / (1 << 20) + 2) << 20;
  options.ddr_size_kb = ddr_size_kb;
  absl::StatusOr<Capture> c = CollectCapture(fs, options);
  ASSERT_TRUE(c.ok()) << c.status();
  absl::StatusOr<capture::CaptureHeader> header = capture::ParseCaptureHeader(c->Find(capture::kHeaderNode)->content);
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->ddr_size_kb, ddr_size_kb);
  const report::Report r = accounting::Account(*c);
  EXPECT_EQ(r.device.ddr_kb, static_cast<int64_t>(ddr_size_kb));
  EXPECT_FALSE(r.device.ddr_estimated);
  ASSERT_TRUE(r.device.static_reserved_kb.has_value());
  EXPECT_EQ(*r.device.static_reserved_kb,
            static_cast<int64_t>(ddr_size_kb) - *r.device.mem_total_kb - r.device.gcma_kb.value_or(0));
  EXPECT_TRUE(r.device.total_kb.has_value());
}

// No per-capture growth. malloc's bytes in use after 220 collections of a sample tree against
// after 20 (the first ones warm caches): one capture is 0.2 MB, and a leak of one 40-byte node per
// capture would add 200 x (40 + malloc's 16) = 11 kB. (mallinfo2 reads 0 under ASan: no check there.)
TEST(CollectorTest, RepeatedCollectionsDoNotGrowTheHeap) {
  CaptureTreeFs fs(TestData("captures/qcom-sm8450/tree"));
  auto collect = [&](int n) {
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<Capture> c = CollectCapture(fs, CollectOptions{});
      ASSERT_TRUE(c.ok()) << c.status();
      ASSERT_GT(c->size(), 300u);
    }
  };
  collect(20);
  const size_t before = mallinfo2().uordblks;
  collect(200);
  const size_t after = mallinfo2().uordblks;
  EXPECT_LT(after, before + 8 * 1024) << "before " << before << " B, after " << after << " B";
}

}  // namespace
}  // namespace memfleet::agent
