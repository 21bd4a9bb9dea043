#include "capture/getprop.h"

#include <utility>

#include "absl/strings/numbers.h"

namespace memfleet::capture {
namespace {

constexpr size_t kMaxFactBytes = 256;

bool IsNameChar(char c) { return c != '[' && c != ']' && c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\0'; }

// "[name]: [value]" → name and value; false for any other line.
bool SplitLine(std::string_view line, std::string_view* name, std::string_view* value) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() < 6 || line.front() != '[' || line.back() != ']') return false;
  const size_t close = line.find("]: [");
  if (close == std::string_view::npos || close < 2) return false;
  *name = line.substr(1, close - 1);
  for (char c : *name) {
    if (!IsNameChar(c)) return false;
  }
  const size_t value_start = close + 4;
  *value = line.substr(value_start, line.size() - 1 - value_start);
  return true;
}

std::string Fact(const GetpropValues& props, const char* name) {
  auto it = props.values.find(name);
  if (it == props.values.end() || it->second.size() > kMaxFactBytes) return {};
  for (char c : it->second) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return {};
  }
  return it->second;
}

}  // namespace

GetpropValues ParseGetprop(std::string_view text) {
  GetpropValues out;
  if (text.size() > kMaxGetpropBytes) {
    text = text.substr(0, kMaxGetpropBytes);
    out.truncated = true;
  }
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    std::string_view name, value;
    if (!SplitLine(line, &name, &value) || name.size() > kMaxPropertyNameBytes ||
        value.size() > kMaxPropertyValueBytes) {
      ++out.skipped_lines;
      continue;
    }
    if (out.values.size() >= kMaxGetpropProperties && out.values.count(std::string(name)) == 0) {
      out.truncated = true;
      break;
    }
    out.values[std::string(name)] = std::string(value);
  }
  return out;
}

std::optional<int> AndroidVersionOfSdk(int sdk) {
  if (sdk < 21 || sdk > 1000) return std::nullopt;
  // API levels of Android 5 to 12L, two levels for some releases (developer.android.com, "API levels").
  constexpr int kReleaseOfSdk21To32[] = {5, 5, 6, 7, 7, 8, 8, 9, 10, 11, 12, 12};
  if (sdk <= 32) return kReleaseOfSdk21To32[sdk - 21];
  return sdk - 20;
}

AndroidFacts AndroidFactsOf(const GetpropValues& props) {
  AndroidFacts f;
  f.model = Fact(props, "ro.product.model");
  f.manufacturer = Fact(props, "ro.product.manufacturer");
  f.soc = Fact(props, "ro.soc.model");
  if (f.soc.empty()) f.soc = Fact(props, "ro.board.platform");
  f.build_fingerprint = Fact(props, "ro.build.fingerprint");
  f.build_type = Fact(props, "ro.build.type");
  f.abi = Fact(props, "ro.product.cpu.abi");
  int sdk = 0;
  if (absl::SimpleAtoi(Fact(props, "ro.build.version.sdk"), &sdk) && sdk > 0 && sdk <= 1000) {
    f.android_sdk = sdk;
    f.android_version = AndroidVersionOfSdk(sdk);
  }
  return f;
}

}  // namespace memfleet::capture
