#include "agent/resident_pages.h"

#include <sys/mman.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace memfleet::agent {
namespace {

// "7f12a000-7f12c000 r-xp 00000000 08:01 1234   /usr/bin/x": the range, and whether it may be dropped
// as far as its header line tells (not writable, backed by a path).
bool ParseHeader(absl::string_view line, AddressRange* range, bool* candidate) {
  std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (fields.size() < 5) return false;
  std::vector<absl::string_view> bounds = absl::StrSplit(fields[0], '-');
  uint64_t begin = 0, end = 0;
  if (bounds.size() != 2 || !absl::SimpleHexAtoi(bounds[0], &begin) || !absl::SimpleHexAtoi(bounds[1], &end) ||
      fields[1].size() != 4) {
    return false;
  }
  range->begin = static_cast<uintptr_t>(begin);
  range->end = static_cast<uintptr_t>(end);
  const bool has_path = fields.size() >= 6 && absl::StartsWith(fields[5], "/");
  *candidate = has_path && fields[1][1] == '-' && fields[1][3] == 'p' && end > begin;
  return true;
}

}  // namespace

std::vector<AddressRange> CleanFileMappings(absl::string_view smaps) {
  std::vector<AddressRange> out;
  AddressRange range;
  bool candidate = false;
  for (absl::string_view line : absl::StrSplit(smaps, '\n')) {
    AddressRange header;
    bool header_candidate = false;
    if (!line.empty() && absl::ascii_isxdigit(static_cast<unsigned char>(line[0])) &&
        line.find('-') != absl::string_view::npos && ParseHeader(line, &header, &header_candidate)) {
      range = header;
      candidate = header_candidate;
      continue;
    }
    // "Anonymous:" comes once per mapping: only a mapping with none of its pages modified is clean.
    if (candidate && absl::ConsumePrefix(&line, "Anonymous:")) {
      uint64_t kb = 0;
      absl::string_view value = absl::StripAsciiWhitespace(absl::StripSuffix(absl::StripAsciiWhitespace(line), "kB"));
      if (absl::SimpleAtoi(value, &kb) && kb == 0) out.push_back(range);
      candidate = false;
    }
  }
  return out;
}

uint64_t DropCleanCodePages() {
  std::ifstream in("/proc/self/smaps");
  if (!in) return 0;
  std::stringstream text;
  text << in.rdbuf();
  uint64_t bytes = 0;
  for (const AddressRange& r : CleanFileMappings(text.str())) {
    if (madvise(reinterpret_cast<void*>(r.begin), r.end - r.begin, MADV_DONTNEED) == 0) bytes += r.end - r.begin;
  }
  return bytes;
}

}  // namespace memfleet::agent
