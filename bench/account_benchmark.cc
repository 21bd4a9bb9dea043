// The engine against its floor (docs/performance.md): accounting a capture of 300 processes with full
// smaps, built from AOSP's real testdata1/smaps (1.78 MB, 2760 VMAs) and a sample capture, against one
// memchr pass over the same text (what `wc -l` does: the practical floor of reading it once). Quote the
// ratio BM_AccountAgainstCountLines prints (both measured in each iteration), with the CPU in the
// context block: the ratio moves with the machine (docs/performance.md, "Engine").
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/collector.h"
#include "bench/support/machine_context.h"
#include "benchmark/benchmark.h"
#include "accounting/account.h"
#include "capture/capture_header.h"
#include "accounting/dumpsys_text.h"
#include "accounting/kernel_config.h"
#include "accounting/mtk_rss_pid.h"
#include "accounting/proc_identity.h"
#include "accounting/fdinfo_parser.h"
#include "accounting/gpu_memory_parser.h"
#include "accounting/meminfo_parser.h"
#include "accounting/native_heap_dump.h"
#include "accounting/smaps_parser.h"
#include "accounting/sysfs_value.h"
#include "tests/support/load_tree.h"
#include "tests/support/test_paths.h"

namespace memfleet::accounting {
namespace {

std::string Data(const std::string& rel) { return testing::TestData(rel); }

// qcom-sm8450's whole-device nodes plus 300 processes, each with AOSP's full smaps.
const Capture& ThreeHundredProcesses() {
  static const Capture* capture = [] {
    agent::CaptureTreeFs fs(Data("captures/qcom-sm8450/tree"));
    absl::StatusOr<Capture> base = agent::CollectCapture(fs, agent::CollectOptions{});
    auto* c = new Capture(base.ok() ? *base : Capture());
    std::string smaps = testing::ReadFileForTest(Data("aosp/system/memory/libmeminfo/testdata1/smaps"));
    for (int i = 0; i < 300; ++i) {
      std::string dir = "proc/" + std::to_string(40000 + i);
      c->AddFile(dir + "/smaps", smaps);
      c->AddFile(dir + "/cmdline", "com.example.app" + std::to_string(i));
      c->AddFile(dir + "/oom_score_adj", "0\n");
    }
    return c;
  }();
  return *capture;
}

size_t CountLines(const Capture& c) {
  size_t lines = 0;
  for (const auto& [path, node] : c.nodes()) {
    const char* p = node.content.data();
    const char* end = p + node.content.size();
    while ((p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)))) != nullptr) {
      ++lines;
      ++p;
    }
  }
  return lines;
}

void BM_CountLines_300Processes(benchmark::State& state) {
  const Capture& c = ThreeHundredProcesses();
  for (auto _ : state) benchmark::DoNotOptimize(CountLines(c));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.ContentBytes()));
}
BENCHMARK(BM_CountLines_300Processes)->Unit(benchmark::kMillisecond);

void BM_Account_300Processes(benchmark::State& state) {
  const Capture& c = ThreeHundredProcesses();
  for (auto _ : state) {
    Report r = Account(c);
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.ContentBytes()));
}
BENCHMARK(BM_Account_300Processes)->Unit(benchmark::kMillisecond);

// The target's ratio, measured pairwise: each iteration accounts the capture and then counts its
// lines, so a machine shared with other work slows both alike (separate benchmarks run seconds apart).
void BM_AccountAgainstCountLines(benchmark::State& state) {
  const Capture& c = ThreeHundredProcesses();
  double account_s = 0, count_lines_s = 0;
  for (auto _ : state) {
    const double t0 = bench::ThreadCpuSeconds();
    Report r = Account(c);
    benchmark::DoNotOptimize(r);
    const double t1 = bench::ThreadCpuSeconds();
    benchmark::DoNotOptimize(CountLines(c));
    const double t2 = bench::ThreadCpuSeconds();
    account_s += t1 - t0;
    count_lines_s += t2 - t1;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["account_cpu_ms"] = account_s * 1e3 / n;
  state.counters["count_lines_cpu_ms"] = count_lines_s * 1e3 / n;
  state.counters["ratio"] = count_lines_s > 0 ? account_s / count_lines_s : 0;
  state.counters["input_mb"] = static_cast<double>(c.ContentBytes()) / 1e6;
}
BENCHMARK(BM_AccountAgainstCountLines)->Unit(benchmark::kMillisecond);

// The same pair on one process's smaps (1.78 MB, which stays in cache): memchr is then no longer
// bound by memory bandwidth, so this ratio shows how much of the one above is the machine's memory
// rather than the parser.
void BM_SmapsSummaryAgainstCountLinesInCache(benchmark::State& state) {
  static const std::string smaps = testing::ReadFileForTest(Data("aosp/system/memory/libmeminfo/testdata1/smaps"));
  double parse_s = 0, count_lines_s = 0;
  for (auto _ : state) {
    const double t0 = bench::ThreadCpuSeconds();
    benchmark::DoNotOptimize(ParseSmapsSummary(smaps, GpuDeviceNaming::kKgsl));
    const double t1 = bench::ThreadCpuSeconds();
    size_t lines = 0;
    for (const char* p = smaps.data();
         (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(smaps.data() + smaps.size() - p)))) !=
         nullptr;
         ++p) {
      ++lines;
    }
    benchmark::DoNotOptimize(lines);
    const double t2 = bench::ThreadCpuSeconds();
    parse_s += t1 - t0;
    count_lines_s += t2 - t1;
  }
  state.counters["ratio"] = count_lines_s > 0 ? parse_s / count_lines_s : 0;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * smaps.size()));
}
BENCHMARK(BM_SmapsSummaryAgainstCountLinesInCache)->Unit(benchmark::kMicrosecond);

