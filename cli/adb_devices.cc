#include "cli/adb_devices.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace memfleet::cli {

std::vector<AdbDevice> ParseAdbDevices(std::string_view output_text) {
  const absl::string_view output(output_text.data(), output_text.size());
  std::vector<AdbDevice> devices;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripTrailingAsciiWhitespace(line);
    if (absl::StripAsciiWhitespace(line).empty() || absl::StartsWith(line, "List of devices") ||
        absl::StartsWith(line, "*")) {
      continue;
    }
    // "SERIAL<TAB>STATE": a serial is what the phone's USB descriptor says, spaces included, so only the
    // tab ends it. Only `adb devices -l` pads with spaces ("SERIAL   device usb:... product:...").
    size_t tab = line.find('\t');
    if (tab != absl::string_view::npos) {
      std::vector<absl::string_view> rest =
          absl::StrSplit(line.substr(tab + 1), absl::ByAnyChar(" \t"), absl::SkipEmpty());
      if (tab == 0 || rest.empty()) continue;
      devices.push_back({std::string(line.substr(0, tab)), std::string(rest[0])});
      continue;
    }
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() < 2) continue;
    devices.push_back({std::string(fields[0]), std::string(fields[1])});
  }
  return devices;
}

std::string UnusableReason(std::string_view state) {
  if (state == "unauthorized") return "unauthorized: accept the USB debugging prompt on the phone";
  if (state == "offline") return "offline: reconnect it (or adb kill-server)";
  if (state == "no") return "no permissions: add a udev rule for it (adb devices says more)";
  return "in state \"" + std::string(state) + "\", not \"device\"";
}

}  // namespace memfleet::cli
