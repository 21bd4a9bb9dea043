#include "agent/device_facts.h"

#include "absl/strings/str_cat.h"
#include "capture/capture_header.h"
#include "capture/getprop.h"

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
  facts.manufacturer = Fact(*header, "manufacturer");
  facts.build_type = Fact(*header, "build_type");
  facts.abi = Fact(*header, "abi");
  facts.android_sdk = Fact(*header, "android_sdk");
  facts.android_version = header->android_version;
  facts.ddr_size_kb = header->ddr_size_kb;
  facts.access = Fact(*header, "access");
  facts.selinux = Fact(*header, "selinux");
  facts.page_size = header->page_size;
  return facts;
}

namespace {

std::string SelinuxMode(RootFs& fs) {
  NodeRead enforce = fs.Read("sys/fs/selinux/enforce");
  if (enforce.errno_name == "ENOENT") return "none";
  if (!enforce.ok() || enforce.content.empty()) return "unknown";
  if (enforce.content[0] == '1') return "enforcing";
  if (enforce.content[0] == '0') return "permissive";
  return "unknown";
}

void AddAndroidFacts(RootFs& fs, DeviceFacts& facts) {
  NodeRead getprop = fs.RunCommand("getprop", "");
  if (getprop.errno_name == "ENOENT") {
    facts.model = kLiveRootModel;
    return;
  }
  if (!getprop.ok()) {
    facts.getprop_problem = absl::StrCat("getprop failed (", getprop.errno_name, ")");
    return;
  }
  capture::GetpropValues props = capture::ParseGetprop(getprop.content);
  if (props.values.empty()) {
    facts.getprop_problem = absl::StrCat("getprop printed no property (", props.skipped_lines, " other lines)");
    return;
  }
  capture::AndroidFacts android = capture::AndroidFactsOf(props);
  facts.model = android.model;
  facts.manufacturer = android.manufacturer;
  facts.soc = android.soc;
  facts.build_fingerprint = android.build_fingerprint;
  facts.build_type = android.build_type;
  facts.abi = android.abi;
  if (android.android_sdk) facts.android_sdk = std::to_string(*android.android_sdk);
  facts.android_version = android.android_version;
}

}  // namespace

DeviceFacts LiveRootFacts(RootFs& fs, uint64_t page_size, uid_t euid) {
  DeviceFacts facts;
  facts.page_size = page_size;
  facts.access = euid == 0 ? "root" : "shell";
  facts.selinux = SelinuxMode(fs);
  AddAndroidFacts(fs, facts);
  NodeRead release = fs.Read("proc/sys/kernel/osrelease");
  if (release.ok()) {
    std::string& k = release.content;
    while (!k.empty() && (k.back() == '\n' || k.back() == ' ' || k.back() == '\0')) k.pop_back();
    // A kernel release is one short line; anything else is not worth sending.
    if (k.size() <= 256 && k.find('\n') == std::string::npos) facts.kernel = k;
  }
  return facts;
}

std::vector<std::pair<std::string, std::string>> HeaderFactsOf(const DeviceFacts& facts) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : {std::pair<const char*, const std::string&>{"model", facts.model},
                                    {"manufacturer", facts.manufacturer},
                                    {"soc", facts.soc},
                                    {"build_fingerprint", facts.build_fingerprint},
                                    {"build_type", facts.build_type},
                                    {"android_sdk", facts.android_sdk},
                                    {"abi", facts.abi},
                                    {"kernel", facts.kernel},
                                    {"access", facts.access},
                                    {"selinux", facts.selinux}}) {
    if (!value.empty()) out.emplace_back(name, value);
  }
  return out;
}

}  // namespace memfleet::agent
