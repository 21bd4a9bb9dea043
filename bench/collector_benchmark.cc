// The agent against its floors (docs/performance.md), ratios from one run:
// - a recorded capture tree (qcom-sm8450) collected through CaptureTreeFs, against reading every file
//   of the tree;
// - one capture of this machine's `/` (collect + the stored-form encode the scheduler spools), against
//   `cat` of the same nodes: the same file list read with read(2) into one reused buffer, which is the
//   kernel's cost of generating them;
// - a full-smaps capture of `/` (--smaps full) against the default one of the same moment: CPU, bytes
//   read and spooled, and the stored report with and without the heaps (BM_FullSmapsAgainstDefaultCapture);
// - `collector_benchmark --captures=1000 [--root=/]`: that capture in a loop, printing VmHWM / VmRSS
//   after the 1st, 10th and last capture (peak RSS target 10 MB, no per-capture growth);
// - `collector_benchmark --agent-rss[=PATH]`: the real memfleet-agent (default: beside this binary) run
//   with --once on `/` against a LabServer started here on 127.0.0.1:0, so the capture is taken, spooled,
//   streamed and acked; prints its peak RSS (wait4 ru_maxrss) and the largest anonymous / file-backed
//   parts and the most threads seen in /proc/<pid>/status while it ran. bench/agent-footprint runs it on
//   the dynamic and the static (scripts/build-agent) agent.
#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "accounting/account.h"
#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/collector.h"
#include "agent/reader/device_root_fs.h"
#include "bench/support/machine_context.h"
#include "benchmark/benchmark.h"
#include "proto/capture_codec.h"
#include "report/report_json.h"
#include "storage/report_codec.h"
#include "server/lab_server.h"
#include "tests/support/test_paths.h"

extern char** environ;

