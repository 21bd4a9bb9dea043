#include "agent/device_facts.h"

#include "absl/strings/str_cat.h"
#include "capture/capture_header.h"

namespace memfleet::agent {
namespace {

std::string Fact(const capture::CaptureHeader& h, const std::string& name) {
  auto it = h.facts.find(name);
  return it == h.facts.end() ? std::string() : it->second;
}

}  // namespace

absl::Status CheckDeviceId(std::string_view device_id) {
  constexpr size_t kMaxDeviceIdBytes = 128;
  if (device_id.empty()) return absl::InvalidArgumentError("the device id is empty");
  if (device_id.size() > kMaxDeviceIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat("the device id is longer than ", kMaxDeviceIdBytes, " bytes"));
  }
  for (char c : device_id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-' || c == ':' || c == '@' || c == '+';
    if (!ok) {
      return absl::InvalidArgumentError(
          "the device id may only hold letters, digits and . _ - : @ + (the server refuses others)");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<DeviceFacts> DeviceFactsFromHeader(std::string_view json_text) {
  absl::StatusOr<capture::CaptureHeader> header = capture::ParseCaptureHeader(json_text);
  if (!header.ok()) return header.status();
  DeviceFacts facts;
  facts.model = Fact(*header, "model");
  facts.soc = Fact(*header, "soc");
  facts.build_fingerprint = Fact(*header, "build_fingerprint");
  facts.kernel = Fact(*header, "kernel");
  facts.page_size = header->page_size;
  return facts;
}

DeviceFacts LiveRootFacts(RootFs& fs, uint64_t page_size) {
  DeviceFacts facts;
  facts.model = kLiveRootModel;
  facts.page_size = page_size;
  NodeRead release = fs.Read("proc/sys/kernel/osrelease");
  if (release.ok()) {
    std::string& k = release.content;
    while (!k.empty() && (k.back() == '\n' || k.back() == ' ' || k.back() == '\0')) k.pop_back();
    // A kernel release is one short line; anything else is not worth sending.
    if (k.size() <= 256 && k.find('\n') == std::string::npos) facts.kernel = k;
  }
  return facts;
}

}  // namespace memfleet::agent
