#include "common/decimal.h"
#include "accounting/native_heap_dump.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "accounting/text_util.h"

namespace memfleet::accounting {
namespace {

constexpr absl::string_view kMagic = "Android Native Heap Dump";

absl::Status LineError(size_t index, absl::string_view what, absl::string_view line) {
  return absl::InvalidArgumentError(
      absl::StrCat("native heap dump line ", index + 1, ": ", what, ": \"", Snippet(ToStd(line), 80), "\""));
}

// Hexadecimal without a prefix, as bionic prints pcs and /proc/self/maps prints addresses; "0x" is
// tolerated.
bool ParseHex(absl::string_view token, uint64_t* out) {
  if (absl::StartsWith(token, "0x") || absl::StartsWith(token, "0X")) token.remove_prefix(2);
  if (token.empty() || !absl::ascii_isxdigit(static_cast<unsigned char>(token.front()))) return false;
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), *out, 16);
  return ec == std::errc() && ptr == token.data() + token.size();
}

// The line's fields between spaces and tabs (empty ones skipped), into `fields`: what StrSplit with
// ByAnyChar(" \t") and SkipEmpty gives, without the lookup table ByAnyChar builds at each field and a
// new vector a line (a dump holds a record a line, thousands of them, in every capture).
void Tokens(absl::string_view line, std::vector<absl::string_view>* fields) {
  fields->clear();
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) fields->push_back(line.substr(start, i - start));
  }
}

// "z 0  sz  1048673  num   31  bt 199bdeb9 1abb12a4 ..."; `fields`: space to split it in.
absl::Status ParseRecord(size_t index, absl::string_view line, HeapRecord* out,
                         std::vector<absl::string_view>* fields) {
  Tokens(line, fields);
  const std::vector<absl::string_view>& t = *fields;
  if (t.size() < 7 || t[0] != "z" || (t[1] != "0" && t[1] != "1") || t[2] != "sz" ||
      !ParseDecimal(t[3], &out->size_bytes) || t[4] != "num" || !ParseDecimal(t[5], &out->count) || t[6] != "bt") {
    return LineError(index, "expected an allocation record \"z <0|1> sz <bytes> num <n> bt <pc>...\"", line);
  }
  out->zygote = t[1] == "1";
  out->frames.reserve(t.size() - 7);
  for (size_t i = 7; i < t.size(); ++i) {
    uint64_t pc = 0;
    if (!ParseHex(t[i], &pc)) return LineError(index, "backtrace pc is not hexadecimal", line);
    out->frames.push_back(pc);
  }
  return absl::OkStatus();
}

// Takes the next whitespace-separated field off the front of `rest`.
absl::string_view NextField(absl::string_view* rest) {
  *rest = absl::StripLeadingAsciiWhitespace(*rest);
  size_t end = 0;
  while (end < rest->size() && !absl::ascii_isspace(static_cast<unsigned char>((*rest)[end]))) ++end;
  const absl::string_view field = rest->substr(0, end);
  rest->remove_prefix(end);
  return field;
}

// /proc/<pid>/maps: "start-end perms offset dev inode [path]"; the path may hold spaces.
absl::Status ParseMapping(size_t index, absl::string_view line, HeapMapping* out) {
  absl::string_view rest = line;
  const absl::string_view range = NextField(&rest);
  const absl::string_view perms = NextField(&rest);
  const absl::string_view offset = NextField(&rest);
  const absl::string_view dev = NextField(&rest);
  const absl::string_view inode = NextField(&rest);
  const size_t dash = range.find('-');
  uint64_t ignored = 0;
  if (dash == absl::string_view::npos || !ParseHex(range.substr(0, dash), &out->start) ||
      !ParseHex(range.substr(dash + 1), &out->end) || perms.size() != 4 || !ParseHex(offset, &ignored) ||
      dev.find(':') == absl::string_view::npos || !ParseDecimal(inode, &ignored)) {
    return LineError(index, "expected a MAPS line \"start-end perms offset dev inode [path]\"", line);
  }
  if (out->start > out->end) return LineError(index, "mapping ends before it starts", line);
  out->path = std::string(absl::StripAsciiWhitespace(rest));
  return absl::OkStatus();
}

uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return std::numeric_limits<uint64_t>::max();
  return a * b;
}

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max() : a + b;
}

}  // namespace

absl::StatusOr<NativeHeapDump> ParseNativeHeapDump(std::string_view text_in) {
  const absl::string_view text(text_in.data(), text_in.size());
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  for (absl::string_view& line : lines) absl::ConsumeSuffix(&line, "\r");

  size_t i = 0;
  while (i < lines.size() && absl::StripAsciiWhitespace(lines[i]).empty()) ++i;
  if (i == lines.size() || !absl::StartsWith(absl::StripLeadingAsciiWhitespace(lines[i]), kMagic)) {
    return absl::InvalidArgumentError(
        absl::StrCat("native heap dump: does not start with \"", kMagic, "\" (not `am dumpheap -n` output)"));
  }
  ++i;

  // A dump cut short (the command killed, the transfer truncated) loses its END line; say so before
  // complaining about whatever half line it ends with.
  size_t maps_line = lines.size();
  size_t end_line = lines.size();
  for (size_t j = i; j < lines.size(); ++j) {
    const absl::string_view line = absl::StripAsciiWhitespace(lines[j]);
    if (maps_line == lines.size()) {
      if (line == "MAPS") maps_line = j;
    } else if (line == "END") {
      end_line = j;
      break;
    }
  }
  if (end_line == lines.size()) {
    return absl::DataLossError(
        absl::StrCat("native heap dump: ", maps_line == lines.size() ? "no MAPS section" : "MAPS section",
                     " not closed by END (truncated dump)"));
  }

  NativeHeapDump dump;
  std::vector<absl::string_view> fields;
  for (; i < maps_line; ++i) {
    const absl::string_view line = absl::StripLeadingAsciiWhitespace(lines[i]);
    // Header lines ("Build fingerprint:", "Total memory:"...) and the "bt_info" lines that follow a
    // record when full backtraces are on are not records.
    if (!absl::StartsWith(line, "z ") && !absl::StartsWith(line, "z\t")) continue;
    HeapRecord record;
    if (absl::Status s = ParseRecord(i, lines[i], &record, &fields); !s.ok()) return s;
    dump.records.push_back(std::move(record));
  }
  for (i = maps_line + 1; i < end_line; ++i) {
    if (absl::StripAsciiWhitespace(lines[i]).empty()) continue;
    HeapMapping mapping;
    if (absl::Status s = ParseMapping(i, lines[i], &mapping); !s.ok()) return s;
    dump.maps.push_back(std::move(mapping));
  }
  return dump;
}

uint64_t GraphicsNativeBytes(const NativeHeapDump& dump, const GraphicsLibraries& libraries) {
  // The graphics mappings as sorted, merged [start, end) intervals: a pc then costs one binary
  // search however many mappings (or overlapping ones) the dump has.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const HeapMapping& m : dump.maps) {
    if (m.start < m.end && libraries.MatchesPath(m.path)) ranges.emplace_back(m.start, m.end);
  }
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (const auto& r : ranges) {
    if (!merged.empty() && r.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  auto in_graphics = [&merged](uint64_t pc) {
    // The last interval starting at or before pc is the only one that can hold it.
    auto it = std::upper_bound(merged.begin(), merged.end(), pc,
                               [](uint64_t v, const std::pair<uint64_t, uint64_t>& r) { return v < r.first; });
    if (it == merged.begin()) return false;
    --it;
    return pc < it->second;
  };

  uint64_t total = 0;
  for (const HeapRecord& record : dump.records) {
    if (std::any_of(record.frames.begin(), record.frames.end(), in_graphics)) {
      total = SaturatingAdd(total, SaturatingMul(record.size_bytes, record.count));
    }
  }
  return total;
}

}  // namespace memfleet::accounting