namespace memfleet::agent {
namespace {

std::string Tree() { return testing::TestData("captures/qcom-sm8450/tree"); }

CollectOptions RootOptions() {
  CollectOptions o;
  o.device_id = "bench";
  o.captured_at = "2026-12-02T00:00:00Z";
  o.run_commands = false;  // no `am`/dumpsys on a build machine: `cat` has no command to match
  return o;
}

void BM_CollectCaptureTree(benchmark::State& state) {
  CaptureTreeFs fs(Tree());
  size_t bytes = 0;
  size_t nodes = 0;
  for (auto _ : state) {
    absl::StatusOr<capture::Capture> c = CollectCapture(fs, CollectOptions{});
    if (!c.ok()) {
      state.SkipWithError(std::string(c.status().message()).c_str());
      return;
    }
    bytes = c->ContentBytes();
    nodes = c->size();
    benchmark::DoNotOptimize(c);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["nodes"] = static_cast<double>(nodes);
}
BENCHMARK(BM_CollectCaptureTree)->Unit(benchmark::kMillisecond);

// `find tree -type f | xargs cat` in-process: the least any collector of this tree has to do.
void BM_CatCaptureTree(benchmark::State& state) {
  namespace fs = std::filesystem;
  std::string buffer(1 << 16, '\0');
  size_t bytes = 0;
  for (auto _ : state) {
    bytes = 0;
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(Tree())) {
      if (!e.is_regular_file()) continue;
      int fd = open(e.path().c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      ssize_t n;
      while ((n = read(fd, buffer.data(), buffer.size())) > 0) bytes += static_cast<size_t>(n);
      close(fd);
    }
    benchmark::DoNotOptimize(bytes);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_CatCaptureTree)->Unit(benchmark::kMillisecond);

// One capture as the scheduler takes it, minus the spool write: collect, then encode the stored form.
size_t CaptureRootOnce(DeviceRootFs& fs, size_t* content_bytes) {
  absl::StatusOr<capture::Capture> c = CollectCapture(fs, RootOptions());
  if (!c.ok()) return 0;
  if (content_bytes != nullptr) *content_bytes = c->ContentBytes();
  std::string blob =
      wire::EncodeStoredCapture(*c, "bench-1", "bench", "2026-12-02T00:00:00Z", wire::kAgentCompressionLevel);
  return blob.size();
}

void BM_CaptureRoot(benchmark::State& state) {
  DeviceRootFs fs("/");
  size_t bytes = 0;
  for (auto _ : state) {
    if (CaptureRootOnce(fs, &bytes) == 0) {
      state.SkipWithError("cannot capture /");
      return;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_CaptureRoot)->Unit(benchmark::kMillisecond);

// The file nodes one capture of `/` read, as absolute paths.
const std::vector<std::string>& RootFileNodes() {
  static const std::vector<std::string>* paths = [] {
    auto* out = new std::vector<std::string>();
    DeviceRootFs fs("/");
    absl::StatusOr<capture::Capture> c = CollectCapture(fs, RootOptions());
    if (c.ok()) {
      for (const auto& [path, node] : c->nodes()) {
        if (node.is_file() && path != "capture.json") out->push_back("/" + path);
      }
    }
    return out;
  }();
  return *paths;
}

void BM_CatRootNodes(benchmark::State& state) {
  const std::vector<std::string>& paths = RootFileNodes();
  std::string buffer(1 << 16, '\0');
  size_t bytes = 0;
  for (auto _ : state) {
    bytes = 0;
    for (const std::string& p : paths) {
      int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      ssize_t n;
      while ((n = read(fd, buffer.data(), buffer.size())) > 0) bytes += static_cast<size_t>(n);
      close(fd);
    }
    benchmark::DoNotOptimize(bytes);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["nodes"] = static_cast<double>(paths.size());
}
BENCHMARK(BM_CatRootNodes)->Unit(benchmark::kMillisecond);

size_t CatFiles(const std::vector<std::string>& paths, std::string& buffer) {
  size_t bytes = 0;
  for (const std::string& p : paths) {
    int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t n;
    while ((n = read(fd, buffer.data(), buffer.size())) > 0) bytes += static_cast<size_t>(n);
    close(fd);
  }
  return bytes;
}

// The target's ratio, measured pairwise: each iteration takes one capture of `/` (collect +
// encode, as the scheduler does) and then cats exactly the file nodes that capture read. On a shared
// machine the processes, and so the kernel's smaps walks, change from one second to the next; separate
// benchmarks (BM_CaptureRoot, BM_CatRootNodes) run seconds apart and see different machines.
// CPU time of this thread (user + the kernel's generating of the nodes) for both.
void BM_CaptureRootAgainstCat(benchmark::State& state) {
  DeviceRootFs fs("/");
  std::string buffer(1 << 16, '\0');
  double capture_s = 0, cat_s = 0;
  size_t nodes = 0;
  for (auto _ : state) {
    const double t0 = bench::ThreadCpuSeconds();
    absl::StatusOr<capture::Capture> c = CollectCapture(fs, RootOptions());
    if (!c.ok()) {
      state.SkipWithError("cannot capture /");
      return;
    }
    std::string blob =
        wire::EncodeStoredCapture(*c, "bench-1", "bench", "2026-12-02T00:00:00Z", wire::kAgentCompressionLevel);
    benchmark::DoNotOptimize(blob);
    const double t1 = bench::ThreadCpuSeconds();
    state.PauseTiming();
    std::vector<std::string> paths;
    for (const auto& [path, node] : c->nodes()) {
      if (node.is_file() && path != "capture.json") paths.push_back("/" + path);
    }
    nodes = paths.size();
    state.ResumeTiming();
    const double t2 = bench::ThreadCpuSeconds();
    benchmark::DoNotOptimize(CatFiles(paths, buffer));
    const double t3 = bench::ThreadCpuSeconds();
    capture_s += t1 - t0;
    cat_s += t3 - t2;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["capture_cpu_ms"] = capture_s * 1e3 / n;
  state.counters["cat_cpu_ms"] = cat_s * 1e3 / n;
  state.counters["ratio"] = cat_s > 0 ? capture_s / cat_s : 0;
  state.counters["nodes"] = static_cast<double>(nodes);
}
BENCHMARK(BM_CaptureRootAgainstCat)->Unit(benchmark::kMillisecond);

// The report's stored form (storage/report_codec.h), as the server keeps it.
size_t StoredReportBytes(const report::Report& r) {
  return storage::CompressReportJson(report::ReportToJson(r, -1)).size();
}

// What a full-smaps capture (--smaps full, sweep --full-smaps) costs against the default one, taken back
// to back on this machine's `/` in each iteration (the order alternating, so neither always sees a warm
// page cache): CPU of this thread for collect + encode (the kernel's smaps walks included), the bytes
// read, the bytes spooled (zstd), and the stored report per capture: the default capture's, the full
// capture's, and the full capture's with its heaps, App Summary and DMA-BUF split taken out (what the
// breakdown itself adds to the report blob).
void BM_FullSmapsAgainstDefaultCapture(benchmark::State& state) {
  DeviceRootFs fs("/");
  double default_s = 0, full_s = 0;
  double default_bytes = 0, full_bytes = 0, default_spooled = 0, full_spooled = 0;
  double default_report = 0, full_report = 0, full_report_without = 0;
  int64_t processes = 0, with_heaps = 0;
  bool full_first = false;
  for (auto _ : state) {
    for (int pass = 0; pass < 2; ++pass) {
      const bool full = (pass == 0) == full_first;
      CollectOptions o = RootOptions();
      o.full_smaps = full;
      const double t0 = bench::ThreadCpuSeconds();
      absl::StatusOr<capture::Capture> c = CollectCapture(fs, o);
      if (!c.ok()) {
        state.SkipWithError("cannot capture /");
        return;
      }
      const std::string blob =
          wire::EncodeStoredCapture(*c, "bench-1", "bench", "2026-12-02T00:00:00Z", wire::kAgentCompressionLevel);
      const double t1 = bench::ThreadCpuSeconds();
      state.PauseTiming();
      report::Report r = accounting::Account(*c);
      (full ? full_s : default_s) += t1 - t0;
      (full ? full_bytes : default_bytes) += static_cast<double>(c->ContentBytes());
      (full ? full_spooled : default_spooled) += static_cast<double>(blob.size());
      (full ? full_report : default_report) += static_cast<double>(StoredReportBytes(r));
      if (full) {
        processes += static_cast<int64_t>(r.processes.size());
        for (auto& [pid, p] : r.processes) {
          with_heaps += p.heaps.has_value();
          p.heaps.reset();
          p.app_summary.reset();
          p.dma_by_exporter_kb.reset();
        }
        full_report_without += static_cast<double>(StoredReportBytes(r));
      }
      state.ResumeTiming();
    }
    full_first = !full_first;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["default_cpu_ms"] = default_s * 1e3 / n;
  state.counters["full_cpu_ms"] = full_s * 1e3 / n;
  state.counters["cpu_ratio"] = default_s > 0 ? full_s / default_s : 0;
  state.counters["default_read_mb"] = default_bytes / n / 1e6;
  state.counters["full_read_mb"] = full_bytes / n / 1e6;
  state.counters["default_spooled_kb"] = default_spooled / n / 1e3;
  state.counters["full_spooled_kb"] = full_spooled / n / 1e3;
  state.counters["default_report_b"] = default_report / n;
  state.counters["full_report_b"] = full_report / n;
  state.counters["full_report_without_heaps_b"] = full_report_without / n;
  state.counters["processes"] = static_cast<double>(processes) / n;
  state.counters["with_heaps"] = static_cast<double>(with_heaps) / n;
}
BENCHMARK(BM_FullSmapsAgainstDefaultCapture)->Unit(benchmark::kMillisecond)->Iterations(6);

// "VmHWM:     1234 kB" of /proc/<pid>/status, in kB (0 when unreadable).
long StatusKb(const char* key, const std::string& status = "/proc/self/status") {
  std::ifstream in(status);
  std::string line;
  const size_t key_len = std::strlen(key);
  while (std::getline(in, line)) {
    if (line.compare(0, key_len, key) == 0) return std::atol(line.c_str() + key_len + 1);
  }
  return 0;
}

int CaptureLoop(int captures, const std::string& root) {
  // RssAnon is the heap's part: the file-backed rest is this binary's and its libraries' pages.
  std::printf("before: VmHWM %ld kB, VmRSS %ld kB, RssAnon %ld kB\n", StatusKb("VmHWM"), StatusKb("VmRSS"),
              StatusKb("RssAnon"));
  DeviceRootFs fs(root);
  size_t content = 0;
  for (int i = 1; i <= captures; ++i) {
    size_t stored = CaptureRootOnce(fs, &content);
    if (stored == 0) {
      std::fprintf(stderr, "capture %d of %s failed\n", i, root.c_str());
      return 1;
    }
    if (i == 1 || i == 10 || i == 100 || i == 500 || i == captures) {
      // malloc's bytes in use tell a leak (they grow) from fragmentation (RssAnon grows, they do not).
      const struct mallinfo2 heap = mallinfo2();
      std::printf(
          "after capture %d: VmHWM %ld kB, VmRSS %ld kB, RssAnon %ld kB, malloc in use %zu kB "
          "(capture %zu bytes, stored %zu)\n",
          i, StatusKb("VmHWM"), StatusKb("VmRSS"), StatusKb("RssAnon"), heap.uordblks / 1024, content, stored);
    }
  }
  return 0;
}

std::string BesideThisBinary(const std::string& name) {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? name : (self.parent_path() / name).string();
}

int AgentRss(const std::string& agent) {
  namespace fs = std::filesystem;
  char dir_template[] = "/tmp/memfleet-agent-rss-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string dir = dir_template;
  int rc = 1;
  {
    absl::StatusOr<std::unique_ptr<server::LabServer>> lab = server::LabServer::Start(dir + "/lab.db");
    if (!lab.ok()) {
      std::fprintf(stderr, "cannot start a LabServer: %s\n", std::string(lab.status().message()).c_str());
      fs::remove_all(dir);
      return 1;
    }
    const std::string log = dir + "/agent.log";
    std::vector<std::string> args = {agent,      "--once",          "--root",         "/",
                                     "--server", (*lab)->address(), "--device-id",    "rss-bench",
                                     "--spool",  dir + "/spool",    "--once-timeout", "30"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    pid_t pid = 0;
    const int spawn_error = posix_spawn(&pid, agent.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawn_error != 0) {
      std::fprintf(stderr, "cannot run %s: %s\n", agent.c_str(), std::strerror(spawn_error));
    } else {
      // ru_maxrss is the peak of the whole; the split is sampled, so it is a lower bound of each part.
      const std::string status = "/proc/" + std::to_string(pid) + "/status";
      long anon = 0, file = 0, threads = 0, hwm = 0;
      int wstatus = 0;
      struct rusage usage {};
      while (true) {
        anon = std::max(anon, StatusKb("RssAnon", status));
        file = std::max(file, StatusKb("RssFile", status));
        threads = std::max(threads, StatusKb("Threads", status));
        hwm = std::max(hwm, StatusKb("VmHWM", status));
        const pid_t done = wait4(pid, &wstatus, WNOHANG, &usage);
        if (done == pid || done < 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      const bool acked = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
      // ru_maxrss of a spawned child is at least the RSS of this (large) process when it spawned: exec
      // records the old address space's peak, and a posix_spawn child's old address space is ours. The
      // agent's own peak is its VmHWM (sampled, so it may miss the last 2 ms; GNU time's %M, from a
      // small parent, is exact: bench/agent-footprint).
      std::printf(
          "memfleet-agent --once on /: %s, peak RSS %ld kB (VmHWM; ru_maxrss %ld kB); largest seen: "
          "RssAnon %ld kB, RssFile %ld kB, threads %ld\n",
          acked ? "capture acked" : "FAILED", hwm, usage.ru_maxrss, anon, file, threads);
      std::fflush(stdout);
      if (!acked) {
        std::ifstream in(log);
        std::fprintf(stderr, "%s", std::string(std::istreambuf_iterator<char>(in), {}).c_str());
      }
      rc = acked ? 0 : 1;
    }
  }
  fs::remove_all(dir);
  return rc;
}

}  // namespace
}  // namespace memfleet::agent

int main(int argc, char** argv) {
  int captures = 0;
  std::string root = "/";
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--captures=", 11) == 0) {
      captures = std::atoi(argv[i] + 11);
    } else if (std::strncmp(argv[i], "--root=", 7) == 0) {
      root = argv[i] + 7;
    } else if (std::strcmp(argv[i], "--agent-rss") == 0) {
      return memfleet::agent::AgentRss(memfleet::agent::BesideThisBinary("memfleet-agent"));
    } else if (std::strncmp(argv[i], "--agent-rss=", 12) == 0) {
      return memfleet::agent::AgentRss(argv[i] + 12);
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (captures > 0) return memfleet::agent::CaptureLoop(captures, root);
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 1;
  memfleet::bench::AddMachineContext();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
