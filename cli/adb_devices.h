// The phones `adb devices` lists, and which of them can be used.
//
//   std::vector<AdbDevice> phones = ParseAdbDevices(output);   // {"R58M123", "device"}, {"emulator-5554", "offline"}
#ifndef MEMFLEET_CLI_ADB_DEVICES_H_
#define MEMFLEET_CLI_ADB_DEVICES_H_

#include <string>
#include <string_view>
#include <vector>

namespace memfleet::cli {

struct AdbDevice {
  std::string serial;
  std::string state;  // "device" when usable; "unauthorized", "offline", "recovery", ... otherwise
  bool usable() const { return state == "device"; }
};

// One entry per "SERIAL<TAB>STATE" line, in order (the serial is everything before the tab, spaces and
// all); the "List of devices attached" header, daemon start-up notes ("* daemon started successfully")
// and blank lines are skipped.
std::vector<AdbDevice> ParseAdbDevices(std::string_view output);

// Why a phone in `state` cannot be used, and what to do about it.
std::string UnusableReason(std::string_view state);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_ADB_DEVICES_H_
