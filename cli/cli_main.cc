// memfleet: the user's tool. Only wires the command line to the commands.
#include <unistd.h>

#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/commands/account_command.h"
#include "cli/commands/agents_cli.h"
#include "cli/commands/baseline_command.h"
#include "cli/commands/devices_command.h"
#include "cli/commands/fleet_command.h"
#include "cli/commands/process_command.h"
#include "cli/commands/report_command.h"
#include "cli/commands/sweep_command.h"
#include "cli/commands/trend_command.h"

namespace {

// The same options on the app itself and on each server command, so that they work before the
// subcommand as well as after it (`memfleet --server lab:7070 devices`), as in git or kubectl; main()
// hands those given before to the subcommand's (InheritGlobalOptions).
void AddServerOptions(CLI::App* cmd, memfleet::cli::ServerArgs& args) {
  cmd->add_option("--server", args.server, "memfleet-server to ask, HOST:PORT (default: $MEMFLEET_SERVER)");
  cmd->add_flag("--json", args.json, "print JSON instead of the table");
  cmd->add_flag("--csv", args.csv, "print CSV (RFC 4180) instead of the table");
  cmd->add_option("--ca-cert", args.ca_cert, "PEM CA of the server's certificate: TLS (default: $MEMFLEET_CA_CERT)");
  cmd->add_option("--token", args.token, "read or admin token (default: --token-file, else $MEMFLEET_TOKEN)");
  cmd->add_option("--token-file", args.token_file, "file holding the token");
}

void AddWhereOption(CLI::App* cmd, std::vector<std::string>& where) {
  cmd->add_option("--where", where,
                  "select devices: KEY=VALUE with KEY model, platform, soc, device_id or build (VALUE* = prefix), or "
                  "label.NAME (captures carrying label NAME=VALUE); repeat to AND")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"memfleet: memory accounting for Android device farms"};
  app.require_subcommand(1);
  memfleet::cli::ServerArgs global;
  AddServerOptions(&app, global);

  memfleet::cli::AccountArgs account;
  CLI::App* account_cmd = app.add_subcommand(
      "account", "Account one capture offline: a capture tree, or a live root such as / (no server needed)");
  account_cmd->add_option("TREE", account.root, "capture tree folder (holds capture.json) or device root")->required();
  account_cmd->add_flag("--live-root", account.live_root,
                        "TREE is not / but the root of a running system (a chroot, a mounted device root): "
                        "read it live, run its system/bin/dumpsys and am, write its proc/dma_heap/rss_pid");
  account_cmd->add_flag("--json", account.json,
                        "print the report JSON (docs/capture-format.md) instead of the table");
  account_cmd->add_option("--top", account.top, "processes shown in the table (0 = all)")->capture_default_str();
  account_cmd->add_option("--graphics-libs", account.graphics_libs_file,
                          "graphics library list to use instead of the built-in one");
  account_cmd->add_option("--android-version", account.android_version,
                          "formulas of the dumpsys view (14 default; 16 for the Android 16 deltas)")
      ->check(CLI::Range(12, 16));

  memfleet::cli::DevicesArgs devices;
  CLI::App* devices_cmd = app.add_subcommand("devices", "List the devices the server knows: online/offline, last capture");
  AddServerOptions(devices_cmd, devices.common);
  AddWhereOption(devices_cmd, devices.where);
  devices_cmd->add_flag("--retired", devices.retired, "list the retired devices (`devices retire`) instead");
  memfleet::cli::DevicesRetireArgs retire;
  CLI::App* retire_cmd = devices_cmd->add_subcommand(
      "retire", "A device that left the farm: off devices, fleet, the dashboard and /metrics, its history kept (admin)");
  AddServerOptions(retire_cmd, retire.common);
  retire_cmd->add_option("DEVICE", retire.device_id, "device id (see `memfleet devices`)")->required();
  retire_cmd->add_flag("--purge", retire.purge, "also delete its history and the device (irreversible)");

  memfleet::cli::SweepArgs sweep;
  CLI::App* sweep_cmd =
      app.add_subcommand("sweep", "Capture every matching online device now, then rank them by total_kb");
  AddServerOptions(sweep_cmd, sweep.common);
  AddWhereOption(sweep_cmd, sweep.where);
  sweep_cmd->add_option("--label", sweep.labels, "KEY=VALUE put on every capture the sweep stores (repeatable): run=1234")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sweep_cmd->add_option("--deadline", sweep.deadline_s, "seconds to wait for the devices' captures")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();

