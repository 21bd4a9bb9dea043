// A sample capture as the same device would give it some minutes later — free memory and every
// process's first Rss moved (Later), or every figure a phone moves (Churned) — for tests and benchmarks of
// how consecutive captures of one device are stored (deltas, compressed reports).
#ifndef MEMFLEET_TESTS_SUPPORT_MOVING_CAPTURE_H_
#define MEMFLEET_TESTS_SUPPORT_MOVING_CAPTURE_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

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

// ---- a phone's churn ----
//
// What changes on a phone between two captures minutes apart (Churned), each figure's change drawn afresh
// for each capture, so that any two captures — a delta and its keyframe — differ in every figure that moves:
// - kHeaps: the page cache, free memory and the kernel's slabs are reclaimed and refilled all the time, so
//   every counter of meminfo moves (not its sizes: MemTotal, SwapTotal, CommitLimit, VmallocTotal,
//   CmaTotal), by up to ±3%; a running process's heaps grow and are trimmed, so every figure of each
//   anonymous mapping ([heap], [anon:...], [stack], inode 0) and of each smaps_rollup moves by up to ±3%,
//   and each status' VmRSS, RssAnon and VmSwap by up to ±2%. File-backed mappings stay as they were: a
//   phone whose processes all stay alive.
// - kEverything: the same, and every Pss line of every mapping moves too (Pss, Pss_Dirty, Pss_Anon,
//   Pss_File, Pss_Shmem, SwapPss). A Pss is a mapping's pages divided among the processes that map them,
//   so a process that starts or dies (an app launched, a cached app killed) moves the Pss of every mapping
//   its libraries share with the others — all of zygote's, in every app. On a phone in use, or under a
//   test that opens apps, that happens within minutes: every figure a capture holds moves.
// A small figure moves within ±4 kB (a page); a figure of 0 stays 0 (nothing resident stays so). How far a figure
// moves hardly matters to what is stored: any change of a 4-7 digit figure rewrites its last digits, which
// is what a delta or a compressor pays for; how many figures move is what matters.
enum class Churn { kHeaps, kEverything };

// A hash of (seq, where, line) to pick each figure's change, the same for the same arguments.
inline uint64_t ChurnHash(uint64_t seq, std::string_view where, uint64_t line) {
  uint64_t h = 1469598103934665603ULL ^ (seq * 0x9E3779B97F4A7C15ULL) ^ (line * 0xC2B2AE3D27D4EB4FULL);
  for (char c : where) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDULL;
  h ^= h >> 33;
  return h;
}

// True when the line's key (up to ':') is one of the space-separated `keys`.
inline bool KeyIn(std::string_view line, std::string_view keys) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view key = line.substr(0, colon);
  for (size_t at = 0; at < keys.size();) {
    size_t end = keys.find(' ', at);
    if (end == std::string_view::npos) end = keys.size();
    if (keys.substr(at, end - at) == key) return true;
    at = end + 1;
  }
  return false;
}

// `text` with the first number of each line whose key is in `keys` (anonymous mappings' lines also those in
// `anon_keys`) moved as Churned says; other lines as they were. A smaps mapping's header line (an address
// range) says whether the lines after it are of an anonymous mapping.
inline std::string ChurnLines(const std::string& text, int seq, std::string_view where, std::string_view keys,
                              std::string_view anon_keys, long permille) {
  std::string out;
  out.reserve(text.size() + 64);
  bool anonymous = true;  // smaps_rollup, status and meminfo have no mapping header: every key applies
  uint64_t line_no = 0;
  for (size_t at = 0; at < text.size(); ++line_no) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + at, end - at);
    const size_t colon = line.find(':');
    const bool header = !line.empty() && line.find('-') != std::string_view::npos &&
                        (colon == std::string_view::npos || line.find('-') < colon) &&
                        line.find_first_not_of("0123456789abcdef") == line.find('-');
    if (header) {
      // "start-end perms offset dev inode [path]": anonymous without a path or with [heap], [anon:...], [stack].
      const size_t path_at = line.find_first_of("/[");
      anonymous = path_at == std::string_view::npos || line[path_at] == '[';
    }
    const bool moves = !header && (KeyIn(line, keys) || (anonymous && KeyIn(line, anon_keys)));
    const size_t start = moves ? line.find_first_of("0123456789", colon) : std::string_view::npos;
    if (start == std::string_view::npos) {
      out.append(line);
    } else {
      size_t digits_end = line.find_first_not_of("0123456789", start);
      if (digits_end == std::string_view::npos) digits_end = line.size();
      const long value = std::strtol(std::string(line.substr(start, digits_end - start)).c_str(), nullptr, 10);
      long moved = value;
      if (value > 0) {
        const uint64_t h = ChurnHash(static_cast<uint64_t>(seq), where, line_no);
        const long span = std::max(4L, value * permille / 1000);
        const long step = static_cast<long>(h % static_cast<uint64_t>(2 * span + 1)) - span;
        moved = std::max(4L, value + (step == 0 ? 4 : step));
      }
      out.append(line.substr(0, start));
      out.append(std::to_string(moved));
      out.append(line.substr(digits_end));
    }
    if (end < text.size()) out.push_back('\n');
    at = end + 1;
  }
  return out;
}

// `sample` as its device gives it at capture `seq`, its heaps or every figure moving (see above). Two
// different `seq`s differ in (almost: a draw may repeat) every moving figure.
inline capture::Capture Churned(const capture::Capture& sample, int seq, Churn churn) {
  constexpr char kPssKeys[] = "Pss Pss_Dirty Pss_Anon Pss_File Pss_Shmem SwapPss";
  constexpr char kResidentKeys[] = "Rss Private_Dirty Private_Clean Anonymous Referenced Swap";
  const std::string anon_keys = std::string(kResidentKeys) + " " + kPssKeys;
  capture::Capture c = sample;
  for (const auto& [path, node] : sample.nodes()) {
    if (!node.is_file()) continue;
    if (path == "proc/meminfo") {
      c.AddFile(path, ChurnLines(node.content, seq, path,
                                 "MemFree MemAvailable Buffers Cached SwapCached Active Inactive Active(anon) "
                                 "Inactive(anon) Active(file) Inactive(file) Unevictable Mlocked SwapFree Dirty "
                                 "AnonPages Mapped Shmem KReclaimable Slab SReclaimable SUnreclaim KernelStack "
                                 "ShadowCallStack PageTables Committed_AS VmallocUsed Percpu CmaFree",
                                 "", 30));
    } else if (EndsWith(path, "/smaps") || EndsWith(path, "/smaps_rollup")) {
      c.AddFile(path, ChurnLines(node.content, seq, path, churn == Churn::kEverything ? kPssKeys : "", anon_keys, 30));
    } else if (EndsWith(path, "/status") && path.compare(0, 5, "proc/") == 0) {
      c.AddFile(path, ChurnLines(node.content, seq, path, "", "VmRSS RssAnon VmSwap", 20));
    }
  }
  return c;
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_MOVING_CAPTURE_H_
