// SelectPhones: which phones an `agents` command acts on, from `adb devices`.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "cli/adb_devices.h"
#include "cli/commands/agents_command.h"
#include "cli/output_format.h"

namespace memfleet::cli {

absl::StatusOr<std::vector<std::string>> SelectPhones(const AgentsTarget& target, bool default_all, Adb& adb,
                                                      std::ostream& err, int* skipped) {
  if (target.all && !target.serials.empty()) return absl::InvalidArgumentError("give --serial or --all, not both");
  const bool all = target.all || (target.serials.empty() && default_all);
  if (!all && target.serials.empty()) {
    return absl::InvalidArgumentError("say which phones: --serial S (repeatable) or --all");
  }
  absl::StatusOr<AdbResult> listed = adb.Run({"devices"});
  if (!listed.ok()) return listed.status();
  if (listed->exit_code != 0) return absl::UnavailableError("adb devices failed: " + listed->output);
  std::vector<AdbDevice> devices = ParseAdbDevices(listed->output);

  std::vector<std::string> serials;
  auto report = [&](const std::string& serial, const std::string& why) {
    err << "memfleet agents: " << TerminalSafe(serial) << ": " << why << "; skipped\n";
    ++*skipped;
  };
  if (all) {
    for (const AdbDevice& d : devices) {
      if (d.usable()) {
        serials.push_back(d.serial);
      } else {
        report(d.serial, UnusableReason(d.state));
      }
    }
    if (serials.empty() && *skipped == 0) err << "memfleet agents: adb devices lists no phone\n";
    return serials;
  }
  for (const std::string& serial : target.serials) {
    auto it = std::find_if(devices.begin(), devices.end(), [&](const AdbDevice& d) { return d.serial == serial; });
    if (it == devices.end()) {
      report(serial, "not listed by adb devices");
    } else if (!it->usable()) {
      report(serial, UnusableReason(it->state));
    } else {
      serials.push_back(serial);
    }
  }
  return serials;
}

}  // namespace memfleet::cli
