// What a benchmark's numbers depend on besides the code, printed in its context block so that two
// machines' runs can be compared: the CPU model and family/model/stepping, the widest vector unit glibc's memchr can
// use, the page size and the transparent huge page mode.
//
//   benchmark::Initialize(&argc, argv);
//   memfleet::bench::AddMachineContext();
//   benchmark::RunSpecifiedBenchmarks();
#ifndef MEMFLEET_BENCH_SUPPORT_MACHINE_CONTEXT_H_
#define MEMFLEET_BENCH_SUPPORT_MACHINE_CONTEXT_H_

#include <time.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "benchmark/benchmark.h"

namespace memfleet::bench {

// The value of the first "key\t: value" line of a /proc/cpuinfo-like text, or "".
inline std::string CpuinfoValue(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.compare(0, key.size(), key) != 0) continue;
    const size_t colon = line.find(':', key.size());
    if (colon == std::string::npos) continue;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

inline std::string ReadWholeFile(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline bool HasFlag(const std::string& flags, const char* flag) {
  return (" " + flags + " ").find(std::string(" ") + flag + " ") != std::string::npos;
}

// glibc's memchr picks its variant from these CPU features (sysdeps/x86_64/multiarch): the EVEX
// (AVX-512VL/BW) one, else AVX2, else SSE2. The baseline of the engine's ratio is that memchr, so
// its width is part of the ratio.
inline std::string MemchrVectorUnit(const std::string& flags) {
  if (HasFlag(flags, "avx512vl") && HasFlag(flags, "avx512bw") && HasFlag(flags, "bmi2")) {
    return "evex (avx512vl+bw, 256-bit)";
  }
  if (HasFlag(flags, "avx2")) return "avx2 (256-bit)";
  return "sse2 (128-bit)";
}

inline std::string TransparentHugePages() {
  const std::string mode = ReadWholeFile("/sys/kernel/mm/transparent_hugepage/enabled");
  const size_t open = mode.find('[');
  const size_t close = mode.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return "unknown";
  return mode.substr(open + 1, close - open - 1);
}

inline void AddMachineContext() {
  const std::string cpuinfo = ReadWholeFile("/proc/cpuinfo");
  const std::string model = CpuinfoValue(cpuinfo, "model name");
  benchmark::AddCustomContext("cpu_model", model.empty() ? "unknown" : model);
  // Virtual machines often report a generic model name; family/model/stepping still tell the core.
  benchmark::AddCustomContext("cpu_family_model_stepping", CpuinfoValue(cpuinfo, "cpu family") + "/" +
                                                               CpuinfoValue(cpuinfo, "model\t") + "/" +
                                                               CpuinfoValue(cpuinfo, "stepping"));
  benchmark::AddCustomContext("memchr", MemchrVectorUnit(CpuinfoValue(cpuinfo, "flags")));
  benchmark::AddCustomContext("page_size", std::to_string(sysconf(_SC_PAGESIZE)));
  benchmark::AddCustomContext("transparent_hugepage", TransparentHugePages());
}

// CPU time of the calling thread, in seconds: what a pairwise benchmark compares.
inline double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace memfleet::bench

#endif  // MEMFLEET_BENCH_SUPPORT_MACHINE_CONTEXT_H_
