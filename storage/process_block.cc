#include "storage/process_block.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/varint.h"

namespace memfleet::storage {
namespace {

// The block's first byte: its layout. A later layout gets another number; this one stays readable.
constexpr char kFormat = 1;

// Per process: the name's number as the difference from the previous process's (blocks are sorted by
// it), the pid (zigzag), a mask of the figures present (bit i: figure i), then each present figure (zigzag).
void AppendSample(std::string& out, const ProcessSample& s, int64_t previous_name_no) {
  // Wraps as ReadSamples adds it back: a block decoded from damaged bytes may hold any two name numbers.
  AppendVarint(
      out, ZigZag(static_cast<int64_t>(static_cast<uint64_t>(s.name_no) - static_cast<uint64_t>(previous_name_no))));
  AppendVarint(out, ZigZag(s.pid));
  uint64_t mask = 0;
  for (size_t i = 0; i < kProcessFigureCount; ++i) {
    if (s.figures[i].has_value()) mask |= uint64_t{1} << i;
  }
  AppendVarint(out, mask);
  for (const std::optional<int64_t>& figure : s.figures) {
    if (figure.has_value()) AppendVarint(out, ZigZag(*figure));
  }
}

absl::Status Corrupt(const char* what) {
  return absl::DataLossError(absl::StrCat("the stored process figures are damaged: ", what));
}

// Reads the block's samples in order, calling `fn(sample)` on each until it returns false.
template <typename Fn>
absl::Status ReadSamples(std::string_view block, const Fn& fn) {
  if (block.empty()) return absl::OkStatus();
  if (block[0] != kFormat) return Corrupt("unknown layout");
  block.remove_prefix(1);
  std::optional<uint64_t> count = ReadVarint(block);
  // Each sample takes at least three bytes: a count beyond that is a lie, not an allocation to make.
  if (!count.has_value() || *count > block.size() / 3) return Corrupt("bad process count");
  int64_t name_no = 0;
  int64_t pid_no = 0;
  for (uint64_t n = 0; n < *count; ++n) {
    ProcessSample s;
    std::optional<uint64_t> name_delta = ReadVarint(block);
    std::optional<uint64_t> pid = ReadVarint(block);
    std::optional<uint64_t> mask = ReadVarint(block);
    if (!name_delta.has_value() || !pid.has_value() || !mask.has_value()) return Corrupt("truncated");
    if (*mask >> kProcessFigureCount != 0) return Corrupt("unknown figure");
    // Wraps rather than overflows on a damaged delta; the order check below then fails it.
    s.name_no = static_cast<int64_t>(static_cast<uint64_t>(name_no) + static_cast<uint64_t>(UnZigZag(*name_delta)));
    s.pid = UnZigZag(*pid);
    // EncodeProcessBlock writes samples sorted by (name, pid), a pid once: any other order is damage, and
    // accepting it would give a block that does not encode back to itself.
    if (n > 0 && std::tie(s.name_no, s.pid) <= std::tie(name_no, pid_no)) return Corrupt("out of order");
    name_no = s.name_no;
    pid_no = s.pid;
    for (size_t i = 0; i < kProcessFigureCount; ++i) {
      if ((*mask >> i & 1) == 0) continue;
      std::optional<uint64_t> figure = ReadVarint(block);
      if (!figure.has_value()) return Corrupt("truncated");
      s.figures[i] = UnZigZag(*figure);
    }
    if (!fn(s)) return absl::OkStatus();
  }
  if (!block.empty()) return Corrupt("trailing bytes");
  return absl::OkStatus();
}

}  // namespace

std::string EncodeProcessBlock(std::vector<ProcessSample> samples) {
  std::sort(samples.begin(), samples.end(), [](const ProcessSample& a, const ProcessSample& b) {
    return std::tie(a.name_no, a.pid) < std::tie(b.name_no, b.pid);
  });
  std::string out;
  if (samples.empty()) return out;
  out.push_back(kFormat);
  AppendVarint(out, samples.size());
  int64_t previous = 0;
  for (const ProcessSample& s : samples) {
    AppendSample(out, s, previous);
    previous = s.name_no;
  }
  return out;
}

absl::StatusOr<std::vector<ProcessSample>> DecodeProcessBlock(std::string_view block) {
  std::vector<ProcessSample> samples;
  absl::Status read = ReadSamples(block, [&](const ProcessSample& s) {
    samples.push_back(s);
    return true;
  });
  if (!read.ok()) return read;
  return samples;
}

absl::StatusOr<std::vector<ProcessSample>> ProcessSamplesNamed(std::string_view block, int64_t name_no) {
  std::vector<ProcessSample> samples;
  absl::Status read = ReadSamples(block, [&](const ProcessSample& s) {
    if (s.name_no == name_no) samples.push_back(s);
    return s.name_no <= name_no;  // sorted: past the name, nothing more of it
  });
  if (!read.ok()) return read;
  return samples;
}

}  // namespace memfleet::storage
