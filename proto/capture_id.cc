#include "proto/capture_id.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "common/utc_time.h"
#include "common/untrusted_text.h"

namespace memfleet::wire {
namespace {

constexpr size_t kTimeChars = 16;  // YYYYMMDDTHHMMSSZ
constexpr size_t kSequenceChars = 6;
// "-" time "-" instance "-" sequence, and the form without an instance.
constexpr size_t kSuffixChars = 1 + kTimeChars + 1 + kCaptureInstanceChars + 1 + kSequenceChars;
constexpr size_t kLegacySuffixChars = 1 + kTimeChars + 1 + kSequenceChars;

bool Digits(std::string_view s, size_t pos, size_t n, int* value) {
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *value = v;
  return true;
}

// YYYYMMDDTHHMMSSZ with plausible fields (second 60: a leap second).
bool IsCompactTime(std::string_view t) {
  if (t.size() != kTimeChars || t[8] != 'T' || t[15] != 'Z') return false;
  int year, month, day, hour, minute, second;
  if (!Digits(t, 0, 4, &year) || !Digits(t, 4, 2, &month) || !Digits(t, 6, 2, &day) || !Digits(t, 9, 2, &hour) ||
      !Digits(t, 11, 2, &minute) || !Digits(t, 13, 2, &second)) {
    return false;
  }
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 60;
}

bool IsInstance(std::string_view s) {
  if (s.size() != kCaptureInstanceChars) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool IsSequence(std::string_view s) {
  int ignored;
  return s.size() == kSequenceChars && Digits(s, 0, s.size(), &ignored);
}

// `suffix` is "-" time "-" [instance "-"] sequence.
bool IsSuffix(std::string_view suffix, bool with_instance) {
  const size_t time_at = 1;
  const size_t after_time = time_at + kTimeChars;
  if (suffix[0] != '-' || !IsCompactTime(suffix.substr(time_at, kTimeChars)) || suffix[after_time] != '-') {
    return false;
  }
  size_t sequence_at = after_time + 1;
  if (with_instance) {
    if (!IsInstance(suffix.substr(sequence_at, kCaptureInstanceChars))) return false;
    sequence_at += kCaptureInstanceChars;
    if (suffix[sequence_at] != '-') return false;
    ++sequence_at;
  }
  return IsSequence(suffix.substr(sequence_at));
}

// absl's string_view is not std's in every build of it.
absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

absl::StatusOr<std::string> MakeCaptureId(std::string_view device_id, std::string_view captured_at,
                                          std::string_view instance, uint64_t sequence) {
  if (device_id.empty()) return absl::InvalidArgumentError("empty device id");
  // Ids name the whole second: the milliseconds of "YYYY-MM-DDTHH:MM:SS.mmmZ" are left out.
  if (!UtcMillisOf(captured_at).has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("capture time ", QuotedSnippet(captured_at), " is not RFC 3339 UTC (YYYY-MM-DDTHH:MM:SS.mmmZ)"));
  }
  std::string compact;
  compact.reserve(kTimeChars);
  for (char c : captured_at.substr(0, 19)) {
    if (c != '-' && c != ':') compact.push_back(c);
  }
  compact.push_back('Z');
  if (!IsInstance(instance)) {
    return absl::InvalidArgumentError(absl::StrCat("capture id instance ", QuotedSnippet(instance), " is not ",
                                                   kCaptureInstanceChars, " lowercase hex digits"));
  }
  char seq[8];
  snprintf(seq, sizeof(seq), "%06u", static_cast<unsigned>(sequence % 1000000));
  return absl::StrCat(Av(device_id), "-", compact, "-", Av(instance), "-", seq);
}

std::optional<std::string_view> CaptureIdDevice(std::string_view id) {
  if (id.size() > kSuffixChars && IsSuffix(id.substr(id.size() - kSuffixChars), /*with_instance=*/true)) {
    return id.substr(0, id.size() - kSuffixChars);
  }
  if (id.size() > kLegacySuffixChars && IsSuffix(id.substr(id.size() - kLegacySuffixChars), /*with_instance=*/false)) {
    return id.substr(0, id.size() - kLegacySuffixChars);
  }
  return std::nullopt;
}

absl::Status CheckCaptureIdOf(std::string_view device_id, std::string_view capture_id) {
  std::optional<std::string_view> named = CaptureIdDevice(capture_id);
  if (!named.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("capture id ", QuotedSnippet(capture_id),
                                                   " is not <device id>-<YYYYMMDDTHHMMSSZ>-<8 hex digits>-<6 digits>"));
  }
  if (*named != device_id) {
    return absl::InvalidArgumentError(absl::StrCat("capture id ", QuotedSnippet(capture_id), " names device ",
                                                   QuotedSnippet(*named), ", not this agent's device ",
                                                   QuotedSnippet(device_id)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> NewCaptureInstance() {
  unsigned char bytes[kCaptureInstanceChars / 2];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(absl::StrCat("getrandom failed (errno ", errno, "): no capture id instance"));
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(kCaptureInstanceChars);
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

}  // namespace memfleet::wire
