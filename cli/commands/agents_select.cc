// SelectPhones: which phones an `agents` command acts on, from `adb devices`.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "cli/adb_devices.h"
#include "cli/commands/agents_command.h"

namespace memfleet::cli {

absl::StatusOr<std::vector<SelectedPhone>> SelectPhones(const AgentsTarget& target, bool default_all, Adb& adb) {
  if (target.all && !target.serials.empty()) return absl::InvalidArgumentError("give --serial or --all, not both");
  const bool all = target.all || (target.serials.empty() && default_all);
  if (!all && target.serials.empty()) {
    return absl::InvalidArgumentError("say which phones: --serial S (repeatable) or --all");
  }
  absl::StatusOr<AdbResult> listed = adb.Run({"devices"});
  if (!listed.ok()) return listed.status();
  if (listed->exit_code != 0) return absl::UnavailableError("adb devices failed: " + listed->output);
  std::vector<AdbDevice> devices = ParseAdbDevices(listed->output);

  std::vector<SelectedPhone> phones;
  if (all) {
    for (const AdbDevice& d : devices) phones.push_back({d.serial, d.usable() ? "" : UnusableReason(d.state)});
    return phones;
  }
  for (const std::string& serial : target.serials) {
    auto it = std::find_if(devices.begin(), devices.end(), [&](const AdbDevice& d) { return d.serial == serial; });
    if (it == devices.end()) {
      phones.push_back({serial, "not listed by adb devices"});
    } else {
      phones.push_back({serial, it->usable() ? "" : UnusableReason(it->state)});
    }
  }
  return phones;
}

int AgentsExitCode(size_t phones, size_t failed) {
  if (phones == 0) return kExitNothingToCheck;
  if (failed == 0) return kExitOk;
  return failed == phones ? kExitFailed : kExitPartial;
}

}  // namespace memfleet::cli
