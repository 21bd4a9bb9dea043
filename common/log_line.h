// The one operational log of memfleet's programs: a line on stderr, "<UTC time, ms> <program>: <message>",
// written whole under one lock so that lines from different threads never interleave. server::LogLine
// and agent::LogLine name their program and call WriteLogLine.
//
//   WriteLogLine("memfleet-agent", "connected to lab:7070");
//   // 2026-12-02T16:15:00.123Z memfleet-agent: connected to lab:7070
//
// Header-only; thread-safe.
#ifndef MEMFLEET_COMMON_LOG_LINE_H_
#define MEMFLEET_COMMON_LOG_LINE_H_

#include <time.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

#include "absl/synchronization/mutex.h"
#include "common/utc_time.h"

namespace memfleet {

// The line for `message` logged by `program` at `at`, newline included (exposed for tests).
inline std::string FormatLogLine(std::string_view program, std::string_view message,
                                 std::chrono::system_clock::time_point at) {
  std::string line = FormatUtcMillis(at);
  line.reserve(message.size() + program.size() + 32);
  line.push_back(' ');
  line.append(program.data(), program.size());
  line.append(": ");
  line.append(message.data(), message.size());
  line.push_back('\n');
  return line;
}

inline void WriteLogLine(std::string_view program, std::string_view message) {
  // Guards stderr: one fwrite per line, never two lines interleaved. Never destroyed: threads may still
  // log while the process exits.
  static absl::Mutex* const mu = new absl::Mutex;
  const std::string line = FormatLogLine(program, message, std::chrono::system_clock::now());
  absl::MutexLock lock(mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace memfleet

#endif  // MEMFLEET_COMMON_LOG_LINE_H_