  memfleet::cli::ReportArgs report;
  CLI::App* report_cmd = app.add_subcommand("report", "A device's stored report (the latest, or at a time)");
  AddServerOptions(report_cmd, report.common);
  report_cmd->add_option("DEVICE", report.device_id, "device id (see `memfleet devices`)")->required();
  report_cmd->add_option("--at", report.at, "the latest report at or before TIME: RFC 3339, or a span back such as 24h");
  report_cmd->add_option("--capture", report.capture_id, "one exact capture id (wins over --at and --label)");
  report_cmd->add_option("--label", report.labels,
                         "KEY=VALUE: the latest capture carrying the label (repeat to AND): run=1234")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  report_cmd->add_option("--top", report.top, "processes shown in the table (0 = all)")->capture_default_str();

  memfleet::cli::ProcessArgs process;
  CLI::App* process_cmd = app.add_subcommand("process", "One process's figures in a device's latest report");
  AddServerOptions(process_cmd, process.common);
  process_cmd->add_option("DEVICE", process.device_id, "device id")->required();
  process_cmd->add_option("NAME", process.process_name, "process name as in the report")->required();
  process_cmd->add_option("--at", process.at, "the latest report at or before TIME: RFC 3339, or a span back such as 24h");

  memfleet::cli::TrendArgs trend;
  CLI::App* trend_cmd = app.add_subcommand("trend", "One process figure over a device's stored captures");
  AddServerOptions(trend_cmd, trend.common);
  trend_cmd->add_option("DEVICE", trend.device_id, "device id")->required();
  trend_cmd->add_option("--process", trend.process_name, "process name")->required();
  trend_cmd->add_option("--metric", trend.metric, "process figure: total_kb, pss_kb, gl_kb, dma_kb, ...")
      ->capture_default_str();
  trend_cmd->add_option("--since", trend.since, "from a span back (7d, 24h, 90m) or an RFC 3339 time; default: all");
  trend_cmd->add_option("--limit", trend.limit, "at most this many points (0 = all)");
  trend_cmd->add_option("--svg", trend.svg_path, "also write an SVG line chart to FILE");

  memfleet::cli::FleetArgs fleet;
  CLI::App* fleet_cmd =
      app.add_subcommand("fleet", "A figure of each device's latest report, per group: min/p50/p90/max");
  AddServerOptions(fleet_cmd, fleet.common);
  AddWhereOption(fleet_cmd, fleet.where);
  fleet_cmd->add_option("--metric", fleet.metric, "device.<figure> or process.<figure> (with --process)")
      ->capture_default_str();
  fleet_cmd->add_option("--group-by", fleet.group_by, "model, platform, soc or build")->capture_default_str();
  fleet_cmd->add_option("--process", fleet.process_name, "process name for process.<figure> metrics");
  fleet_cmd->add_flag("--rows", fleet.rows, "also list each device's value, largest first");
  bool fleet_baseline = false;
  int fleet_scheme = 1;
  fleet_cmd->add_flag("--baseline", fleet_baseline,
                      "list each device's value against the latest baseline's budget for --process (docs/baselines.md)");
  fleet_cmd->add_option("--scheme", fleet_scheme, "with --baseline: budget scheme 1 or 2")->check(CLI::Range(1, 2));

  // Baselines (docs/baselines.md)
  CLI::App* baseline_cmd = app.add_subcommand("baseline", "Memory baselines: import, show, check stored reports against them");
  baseline_cmd->require_subcommand(1);
  memfleet::cli::BaselineImportArgs baseline_import;
  CLI::App* baseline_import_cmd = baseline_cmd->add_subcommand("import", "Validate a baseline file and store it as a new version (admin)");
  AddServerOptions(baseline_import_cmd, baseline_import.common);
  baseline_import_cmd->add_option("FILE", baseline_import.file, "baseline file (JSON, docs/baselines.md)")->required();
  memfleet::cli::BaselineShowArgs baseline_show;
  CLI::App* baseline_show_cmd = baseline_cmd->add_subcommand("show", "A stored baseline (the latest, or --version N)");
  AddServerOptions(baseline_show_cmd, baseline_show.common);
  baseline_show_cmd->add_option("--version", baseline_show.version, "baseline version (default: the latest)");
  memfleet::cli::BaselineCheckArgs baseline_check;
  CLI::App* baseline_check_cmd = baseline_cmd->add_subcommand(
      "check", "Stored reports against the baseline: what is over budget, by how much, on how many devices (exit 3)");
  AddServerOptions(baseline_check_cmd, baseline_check.common);
  AddWhereOption(baseline_check_cmd, baseline_check.where);
  baseline_check_cmd
      ->add_option("--scheme", baseline_check.scheme, "which budgets apply: 1 or 2 (docs/accounting.md section 6)")
      ->capture_default_str();
  baseline_check_cmd->add_option("--sweep", baseline_check.sweep_id, "the captures of one sweep");
  baseline_check_cmd->add_option("--since", baseline_check.since,
                                 "devices whose latest report is at most this old (24h, 7d) or since an RFC 3339 time");
  baseline_check_cmd->add_option("--version", baseline_check.version, "baseline version (default: the latest)");

