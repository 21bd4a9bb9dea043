#include "cli/commands/devices_command.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_join.h"
#include "chart/figure_text.h"
#include "cli/device_selector.h"
#include "cli/output_format.h"
#include "nlohmann/json.hpp"

namespace memfleet::cli {
namespace {

using nlohmann::json;

std::optional<int64_t> LastTotal(const v1::DeviceSummary& d) {
  return d.last_total_kb() >= 0 ? std::optional<int64_t>(d.last_total_kb()) : std::nullopt;
}

json SkewJson(const v1::DeviceSummary& d) { return d.has_clock_skew_s() ? json(d.clock_skew_s()) : json(nullptr); }

// "+12 s", "-3 min", "+2.5 h", "+2914484 days"; "-" when unknown. Signed: + is a device clock ahead.
std::string FormatSkew(const v1::DeviceSummary& d) {
  if (!d.has_clock_skew_s()) return "-";
  const int64_t s = d.clock_skew_s();
  const char* sign = s > 0 ? "+" : (s < 0 ? "-" : "");
  // The magnitude as a double: -INT64_MIN does not fit an int64_t.
  const double a = s < 0 ? -static_cast<double>(s) : static_cast<double>(s);
  char buf[48];
  if (a < 120) {
    snprintf(buf, sizeof(buf), "%s%.0f s", sign, a);
  } else if (a < 7200) {
    snprintf(buf, sizeof(buf), "%s%.0f min", sign, a / 60);
  } else if (a < 2 * 86400) {
    snprintf(buf, sizeof(buf), "%s%.1f h", sign, a / 3600);
  } else {
    snprintf(buf, sizeof(buf), "%s%.0f days", sign, a / 86400);
  }
  return buf;
}

// A fingerprint (brand/product/device:release/id/incremental:type/tags) without its brand/product/device
// head, which the MODEL column already says: "14/UQ1A.240205.004/11269751:user/release-keys".
std::string ShortBuild(const std::string& fingerprint) {
  if (fingerprint.empty()) return "-";
  const size_t colon = fingerprint.find(':');
  return colon == std::string::npos || colon + 1 == fingerprint.size() ? fingerprint : fingerprint.substr(colon + 1);
}

}  // namespace

std::string RenderDevices(const v1::ListDevicesResponse& response, OutputFormat format, bool filtered, bool retired) {
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
                         {"last_total_kb", KbJson(total)},
                         {"capture_count", d.capture_count()},
                         {"dropped_captures", d.dropped_captures()},
                         {"clock_skew_s", SkewJson(d)},
                         {"refused_streams", d.refused_streams()},
                         {"future_captures_refused", d.future_captures_refused()},
                         {"manufacturer", d.manufacturer()},
                         {"build_type", d.build_type()},
                         {"abi", d.abi()},
                         {"android_sdk", d.android_sdk()},
                         {"access", d.access()},
                         {"selinux", d.selinux()},
                         {"server", d.server_id().empty() ? json(nullptr) : json(d.server_id())},
                         {"retired_at", d.retired_at().empty() ? json(nullptr) : json(d.retired_at())},
                         {"tier", d.tier().empty() ? json(nullptr) : json(d.tier())},
                         {"agent_tier", d.agent_tier().empty() ? json(nullptr) : json(d.agent_tier())}});
    }
    return devices.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  }
  if (format == OutputFormat::kCsv) {
    std::string out = CsvRow({"device_id",     "model",           "platform",
                              "soc",           "online",          "last_capture_at",
                              "last_total_kb", "capture_count",   "build_fingerprint",
                              "kernel",        "agent_version",   "dropped_captures",
                              "clock_skew_s",  "refused_streams", "future_captures_refused",
                              "manufacturer",  "build_type",      "abi",
                              "android_sdk",   "access",          "selinux",
                              "server",        "retired_at",      "tier",
                              "agent_tier"});
    for (const v1::DeviceSummary& d : response.devices()) {
      out += CsvRow({d.device_id(),
                     d.model(),
                     d.platform(),
                     d.soc(),
                     d.online() ? "true" : "false",
                     d.last_capture_at(),
                     CsvKb(LastTotal(d)),
                     std::to_string(d.capture_count()),
                     d.build_fingerprint(),
                     d.kernel(),
                     d.agent_version(),
                     std::to_string(d.dropped_captures()),
                     d.has_clock_skew_s() ? std::to_string(d.clock_skew_s()) : "",
                     std::to_string(d.refused_streams()),
                     std::to_string(d.future_captures_refused()),
                     d.manufacturer(),
                     d.build_type(),
                     d.abi(),
                     d.android_sdk(),
                     d.access(),
                     d.selinux(),
                     d.server_id(),
                     d.retired_at(),
                     d.tier(),
                     d.agent_tier()});
    }
    return out;
  }
  // Servers sharing one database say which holds each online agent: a SERVER column then.
  bool fleet = false;
  for (const v1::DeviceSummary& d : response.devices()) fleet = fleet || !d.server_id().empty();
  std::vector<TextTable::Column> columns = {{"DEVICE"}, {"MODEL"}, {"PLATFORM"}, {"BUILD"},
                                            {"ACCESS"}, {"TIER"},  {"STATE"}};
  if (fleet) columns.push_back({"SERVER"});
  for (TextTable::Column c :
       {TextTable::Column{"LAST CAPTURE"}, TextTable::Column{"CLOCK SKEW", TextTable::kRight},
        TextTable::Column{"TOTAL KB", TextTable::kRight}, TextTable::Column{"CAPTURES", TextTable::kRight}}) {
    columns.push_back(std::move(c));
  }
  TextTable table(std::move(columns));
  size_t online = 0;
  for (const v1::DeviceSummary& d : response.devices()) {
    if (d.online()) ++online;
    std::vector<std::string> row = {d.device_id(),
                                    d.model().empty() ? "-" : d.model(),
                                    d.platform().empty() ? "-" : d.platform(),
                                    ShortBuild(d.build_fingerprint()),
                                    d.access().empty() ? "-" : d.access(),
                                    d.tier().empty() ? "-" : d.tier(),
                                    !d.retired_at().empty() ? "retired " + d.retired_at()
                                    : d.online()            ? "online"
                                                            : "offline"};
    if (fleet) row.push_back(d.server_id().empty() ? "-" : d.server_id());
    for (std::string cell : {d.last_capture_at().empty() ? chart::kNoCapture : d.last_capture_at(), FormatSkew(d),
                             FormatKbOrDash(LastTotal(d)), std::to_string(d.capture_count())}) {
      row.push_back(std::move(cell));
    }
    table.AddRow(std::move(row));
  }
  if (table.row_count() == 0) {
    if (retired) return filtered ? "no retired device matches the --where terms\n" : "no retired devices\n";
    if (filtered) return "no device matches the --where terms (`memfleet devices` lists them all)\n";
    return "no devices known to the server yet (start memfleet-agent on a device)\n";
  }
  std::string losses;  // never silent: a capture a full spool dropped is a hole in the device's history
  for (const v1::DeviceSummary& d : response.devices()) {
    if (d.dropped_captures() == 0) continue;
    losses += d.device_id() + ": " + std::to_string(d.dropped_captures()) +
              " captures dropped unsent by its full spool (raise memfleet-agent --spool-max-mb or fix the link)\n";
  }
  for (const v1::DeviceSummary& d : response.devices()) {
    if (d.refused_streams() > 0) {
      losses += d.device_id() + ": " + std::to_string(d.refused_streams()) +
                " agent streams refused: another device uses this device id (" + d.refused_stream_facts() +
                "); give each device its own memfleet-agent --device-id\n";
    }
    if (d.future_captures_refused() > 0) {
      losses += d.device_id() + ": " + std::to_string(d.future_captures_refused()) +
                " captures refused for a time ahead of the server's clock (clock skew " + FormatSkew(d) +
                "); fix the device's clock\n";
    }
  }
  if (retired) {
    return table.Render() + "\n" + std::to_string(response.devices_size()) +
           " retired devices (their history: `memfleet report DEVICE`, `memfleet trend DEVICE`)\n";
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
  request.set_retired(args.retired);
  absl::StatusOr<v1::ListDevicesResponse> response = (*client)->ListDevices(request);
  if (!response.ok()) return PrintFailure(response.status(), "devices", err);
  out << RenderDevices(*response, *format, !args.where.empty(), args.retired);
  return kExitOk;
}

