// A sample capture as the same device would give it some minutes later — free memory and every
// process's first Rss moved, as on a live phone — for tests and benchmarks of how consecutive captures
// of one device are stored (deltas, compressed reports).
#ifndef MEMFLEET_TESTS_SUPPORT_MOVING_CAPTURE_H_
#define MEMFLEET_TESTS_SUPPORT_MOVING_CAPTURE_H_

#include <cstdlib>
#include <string>

#include "capture/capture.h"

namespace memfleet::testing {

// Adds `delta` to the first number after `key` in `text` (the text unchanged when the key is absent).
inline std::string BumpNumberAfter(std::string text, const std::string& key, long delta) {
  size_t at = text.find(key);
  if (at == std::string::npos) return text;
  size_t start = text.find_first_of("0123456789", at + key.size());
  if (start == std::string::npos) return text;
  size_t end = text.find_first_not_of("0123456789", start);
  long value = std::strtol(text.substr(start, end - start).c_str(), nullptr, 10);
  return text.replace(start, end - start, std::to_string(value + delta));
}

inline bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// `sample` `minutes` later: MemFree down, Cached up, every smaps' first Rss up.
inline capture::Capture Later(const capture::Capture& sample, int minutes) {
  capture::Capture c = sample;
  for (const auto& [path, node] : sample.nodes()) {
    if (!node.is_file()) continue;
    if (path == "proc/meminfo") {
      c.AddFile(path,
                BumpNumberAfter(BumpNumberAfter(node.content, "MemFree:", -12L * minutes), "Cached:", 8L * minutes));
    } else if (EndsWith(path, "/smaps") || EndsWith(path, "/smaps_rollup")) {
      c.AddFile(path, BumpNumberAfter(node.content, "Rss:", 4L * minutes));
    }
  }
  return c;
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_MOVING_CAPTURE_H_
