// The engine against its floor (issue 6): accounting a capture of 300 processes with full smaps, built
// from AOSP's real testdata1/smaps (1.78 MB, 2760 VMAs) and a sample capture, against one memchr pass over
// the same text (what `wc -l` does: the practical floor of reading it once). Quote the ratio of
// BM_Account_300Processes to BM_CountLines_300Processes from the same run.
#include <cstring>
#include <string>

#include "agent/capture_tree_fs.h"
#include "agent/collector.h"
#include "benchmark/benchmark.h"
#include "server/accounting/account.h"
#include "server/accounting/meminfo_parser.h"
#include "server/accounting/smaps_parser.h"
#include "tests/support/load_tree.h"

namespace memfleet::accounting {
namespace {

std::string Data(const std::string& rel) { return std::string(MEMFLEET_TEST_DATA_DIR) + "/" + rel; }

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

// Per-parser throughput (MB/s) on real text.
void BM_ParseSmaps(benchmark::State& state) {
  std::string text = testing::ReadFileForTest(Data("aosp/system/memory/libmeminfo/testdata1/smaps"));
  for (auto _ : state) benchmark::DoNotOptimize(ParseSmaps(text));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseSmaps);

void BM_ParseSmapsRollup(benchmark::State& state) {
  std::string text = testing::ReadFileForTest(Data("aosp/system/memory/libmeminfo/testdata1/smaps"));
  for (auto _ : state) benchmark::DoNotOptimize(ParseSmapsRollup(text));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseSmapsRollup);

void BM_ParseMeminfo(benchmark::State& state) {
  std::string text = testing::ReadFileForTest(Data("captures/qcom-sm8450/tree/proc/meminfo"));
  for (auto _ : state) benchmark::DoNotOptimize(ParseMeminfo(text));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseMeminfo);

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

BENCHMARK_MAIN();