int RunDevicesRetire(const DevicesRetireArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<OutputFormat> format = OutputFormatOf(args.common);
  if (!format.ok()) return PrintFailure(format.status(), "devices retire", err);
  absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(args.common);
  if (!client.ok()) return PrintFailure(client.status(), "devices retire", err);
  v1::RetireDeviceRequest request;
  request.set_device_id(args.device_id);
  request.set_purge(args.purge);
  absl::StatusOr<v1::RetireDeviceResponse> retired = (*client)->RetireDevice(request);
  if (!retired.ok()) {
    const int code = PrintFailure(retired.status(), "devices retire", err);
    // A request the server refuses (its agent is online) is the caller's to fix: a usage error.
    return absl::IsFailedPrecondition(retired.status()) ? kExitUsage : code;
  }
  const std::vector<std::string> revoked(retired->revoked_token_names().begin(), retired->revoked_token_names().end());
  if (*format == OutputFormat::kJson) {
    out << json({{"device_id", args.device_id},
                 {"retired_at", retired->retired_at()},
                 {"purged", retired->purged()},
                 {"captures_deleted", retired->captures_deleted()},
                 {"revoked_tokens", revoked}})
               .dump(2, ' ', false, json::error_handler_t::replace)
        << "\n";
    return kExitOk;
  }
  if (*format == OutputFormat::kCsv) {
    out << CsvRow({"device_id", "retired_at", "purged", "captures_deleted", "revoked_tokens"})
        << CsvRow({args.device_id, retired->retired_at(), retired->purged() ? "true" : "false",
                   std::to_string(retired->captures_deleted()), absl::StrJoin(revoked, " ")});
    return kExitOk;
  }
  if (retired->purged()) {
    out << TerminalSafe(args.device_id) << ": retired and purged, " << retired->captures_deleted()
        << " captures deleted\n";
  } else {
    out << TerminalSafe(args.device_id) << ": retired at " << retired->retired_at()
        << "; no longer in devices, fleet, the dashboard or /metrics, its history still read by `memfleet report "
        << TerminalSafe(args.device_id) << "` (`memfleet devices --retired` lists it; its agent connecting again "
        << "makes it active)\n";
  }
  // Its phone's token no longer works: deploying it again (`agents deploy --mint-tokens`) mints a new one.
  for (const std::string& name : revoked) out << "agent token " << TerminalSafe(name) << " revoked\n";
  return kExitOk;
}