  memfleet::cli::RegressionsArgs regressions;
  CLI::App* regressions_cmd = app.add_subcommand(
      "regressions", "A process's figures across a model's devices, build A against build B: changes beyond the noise (exit 3)");
  AddServerOptions(regressions_cmd, regressions.common);
  AddWhereOption(regressions_cmd, regressions.where);
  regressions_cmd->add_option("--process", regressions.process_name, "process name as in the report")->required();
  regressions_cmd->add_option("--build", regressions.build_a, "the build compared against (A)");
  regressions_cmd->add_option("--vs", regressions.build_b, "the build under test (B)");
  regressions_cmd->add_option("--model", regressions.model, "only this device model");
  regressions_cmd->add_option("--since", regressions.since,
                              "only reports since then: 7d, 24h, 30m or an RFC 3339 time (default: all)");

  memfleet::cli::AgentsCli agents(&app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : memfleet::cli::kExitUsage;
  }
  for (auto [cmd, args] : {std::pair{devices_cmd, &devices.common}, std::pair{retire_cmd, &retire.common},
                           std::pair{sweep_cmd, &sweep.common},
                           std::pair{report_cmd, &report.common}, std::pair{process_cmd, &process.common},
                           std::pair{trend_cmd, &trend.common}, std::pair{fleet_cmd, &fleet.common},
                           std::pair{baseline_import_cmd, &baseline_import.common},
                           std::pair{baseline_show_cmd, &baseline_show.common},
                           std::pair{baseline_check_cmd, &baseline_check.common},
                           std::pair{regressions_cmd, &regressions.common}}) {
    if (*cmd) memfleet::cli::InheritGlobalOptions(global, *args);
  }
  if (*account_cmd) {
    // Offline: of the global options only --json means something to it.
    account.json = account.json || global.json;
    global.json = false;
    if (memfleet::cli::AnyOptionSet(global)) {
      std::cerr << "memfleet account: runs offline; --server, --ca-cert, --token, --token-file and --csv do not "
                   "apply\n";
      return memfleet::cli::kExitUsage;
    }
    return memfleet::cli::RunAccount(account, std::cout, std::cerr);
  }
  if (agents.chosen()) return agents.Run(global, std::cout, std::cerr);
  if (*retire_cmd) {
    // `memfleet devices --server S retire D`: the options given to `devices` hold for `retire` too.
    memfleet::cli::InheritGlobalOptions(devices.common, retire.common);
    return memfleet::cli::RunDevicesRetire(retire, std::cout, std::cerr);
  }
  if (*devices_cmd) return memfleet::cli::RunDevices(devices, std::cout, std::cerr);
  if (*sweep_cmd) {
    sweep.progress_tty = ::isatty(STDERR_FILENO) == 1;
    return memfleet::cli::RunSweep(sweep, std::cout, std::cerr);
  }
  if (*report_cmd) return memfleet::cli::RunReport(report, std::cout, std::cerr);
  if (*process_cmd) return memfleet::cli::RunProcess(process, std::cout, std::cerr);
  if (*trend_cmd) return memfleet::cli::RunTrend(trend, std::cout, std::cerr);
  if (*fleet_cmd) {
    if (fleet_baseline) return memfleet::cli::RunFleetWithBaseline(fleet, fleet_scheme, std::cout, std::cerr);
    return memfleet::cli::RunFleet(fleet, std::cout, std::cerr);
  }
  if (*baseline_import_cmd) return memfleet::cli::RunBaselineImport(baseline_import, std::cout, std::cerr);
  if (*baseline_show_cmd) return memfleet::cli::RunBaselineShow(baseline_show, std::cout, std::cerr);
  if (*baseline_check_cmd) return memfleet::cli::RunBaselineCheck(baseline_check, std::cout, std::cerr);
  if (*regressions_cmd) return memfleet::cli::RunRegressions(regressions, std::cout, std::cerr);
  return memfleet::cli::kExitUsage;
}
