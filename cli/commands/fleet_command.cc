#include "cli/commands/fleet_command.h"

#include <algorithm>
#include <memory>
#include <string>

#include "cli/commands/baseline_command.h"
#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "chart/figure_text.h"
#include "cli/device_selector.h"
#include "cli/output_format.h"
#include "report/tier_mix.h"
#include "nlohmann/json.hpp"

namespace memfleet::cli {
namespace {

using nlohmann::json;

bool ValidFigure(std::string_view figure) {
  return !figure.empty() && std::all_of(figure.begin(), figure.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::optional<int64_t> ValueOf(const v1::FleetRow& row) {
  return row.value_known() ? std::optional<int64_t>(row.value_kb()) : std::nullopt;
}

// The tiers of a group's figures (docs/accounting.md section 9), its devices of unknown tier counted apart.
report::TierCounts TierCountsOf(const v1::FleetGroup& g) {
  report::TierCounts counts;
  for (const auto& [tier, devices] : g.tier_devices()) counts.Add(tier, devices);
  return counts;
}

// What the table says under it of a group whose figures may not compare: one of both tiers, with the way to
// split it, or one of a tier with devices of unknown tier beside it, with the way to know theirs. "" else.
std::string TierSentence(const v1::FleetGroup& g) {
  const report::TierCounts counts = TierCountsOf(g);
  const std::string group = TextOrDash(g.key());
  if (counts.Mixed()) {
    return report::MixedTiersSentence(group, counts) + "; split it with --where tier=kernel or --where tier=dumpsys";
  }
  if (counts.PartlyUnknown()) {
    return report::UnknownTiersSentence(group, counts) + " (memfleet-server --reaccount stores their tier)";
  }
  return "";
}

// Its devices by tier for --json: {"kernel": 2, "dumpsys": 1}, "unknown" for those of no known tier.
json TiersJson(const v1::FleetGroup& g) {
  json tiers = json::object();
  for (const auto& [tier, devices] : g.tier_devices()) tiers[tier.empty() ? "unknown" : tier] = devices;
  return tiers;
}

}  // namespace

absl::StatusOr<v1::FleetRequest> MakeFleetRequest(const FleetArgs& args) {
  const bool device_metric = absl::StartsWith(args.metric, "device.");
  const bool process_metric = absl::StartsWith(args.metric, "process.");
  if ((!device_metric && !process_metric) ||
      !ValidFigure(std::string_view(args.metric).substr(args.metric.find('.') + 1))) {
    return absl::InvalidArgumentError("--metric \"" + args.metric +
                                      "\": give device.<figure> (device.total_kb, device.kernel_kb, ...) or "
                                      "process.<figure> with --process NAME (process.total_kb, process.gl_kb, ...)");
  }
  if (process_metric && args.process_name.empty()) {
    return absl::InvalidArgumentError("--metric " + args.metric +
                                      " is a process figure: name the process with --process NAME");
  }
  if (device_metric && !args.process_name.empty()) {
    return absl::InvalidArgumentError("--process is for process.<figure> metrics; " + args.metric +
                                      " is a device figure (did you mean --metric process." + args.metric.substr(7) +
                                      "?)");
  }
  if (args.group_by != "model" && args.group_by != "platform" && args.group_by != "soc" && args.group_by != "build") {
    return absl::InvalidArgumentError("--group-by \"" + args.group_by + "\": use model, platform, soc or build");
  }
  absl::StatusOr<v1::DeviceSelector> selector = ParseWhere(args.where);
  if (!selector.ok()) return selector.status();
  v1::FleetRequest request;
  request.set_metric(args.metric);
  request.set_group_by(args.group_by);
  request.set_process_name(args.process_name);
  *request.mutable_selector() = *selector;
  return request;
}

std::string RenderFleet(const FleetArgs& args, const v1::FleetResponse& response, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    json groups = json::array();
    for (const v1::FleetGroup& g : response.groups()) {
      const bool any = g.devices() > 0;
      groups.push_back({{"key", g.key()},
                        {"devices", g.devices()},
                        {"unknown", g.unknown()},
                        {"min_kb", any ? json(g.min_kb()) : json(nullptr)},
                        {"p50_kb", any ? json(g.p50_kb()) : json(nullptr)},
                        {"p90_kb", any ? json(g.p90_kb()) : json(nullptr)},
                        {"max_kb", any ? json(g.max_kb()) : json(nullptr)},
                        {"tiers", TiersJson(g)},
                        {"mixed_tiers", TierCountsOf(g).Mixed()},
                        {"unknown_tiers", TierCountsOf(g).PartlyUnknown()}});
    }
    json rows = json::array();
    for (const v1::FleetRow& r : response.rows()) {
      std::optional<int64_t> v = ValueOf(r);
      rows.push_back({{"device_id", r.device_id()},
                      {"model", r.model()},
                      {"platform", r.platform()},
                      {"captured_at", r.captured_at()},
                      {"value_kb", KbJson(v)}});
    }
    json out = {{"metric", args.metric},
                {"group_by", args.group_by},
                {"process", args.process_name.empty() ? json(nullptr) : json(args.process_name)},
                {"groups", std::move(groups)},
                {"rows", std::move(rows)}};
    return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  }
  if (format == OutputFormat::kCsv) {
    if (args.rows) {
      std::string out = CsvRow({"device_id", "model", "platform", "captured_at", "value_kb"});
      for (const v1::FleetRow& r : response.rows()) {
        out += CsvRow({r.device_id(), r.model(), r.platform(), r.captured_at(), CsvKb(ValueOf(r))});
      }
      return out;
    }
    // The tier columns come last, so that a script reading the columns before them by position still reads them.
    std::string out = CsvRow({args.group_by, "devices", "unknown", "min_kb", "p50_kb", "p90_kb", "max_kb",
                              "devices_kernel", "devices_dumpsys", "devices_unknown"});
    for (const v1::FleetGroup& g : response.groups()) {
      const bool any = g.devices() > 0;
      const report::TierCounts tiers = TierCountsOf(g);
      out += CsvRow({g.key(), std::to_string(g.devices()), std::to_string(g.unknown()),
                     any ? std::to_string(g.min_kb()) : "", any ? std::to_string(g.p50_kb()) : "",
                     any ? std::to_string(g.p90_kb()) : "", any ? std::to_string(g.max_kb()) : "",
                     std::to_string(tiers.kernel), std::to_string(tiers.dumpsys), std::to_string(tiers.unknown)});
    }
    return out;
  }
  std::string out = TerminalSafe(args.metric + (args.process_name.empty() ? "" : " of " + args.process_name) + " by " +
                                 args.group_by) +
                    " (kB, latest report of each device)\n";
  TextTable groups({{absl::AsciiStrToUpper(args.group_by)},
                    {"DEVICES", TextTable::kRight},
                    {"MIN", TextTable::kRight},
                    {"P50", TextTable::kRight},
                    {"P90", TextTable::kRight},
                    {"MAX", TextTable::kRight}});
  for (const v1::FleetGroup& g : response.groups()) {
    const bool any = g.devices() > 0;
    groups.AddRow({TextOrDash(g.key()), chart::CountWithUnknown(g.devices(), g.unknown()),
                   any ? FormatKb(g.min_kb()) : chart::kNoValue, any ? FormatKb(g.p50_kb()) : chart::kNoValue,
                   any ? FormatKb(g.p90_kb()) : chart::kNoValue, any ? FormatKb(g.max_kb()) : chart::kNoValue});
  }
  out += groups.Render(2);
  // A group of both tiers is two populations in one row, and one with devices of unknown tier may be: said
  // under the table.
  for (const v1::FleetGroup& g : response.groups()) {
    const std::string sentence = TierSentence(g);
    if (!sentence.empty()) out += TerminalSafe(sentence) + "\n";
  }
  if (args.rows) {
    TextTable rows({{"DEVICE"}, {"MODEL"}, {"PLATFORM"}, {"CAPTURED"}, {"VALUE", TextTable::kRight}});
    for (const v1::FleetRow& r : response.rows()) {
      rows.AddRow({r.device_id(), TextOrDash(r.model()), TextOrDash(r.platform()), r.captured_at(),
                   FormatKbOrDash(ValueOf(r))});
    }
    out += "\n" + rows.Render(2);
  }
  return out;
}

int RunFleet(const FleetArgs& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<OutputFormat> format = OutputFormatOf(args.common);
  if (!format.ok()) return PrintFailure(format.status(), "fleet", err);
  absl::StatusOr<v1::FleetRequest> request = MakeFleetRequest(args);
  if (!request.ok()) return PrintFailure(request.status(), "fleet", err);
  absl::StatusOr<std::unique_ptr<ServerClient>> client = ConnectToServer(args.common);
  if (!client.ok()) return PrintFailure(client.status(), "fleet", err);
  absl::StatusOr<v1::FleetResponse> response = (*client)->GetFleet(*request);
  if (!response.ok()) return PrintFailure(response.status(), "fleet", err);
  if (response->groups_size() == 0 && response->rows_size() == 0) {
    return PrintFailure(
        absl::NotFoundError("no stored report matches" + std::string(args.where.empty() ? "" : " the --where terms") +
                            (args.process_name.empty() ? "" : " with a process named \"" + args.process_name + "\"") +
                            " (run `memfleet sweep` first)"),
        "fleet", err);
  }
  FleetArgs shown = args;
  if (!response->process_name().empty()) shown.process_name = response->process_name();  // as resolved
  out << RenderFleet(shown, *response, *format);
  return kExitOk;
}

namespace {

int RunFleetCommand(const FleetArgs& args, std::ostream& out, std::ostream& err) {
  return args.baseline ? RunFleetWithBaseline(args, args.scheme, out, err) : RunFleet(args, out, err);
}

}  // namespace

CommandLine RegisterFleetCommand(CLI::App& app) {
  auto args = std::make_shared<FleetArgs>();
  CLI::App* cmd = AddServerCommand(&app, "fleet", "A figure of each device's latest report, per group: min/p50/p90/max",
                                   args->common);
  AddWhereOption(cmd, args->where);
  cmd->add_option("--metric", args->metric, "device.<figure> or process.<figure> (with --process)")
      ->capture_default_str();
  cmd->add_option("--group-by", args->group_by, "model, platform, soc or build")->capture_default_str();
  cmd->add_option("--process", args->process_name, "process name for process.<figure> metrics");
  cmd->add_flag("--rows", args->rows, "also list each device's value, largest first");
  cmd->add_flag("--baseline", args->baseline,
                "list each device's value against the latest baseline's budget for --process (docs/baselines.md)");
  cmd->add_option("--scheme", args->scheme, "with --baseline: budget scheme 1 or 2")->check(CLI::Range(1, 2));
  return ServerCommandLine(cmd, args, &RunFleetCommand);
}

}  // namespace memfleet::cli
