#include "cli/commands/account_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "CLI/CLI.hpp"
#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/collector.h"
#include "agent/reader/device_root_fs.h"
#include "agent/reader/root_kind.h"
#include "cli/commands/command_line.h"
#include "cli/output_format.h"
#include "cli/report_table.h"
#include "common/utc_time.h"
#include "accounting/account.h"
#include "accounting/graphics_libraries.h"
#include "report/report_json.h"

namespace memfleet::cli {
namespace {

bool IsDir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

}  // namespace

int RunAccount(const AccountArgs& args, std::ostream& out, std::ostream& err) {
  if (args.root.empty()) {
    err << "memfleet account: give a capture tree or a device root (e.g. /)\n";
    return kExitUsage;
  }
  if (!IsDir(args.root)) {
    err << "memfleet account: " << args.root << ": "
        << (access(args.root.c_str(), F_OK) == 0 ? "not a directory" : std::strerror(errno))
        << " (expected a capture tree folder holding capture.json and proc/, or a device root like /)\n";
    return kExitFailed;
  }
  std::string root = args.root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  absl::StatusOr<agent::RootKind> kind = agent::ChooseRootKind(root, args.live_root);
  if (!kind.ok()) {
    err << "memfleet account: " << kind.status().message() << "\n";
    return kExitFailed;
  }
  const bool tree = *kind == agent::RootKind::kCaptureTree;
  if (!tree && !IsFile(root + "/proc/meminfo")) {
    err << "memfleet account: " << args.root << " is not a device root (no proc/meminfo)\n";
    return kExitFailed;
  }

  accounting::GraphicsLibraries custom_libs;
  accounting::AccountOptions options;
  options.android_version = args.android_version;
  if (!args.graphics_libs_file.empty()) {
    std::ifstream in(args.graphics_libs_file, std::ios::binary);
    if (!in) {
      err << "memfleet account: --graphics-libs " << args.graphics_libs_file << ": " << std::strerror(errno) << "\n";
      return kExitUsage;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    absl::StatusOr<accounting::GraphicsLibraries> libs = accounting::GraphicsLibraries::Parse(ss.str());
    if (!libs.ok()) {
      err << "memfleet account: --graphics-libs " << args.graphics_libs_file << ": " << libs.status().message() << "\n";
      return kExitUsage;
    }
    custom_libs = *std::move(libs);
    options.graphics_libraries = &custom_libs;
  }

  std::unique_ptr<agent::RootFs> fs;
  if (tree) {
    fs = std::make_unique<agent::CaptureTreeFs>(root);
  } else {
    agent::DeviceRootFs::Options live_options;
    live_options.live_folder = args.live_root;
    fs = std::make_unique<agent::DeviceRootFs>(root, live_options);
  }
  agent::CollectOptions collect;
  collect.device_id = HostName();
  collect.captured_at = FormatUtcMillis(std::chrono::system_clock::now());
  collect.page_size = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  absl::StatusOr<capture::Capture> capture = agent::CollectCapture(*fs, collect);
  if (!capture.ok()) {
    err << "memfleet account: " << args.root << ": " << TerminalSafeLines(std::string(capture.status().message()))
        << "\n";
    return kExitFailed;
  }
  report::Report report = accounting::Account(*capture, options);
  if (args.json) {
    out << report::ReportToJson(report, 1) << "\n";
  } else {
    TableOptions table;
    table.top_processes = args.top;
    out << RenderReportTable(report, table);
  }
  return kExitOk;
}

CommandLine RegisterAccountCommand(CLI::App& app) {
  auto args = std::make_shared<AccountArgs>();
  CLI::App* cmd = app.add_subcommand(
      "account", "Account one capture offline: a capture tree, or a live root such as / (no server needed)");
  cmd->add_option("TREE", args->root, "capture tree folder (holds capture.json) or device root")->required();
  cmd->add_flag("--live-root", args->live_root,
                "TREE is not / but the root of a running system (a chroot, a mounted device root): "
                "read it live, run its system/bin/dumpsys and am, write its proc/dma_heap/rss_pid");
  cmd->add_flag("--json", args->json, "print the report JSON (docs/capture-format.md) instead of the table");
  cmd->add_option("--top", args->top, "processes shown in the table (0 = all)")->capture_default_str();
  cmd->add_option("--graphics-libs", args->graphics_libs_file,
                  "graphics library list to use instead of the built-in one");
  cmd->add_option("--android-version", args->android_version,
                  "formulas of the dumpsys view (14 default; 16 for the Android 16 deltas)")
      ->check(CLI::Range(12, 16));
  return {cmd, [args](const ServerArgs& global, std::ostream& out, std::ostream& err) {
            // Offline: of the global options only --json means something to it.
            ServerArgs others = global;
            args->json = args->json || others.json;
            others.json = false;
            if (AnyOptionSet(others)) {
              err << "memfleet account: runs offline; --server, --ca-cert, --token, --token-file and --csv do not "
                     "apply\n";
              return kExitUsage;
            }
            return RunAccount(*args, out, err);
          }};
}

}  // namespace memfleet::cli