// Per-parser throughput (MB/s) on real text: AOSP's testdata1 for smaps, and for the other parsers
// every node of that kind in the five sample capture trees, parsed one node at a time as Account does.
void BM_ParseSmaps(benchmark::State& state) {
  std::string text = testing::ReadFileForTest(Data("aosp/system/memory/libmeminfo/testdata1/smaps"));
  for (auto _ : state) benchmark::DoNotOptimize(ParseSmaps(text));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseSmaps);

// The engine's pass: sums, GPU-device Pss and dma-buf mappings, no Vma per mapping.
void BM_ParseSmapsSummary(benchmark::State& state) {
  std::string text = testing::ReadFileForTest(Data("aosp/system/memory/libmeminfo/testdata1/smaps"));
  for (auto _ : state) benchmark::DoNotOptimize(ParseSmapsSummary(text, GpuDeviceNaming::kKgsl));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseSmapsSummary);

// The rollup parser over a full smaps (SmapsOrRollupFromFile semantics) and over real rollups.
void BM_ParseSmapsRollup(benchmark::State& state) {
  std::string text = testing::ReadFileForTest(Data("aosp/system/memory/libmeminfo/testdata1/smaps"));
  for (auto _ : state) benchmark::DoNotOptimize(ParseSmapsRollup(text));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseSmapsRollup);

// The sample-capture nodes whose path matches `match`.
std::vector<std::string> SampleNodes(bool (*match)(const std::string& path)) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(Data("captures"))) {
    if (e.is_regular_file() && match(e.path().string())) out.push_back(testing::ReadFileForTest(e.path().string()));
  }
  return out;
}

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

