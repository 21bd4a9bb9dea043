// The facts an agent tells the server about its device in Hello and writes into each capture header
// (model, SoC, build, kernel, page size, Android version, access level, SELinux mode): from a capture
// tree's capture.json, or from a live root — its `getprop` output (run through the RootFs) and kernel
// nodes; --model / --soc override both.
//
//   if (*ChooseRootKind(root, false) == RootKind::kCaptureTree)
//     facts = DeviceFactsFromHeader(tree_fs.Read("capture.json").content);
//   else facts = LiveRootFacts(device_fs, sysconf(_SC_PAGESIZE), geteuid());
//
// Pure except LiveRootFacts (reads and one command through the RootFs).
#ifndef MEMFLEET_AGENT_DEVICE_FACTS_H_
#define MEMFLEET_AGENT_DEVICE_FACTS_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/reader/root_fs.h"

namespace memfleet::agent {

// Model of a live Linux root that is not an Android device (it has no system/bin/getprop).
inline constexpr char kLiveRootModel[] = "linux-host";

struct DeviceFacts {
  std::string model;
  std::string manufacturer;
  std::string soc;
  std::string build_fingerprint;
  std::string build_type;   // user, userdebug, eng
  std::string abi;          // arm64-v8a, x86_64, ...
  std::string android_sdk;  // the API level, as getprop prints it ("34")
  std::optional<int> android_version;
  std::optional<uint64_t> ddr_size_kb;  // installed DRAM: a capture tree's header, or --ddr-size-kb
  std::string kernel;
  uint64_t page_size = 4096;
  // What the agent reads as: "root" (uid 0) or "shell" (any other uid: a retail phone's adb shell, whose
  // reads of other apps' nodes and debugfs fail with EACCES). "" when unknown (a capture tree without it).
  std::string access;
  // sys/fs/selinux/enforce: "enforcing" (1), "permissive" (0), "none" (no SELinux), "unknown" otherwise.
  std::string selinux;
  // Why the Android facts are missing on a live root whose getprop exists but failed ("" otherwise),
  // for the agent's log.
  std::string getprop_problem;
};

// A device id the server accepts (its Hello check): 1-128 characters of [A-Za-z0-9._:@+-].
// InvalidArgument naming the problem otherwise, so that the agent fails at start instead of reconnecting
// forever to a server that refuses it.
absl::Status CheckDeviceId(std::string_view device_id);

// The facts of a capture.json (docs/capture-format.md, "The header"; absent → empty / 4096). The error
// of ParseCaptureHeader when the header is invalid.
absl::StatusOr<DeviceFacts> DeviceFactsFromHeader(std::string_view json_text);

// A live root: kernel from proc/sys/kernel/osrelease (empty when unreadable), SELinux mode from
// sys/fs/selinux/enforce, access from `euid`, and the Android facts from RunCommand("getprop"); a root
// without getprop (a Linux host) has model kLiveRootModel and no Android facts.
DeviceFacts LiveRootFacts(RootFs& fs, uint64_t page_size, uid_t euid);

// The header fields of a live root's capture (CollectOptions::header_facts): the non-empty facts beyond
// device id, time, page size and android_version, named as docs/capture-format.md names them.
std::vector<std::pair<std::string, std::string>> HeaderFactsOf(const DeviceFacts& facts);

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_DEVICE_FACTS_H_