CommandLine RegisterDevicesCommand(CLI::App& app) {
  auto args = std::make_shared<DevicesArgs>();
  CLI::App* cmd = AddServerCommand(&app, "devices", "List the devices the server knows: online/offline, last capture",
                                   args->common);
  AddWhereOption(cmd, args->where);
  cmd->add_flag("--retired", args->retired, "list the retired devices (`devices retire`) instead");
  auto retire = std::make_shared<DevicesRetireArgs>();
  CLI::App* retire_cmd = AddServerCommand(
      cmd, "retire",
      "A device that left the farm: off devices, fleet, the dashboard and /metrics, its history kept (admin)",
      retire->common);
  retire_cmd->add_option("DEVICE", retire->device_id, "device id (see `memfleet devices`)")->required();
  retire_cmd->add_flag("--purge", retire->purge, "also delete its history and the device (irreversible)");
  return {cmd, [args, retire, retire_cmd](const ServerArgs& global, std::ostream& out, std::ostream& err) {
            InheritGlobalOptions(global, args->common);
            if (!*retire_cmd) return RunDevices(*args, out, err);
            // `memfleet devices --server S retire D`: the options given to `devices` hold for `retire` too.
            InheritGlobalOptions(args->common, retire->common);
            return RunDevicesRetire(*retire, out, err);
          }};
}

}  // namespace memfleet::cli
