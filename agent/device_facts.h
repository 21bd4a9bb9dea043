// The facts an agent tells the server about its device in Hello (model, SoC, build, kernel, page size):
// from a capture tree's capture.json, or from a live root's kernel nodes; --model / --soc override both.
//
//   if (*ChooseRootKind(root, false) == RootKind::kCaptureTree)
//     facts = DeviceFactsFromHeader(tree_fs.Read("capture.json").content);
//   else facts = LiveRootFacts(device_fs, sysconf(_SC_PAGESIZE));
//
// Pure except LiveRootFacts (one read through the RootFs).
#ifndef MEMFLEET_AGENT_DEVICE_FACTS_H_
#define MEMFLEET_AGENT_DEVICE_FACTS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/root_fs.h"

namespace memfleet::agent {

// Model of a live Linux root that is not an Android device (no way to ask for ro.product.model there).
inline constexpr char kLiveRootModel[] = "linux-host";

struct DeviceFacts {
  std::string model;
  std::string soc;
  std::string build_fingerprint;
  std::string kernel;
  uint64_t page_size = 4096;
};

// A device id the server accepts (its Hello check): 1-128 characters of [A-Za-z0-9._:@+-].
// InvalidArgument naming the problem otherwise, so that the agent fails at start instead of reconnecting
// forever to a server that refuses it.
absl::Status CheckDeviceId(std::string_view device_id);

// "model", "soc", "build_fingerprint", "kernel" and "page_size" of a capture.json (absent → empty /
// 4096). The error of ParseCaptureHeader when the header is invalid.
absl::StatusOr<DeviceFacts> DeviceFactsFromHeader(std::string_view json_text);

// A live root: kernel from proc/sys/kernel/osrelease (empty when unreadable), model kLiveRootModel.
DeviceFacts LiveRootFacts(RootFs& fs, uint64_t page_size);

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_DEVICE_FACTS_H_
