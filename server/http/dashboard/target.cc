#include "server/http/dashboard/target.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace memfleet::dashboard {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string DashboardTarget::Param(absl::string_view name) const {
  std::string value;
  for (const auto& [key, v] : query) {
    if (key == name) value = v;
  }
  return value;
}

std::vector<std::string> DashboardTarget::Params(absl::string_view name) const {
  std::vector<std::string> values;
  for (const auto& [key, v] : query) {
    if (key == name) values.push_back(v);
  }
  return values;
}

absl::StatusOr<std::string> PercentDecode(absl::string_view text, bool plus_is_space, size_t max_bytes) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      const int hi = i + 2 < text.size() ? HexValue(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? HexValue(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) return absl::InvalidArgumentError("a % in the address is not followed by two hex digits");
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      c = ' ';
    }
    if (c == '\0') return absl::InvalidArgumentError("the address holds a NUL byte");
    if (out.size() == max_bytes) {
      return absl::InvalidArgumentError(absl::StrCat("a part of the address is longer than ", max_bytes, " bytes"));
    }
    out += c;
  }
  return out;
}

absl::StatusOr<Parameters> ParseParameters(absl::string_view text) {
  Parameters params;
  if (text.empty()) return params;
  for (absl::string_view pair : absl::StrSplit(text, '&')) {
    if (pair.empty()) continue;
    if (params.size() == kMaxParameters) {
      return absl::InvalidArgumentError(absl::StrCat("more than ", kMaxParameters, " parameters"));
    }
    const size_t eq = pair.find('=');
    absl::StatusOr<std::string> name = PercentDecode(pair.substr(0, eq), true, kMaxDecodedBytes);
    if (!name.ok()) return name.status();
    absl::StatusOr<std::string> value =
        eq == absl::string_view::npos ? std::string() : PercentDecode(pair.substr(eq + 1), true, kMaxDecodedBytes);
    if (!value.ok()) return value.status();
    params.emplace_back(std::move(*name), std::move(*value));
  }
  return params;
}

std::string ProcessKey(absl::string_view process_name) {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a 64: offset basis, then xor and multiply by the prime
  for (char c : process_name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string key(16, '0');
  for (int i = 15; i >= 0; --i, hash >>= 4) key[static_cast<size_t>(i)] = kHex[hash & 0xf];
  return key;
}

absl::StatusOr<DashboardTarget> ParseDashboardTarget(absl::string_view target) {
  DashboardTarget t;
  const size_t question = target.find('?');
  const absl::string_view path = target.substr(0, question);
  if (question != absl::string_view::npos) {
    absl::StatusOr<Parameters> query = ParseParameters(target.substr(question + 1));
    if (!query.ok()) return query.status();
    t.query = std::move(*query);
  }
  std::vector<std::string> segments;
  for (absl::string_view raw : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    absl::StatusOr<std::string> segment = PercentDecode(raw, false, kMaxDecodedBytes);
    if (!segment.ok()) return segment.status();
    segments.push_back(std::move(*segment));
  }
  if (segments.empty()) {
    t.page = DashboardPage::kFleet;
  } else if (segments.size() == 1 && segments[0] == "login") {
    t.page = DashboardPage::kLogin;
  } else if (segments.size() == 1 && segments[0] == "logout") {
    t.page = DashboardPage::kLogout;
  } else if (segments.size() == 1 && segments[0] == "baselines") {
    t.page = DashboardPage::kBaselines;
  } else if (segments[0] == "device" && segments.size() == 2) {
    t.page = DashboardPage::kDevice;
    t.device_id = segments[1];
  } else if (segments[0] == "device" && segments.size() == 4 && segments[2] == "process") {
    t.page = DashboardPage::kProcess;
    t.device_id = segments[1];
    t.process_name = segments[3];
  } else if (segments[0] == "device" && segments.size() == 6 && segments[2] == "capture" && segments[4] == "process") {
    t.page = DashboardPage::kProcess;
    t.device_id = segments[1];
    t.capture_id = segments[3];
    t.process_key = segments[5];
  }
  return t;
}

}  // namespace memfleet::dashboard
