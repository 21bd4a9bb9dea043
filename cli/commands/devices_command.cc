#include "cli/commands/devices_command.h"

#include <memory>
#include <string>

#include "cli/device_selector.h"
#include "nlohmann/json.hpp"

namespace memfleet::cli {
namespace {

using nlohmann::json;

std::optional<int64_t> LastTotal(const v1::DeviceSummary& d) {
  return d.last_total_kb() >= 0 ? std::optional<int64_t>(d.last_total_kb()) : std::nullopt;
}

}  // namespace

std::string RenderDevices(const v1::ListDevicesResponse& response, OutputFormat format, bool filtered) {
  if (format == OutputFormat::kJson) {
    json devices = json::array();
    for (const v1::DeviceSummary& d : response.devices()) {
      std::optional<int64_t> total = LastTotal(d);
      devices.push_back({{"device_id", d.device_id()},
                         {"model", d.model()},
                         {"soc", d.soc()},
                         {"platform", d.platform()},
                         {"build_fingerprint", d.build_fingerprint()},
                         {"kernel", d.kernel()},
                         {"agent_version", d.agent_version()},
                         {"online", d.online()},
                         {"last_capture_at", d.last_capture_at().empty() ? json(nullptr) : json(d.last_capture_at())},
                         {"last_total_kb", total ? json(*total) : json(nullptr)},
                         {"capture_count", d.capture_count()},
                         {"dropped_captures", d.dropped_captures()}});
    }
    return devices.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  }
  if (format == OutputFormat::kCsv) {
    std::string out = CsvRow({"device_id", "model", "platform", "soc", "online", "last_capture_at", "last_total_kb",
                              "capture_count", "build_fingerprint", "kernel", "agent_version",
                              "dropped_captures"});
    for (const v1::DeviceSummary& d : response.devices()) {
      out += CsvRow({d.device_id(), d.model(), d.platform(), d.soc(), d.online() ? "true" : "false",
                     d.last_capture_at(), CsvKb(LastTotal(d)), std::to_string(d.capture_count()),
                     d.build_fingerprint(), d.kernel(), d.agent_version(), std::to_string(d.dropped_captures())});
    }
    return out;
  }
  TextTable table({{"DEVICE"},
                   {"MODEL"},
                   {"PLATFORM"},
                   {"STATE"},
                   {"LAST CAPTURE"},
                   {"LAST TOTAL KB", TextTable::kRight},
                   {"CAPTURES", TextTable::kRight}});
  size_t online = 0;
  for (const v1::DeviceSummary& d : response.devices()) {
    if (d.online()) ++online;
    table.AddRow({d.device_id(), d.model().empty() ? "-" : d.model(), d.platform().empty() ? "-" : d.platform(),
                  d.online() ? "online" : "offline", d.last_capture_at().empty() ? "never" : d.last_capture_at(),
                  FormatKbOrDash(LastTotal(d)), std::to_string(d.capture_count())});
  }
  if (table.row_count() == 0) {
    if (filtered) return "no device matches the --where terms (`memfleet devices` lists them all)\n";
    return "no devices known to the server yet (start memfleet-agent on a device)\n";
  }
  std::string losses;  // never silent: a capture a full spool dropped is a hole in the device's history
  for (const v1::DeviceSummary& d : response.devices()) {
    if (d.dropped_captures() == 0) continue;
    losses += d.device_id() + ": " + std::to_string(d.dropped_captures()) +
              " captures dropped unsent by its full spool (raise memfleet-agent --spool-max-mb or fix the link)\n";
  }
  return table.Render() + "\n" + std::to_string(response.devices_size()) + " devices, " + std::to_string(online) +
         " online\n" + TerminalSafeLines(losses);
}

int RunDevices(const DevicesArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<OutputFormat> format = OutputFormatOf(args.common);
  if (!format.ok()) return PrintFailure(format.status(), "devices", err);
  absl::StatusOr<v1::DeviceSelector> selector = ParseWhere(args.where);
  if (!selector.ok()) return PrintFailure(selector.status(), "devices", err);
  absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(args.common);
  if (!client.ok()) return PrintFailure(client.status(), "devices", err);

  v1::ListDevicesRequest request;
  *request.mutable_selector() = *selector;
  absl::StatusOr<v1::ListDevicesResponse> response = (*client)->ListDevices(request);
  if (!response.ok()) return PrintFailure(response.status(), "devices", err);
  out << RenderDevices(*response, *format, !args.where.empty());
  return kExitOk;
}

}  // namespace memfleet::cli
