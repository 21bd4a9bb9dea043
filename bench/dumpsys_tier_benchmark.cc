// What a phone read as shell costs the server (docs/performance.md, "Dumpsys tier"): parsing the
// "Total PSS by process" table of a 500-process `dumpsys meminfo` text (tests/data/dumpsys/
// five_hundred_processes.txt), against two baselines measured in the same iterations (thread CPU time):
// one memchr pass for '\n' over the same text (the floor of reading it once), and what the kernel tier
// parses for the same 500 processes at the least, one smaps_rollup each (AOSP's rollup fixture).
// The texts are farm-shaped: 16 captures whose every figure moves by up to ±8% from one to the next.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "accounting/dumpsys_processes.h"
#include "accounting/smaps_parser.h"
#include "bench/support/machine_context.h"
#include "benchmark/benchmark.h"
#include "tests/support/load_tree.h"
#include "tests/support/test_paths.h"

namespace memfleet::accounting {
namespace {

// "%,dK", as dumpsys prints a figure.
std::string GroupedKb(int64_t kb) {
  std::string digits = std::to_string(kb);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out + "K";
}

// The fixture's text with every process line's figure moved by a factor of capture `n`'s own: the same
// processes, other numbers, as consecutive captures of one phone give them.
std::vector<std::string> MovingTexts() {
  const std::string text = testing::ReadFileForTest(testing::TestData("dumpsys/five_hundred_processes.txt"));
  absl::StatusOr<DumpsysProcesses> parsed = ParseDumpsysProcesses(text);
  std::vector<std::string> out;
  if (!parsed.ok()) return out;
  for (int n = 0; n < 16; ++n) {
    std::string t = "Total PSS by process:\n";
    for (const DumpsysProcessLine& p : parsed->processes) {
      const int64_t moved = p.total_pss_kb * (92 + (p.pid * 7 + n * 13) % 17) / 100;
      absl::StrAppend(&t, "    ", GroupedKb(moved), ": ", p.name, " (pid ", p.pid);
      if (p.oom_adj) absl::StrAppend(&t, " state 2 oom ", *p.oom_adj);
      t += ")\n";
    }
    out.push_back(std::move(t));
  }
  return out;
}

size_t CountLines(const std::string& s) {
  size_t lines = 0;
  for (const char* p = s.data();
       (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(s.data() + s.size() - p)))) != nullptr;
       ++p) {
    ++lines;
  }
  return lines;
}

void BM_DumpsysProcesses500AgainstBaselines(benchmark::State& state) {
  static const std::vector<std::string> texts = MovingTexts();
  static const std::string rollup = testing::ReadFileForTest(testing::TestData(
      "aosp/system/memory/libmeminfo/_inline/libmeminfo_test/ProcMemInfo.SmapsOrRollupTest/smaps_rollup"));
  if (texts.empty()) {
    state.SkipWithError("tests/data/dumpsys/five_hundred_processes.txt does not parse");
    return;
  }
  double parse_s = 0, count_lines_s = 0, rollups_s = 0;
  size_t bytes = 0, i = 0;
  for (auto _ : state) {
    const std::string& text = texts[i++ % texts.size()];
    const double t0 = bench::ThreadCpuSeconds();
    absl::StatusOr<DumpsysProcesses> parsed = ParseDumpsysProcesses(text);
    benchmark::DoNotOptimize(parsed);
    const double t1 = bench::ThreadCpuSeconds();
    benchmark::DoNotOptimize(CountLines(text));
    const double t2 = bench::ThreadCpuSeconds();
    for (int p = 0; p < 500; ++p) benchmark::DoNotOptimize(ParseSmapsRollup(rollup));
    const double t3 = bench::ThreadCpuSeconds();
    if (!parsed.ok() || parsed->processes.size() != 500) {
      state.SkipWithError("a moved text did not give its 500 processes");
      return;
    }
    parse_s += t1 - t0;
    count_lines_s += t2 - t1;
    rollups_s += t3 - t2;
    bytes += text.size();
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["parse_cpu_us"] = parse_s * 1e6 / n;
  state.counters["count_lines_cpu_us"] = count_lines_s * 1e6 / n;
  state.counters["rollups_500_cpu_us"] = rollups_s * 1e6 / n;
  state.counters["ratio_to_count_lines"] = count_lines_s > 0 ? parse_s / count_lines_s : 0;
  state.counters["ratio_to_rollups"] = rollups_s > 0 ? parse_s / rollups_s : 0;
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_DumpsysProcesses500AgainstBaselines)->Unit(benchmark::kMicrosecond);

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
