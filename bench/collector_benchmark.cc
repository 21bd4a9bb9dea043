// Collecting a recorded capture tree (qcom-sm8450, ~300 nodes of /proc and /sys) through CaptureTreeFs,
// against the floor: walking the same tree and reading every file, with no allowlist, no containment
// checks and no Capture. The ratio of the two is the collector's overhead.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "agent/capture_tree_fs.h"
#include "agent/collector.h"
#include "benchmark/benchmark.h"

namespace memfleet::agent {
namespace {

std::string Tree() { return std::string(MEMFLEET_TEST_DATA_DIR) + "/captures/qcom-sm8450/tree"; }

void BM_CollectCaptureTree(benchmark::State& state) {
  CaptureTreeFs fs(Tree());
  size_t bytes = 0;
  size_t nodes = 0;
  for (auto _ : state) {
    absl::StatusOr<accounting::Capture> c = CollectCapture(fs, CollectOptions{});
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

}  // namespace
}  // namespace memfleet::agent

BENCHMARK_MAIN();