template <typename Parse>
void ParseEach(benchmark::State& state, const std::vector<std::string>& nodes, Parse parse) {
  if (nodes.empty()) {
    state.SkipWithError("no such node in the sample captures");
    return;
  }
  size_t bytes = 0;
  for (const std::string& n : nodes) bytes += n.size();
  for (auto _ : state) {
    for (const std::string& n : nodes) benchmark::DoNotOptimize(parse(n));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["nodes"] = static_cast<double>(nodes.size());
}

void BM_ParseSmapsRollupNodes(benchmark::State& state) {
  static const auto nodes = SampleNodes([](const std::string& p) { return EndsWith(p, "/smaps_rollup"); });
  ParseEach(state, nodes, [](std::string_view t) { return ParseSmapsRollup(t); });
}
BENCHMARK(BM_ParseSmapsRollupNodes);

void BM_ParseMapsNodes(benchmark::State& state) {
  static const auto nodes = SampleNodes([](const std::string& p) { return EndsWith(p, "/maps"); });
  ParseEach(state, nodes, [](std::string_view t) { return ParseMaps(t); });
}
BENCHMARK(BM_ParseMapsNodes);

void BM_ParseMeminfo(benchmark::State& state) {
  static const auto nodes = SampleNodes([](const std::string& p) { return EndsWith(p, "/proc/meminfo"); });
  ParseEach(state, nodes, [](std::string_view t) { return ParseMeminfo(t); });
}
BENCHMARK(BM_ParseMeminfo);

void BM_ParseFdinfoNodes(benchmark::State& state) {
  static const auto nodes = SampleNodes([](const std::string& p) { return p.find("/fdinfo/") != std::string::npos; });
  ParseEach(state, nodes, [](std::string_view t) { return ParseFdinfo(t); });
}
BENCHMARK(BM_ParseFdinfoNodes);

void BM_ParseDmabufSizeNodes(benchmark::State& state) {
  static const auto nodes = SampleNodes(
      [](const std::string& p) { return p.find("/dmabuf/buffers/") != std::string::npos && EndsWith(p, "/size"); });
  ParseEach(state, nodes, [](std::string_view t) { return ParseSysfsUint(t); });
}
BENCHMARK(BM_ParseDmabufSizeNodes);

void BM_ParseMtkGpuMemory(benchmark::State& state) {
  static const auto nodes = SampleNodes([](const std::string& p) { return EndsWith(p, "/mtk_mali/gpu_memory"); });
  ParseEach(state, nodes, [](std::string_view t) { return ParseMtkGpuMemory(t); });
}
BENCHMARK(BM_ParseMtkGpuMemory);

void BM_ParseXgpuGpuMemory(benchmark::State& state) {
  static const auto nodes = SampleNodes([](const std::string& p) { return EndsWith(p, "/xgpu/gpu_memory"); });
  ParseEach(state, nodes, [](std::string_view t) { return ParseXgpuGpuMemory(t); });
}
BENCHMARK(BM_ParseXgpuGpuMemory);

void BM_ParseNativeHeapDumps(benchmark::State& state) {
  static const auto nodes = SampleNodes(
      [](const std::string& p) { return p.find("/cmd/native_heap@") != std::string::npos && !EndsWith(p, ".err"); });
  ParseEach(state, nodes, [](std::string_view t) { return ParseNativeHeapDump(t); });
}
BENCHMARK(BM_ParseNativeHeapDumps);

void BM_ParseMtkRssPidNodes(benchmark::State& state) {
  static const auto nodes = SampleNodes([](const std::string& p) {
    return p.find("/proc/dma_heap/rss_pid@") != std::string::npos && !EndsWith(p, ".err");
  });
  ParseEach(state, nodes, [](std::string_view t) { return ParseMtkRssPid(t); });
}
BENCHMARK(BM_ParseMtkRssPidNodes);

void BM_ParseStatusNames(benchmark::State& state) {
  static const auto nodes = SampleNodes([](const std::string& p) { return EndsWith(p, "/status"); });
  ParseEach(state, nodes, [](std::string_view t) { return ParseStatusName(t); });
}
BENCHMARK(BM_ParseStatusNames);

void BM_ParseCmdlineNames(benchmark::State& state) {
  static const auto nodes = SampleNodes([](const std::string& p) { return EndsWith(p, "/cmdline"); });
  ParseEach(state, nodes, [](std::string_view t) { return ParseCmdlineName(t); });
}
BENCHMARK(BM_ParseCmdlineNames);

void BM_ParseOomScoreAdj(benchmark::State& state) {
  static const auto nodes = SampleNodes([](const std::string& p) { return EndsWith(p, "/oom_score_adj"); });
  ParseEach(state, nodes, [](std::string_view t) { return ParseOomScoreAdj(t); });
}
BENCHMARK(BM_ParseOomScoreAdj);

void BM_ParseCaptureHeaders(benchmark::State& state) {
  static const auto nodes = SampleNodes([](const std::string& p) { return EndsWith(p, "/tree/capture.json"); });
  ParseEach(state, nodes, [](std::string_view t) { return ParseCaptureHeader(t); });
}
BENCHMARK(BM_ParseCaptureHeaders);

// Bytes are the gzip bytes as captured; the time includes inflating them.
void BM_ParseKernelConfigGz(benchmark::State& state) {
  static const auto nodes = SampleNodes([](const std::string& p) { return EndsWith(p, "/proc/config.gz"); });
  ParseEach(state, nodes, [](std::string_view t) { return ParseKernelConfigGz(t); });
}
BENCHMARK(BM_ParseKernelConfigGz);

void BM_ParseDumpsysMeminfo(benchmark::State& state) {
  static const std::vector<std::string> nodes = {testing::ReadFileForTest(Data("dumpsys/meminfo_summary_a14.txt"))};
  ParseEach(state, nodes, [](std::string_view t) { return ParseDumpsysMeminfo(t); });
}
BENCHMARK(BM_ParseDumpsysMeminfo);

void BM_AccountSampleCapture(benchmark::State& state) {
  agent::CaptureTreeFs fs(Data("captures/qcom-sm8450/tree"));
  absl::StatusOr<Capture> c = agent::CollectCapture(fs, agent::CollectOptions{});
  if (!c.ok()) {
    state.SkipWithError("cannot collect the sample capture");
    return;
  }
  for (auto _ : state) {
    Report r = Account(*c);
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c->ContentBytes()));
}
BENCHMARK(BM_AccountSampleCapture)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace memfleet::accounting

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  memfleet::bench::AddMachineContext();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
