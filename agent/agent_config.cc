#include "agent/agent_config.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string_view>
#include <tuple>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "agent/agent_log.h"
#include "agent/device_facts.h"
#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/device_root_fs.h"
#include "agent/reader/root_kind.h"
#include "agent/server_address.h"
#include "agent/spool_location.h"
#include "capture/capture_header.h"
#include "capture/labels.h"
#include "capture/node_path.h"
#include "common/figure_tier.h"
#include "common/label_text.h"
#include "common/status_macros.h"
#include "common/version.h"
#include "proto/capture_id.h"

namespace memfleet::agent {
namespace {

absl::Status FlagError(const char* flag, const absl::Status& s) {
  return absl::InvalidArgumentError(absl::StrCat(flag, ": ", s.message()));
}

// The whole file, or an error naming the flag. Token files may end in a newline (echo > file).
absl::StatusOr<std::string> ReadFlagFile(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || text.str().empty()) return absl::InvalidArgumentError(absl::StrCat(flag, ": cannot read ", path));
  return text.str();
}

// The reader of --root and what it says of the device; --model and --soc win over both.
absl::Status ChooseRoot(const AgentFlags& flags, const AgentHost& host, AgentConfig& config) {
  absl::StatusOr<RootKind> kind = ChooseRootKind(flags.root, flags.live_root);
  if (!kind.ok()) return absl::InvalidArgumentError(absl::StrCat("--root ", kind.status().message()));
  config.capture_tree = *kind == RootKind::kCaptureTree;
  if (config.capture_tree) {
    config.fs = std::make_unique<CaptureTreeFs>(flags.root);
    NodeRead header = config.fs->Read(capture::kHeaderNode);
    absl::StatusOr<DeviceFacts> from_header = DeviceFactsFromHeader(header.content);
    if (!header.ok() || !from_header.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--root ", flags.root, ": its capture.json is not usable (",
                       header.ok() ? std::string(from_header.status().message()) : header.errno_name, ")"));
    }
    config.facts = *from_header;
  } else {
    DeviceRootFs::Options live_options;
    live_options.live_folder = flags.live_root;
    live_options.heap_dump_timeout_ms = static_cast<int>(flags.heap_dump_timeout_ms);
    config.fs = std::make_unique<DeviceRootFs>(flags.root, live_options);
    config.facts = LiveRootFacts(*config.fs, config.scheduler.page_size, host.euid_set ? host.euid : geteuid());
    if (!config.facts.getprop_problem.empty())
      LogLine(absl::StrCat("no Android facts: ", config.facts.getprop_problem));
  }
  if (!flags.model.empty()) config.facts.model = flags.model;
  if (!flags.soc.empty()) config.facts.soc = flags.soc;
  if (flags.ddr_size_kb != 0) {
    // A recorded capture keeps the size its device had; a second source could only disagree with it.
    if (config.capture_tree) {
      return absl::InvalidArgumentError(absl::StrCat("--ddr-size-kb is for a live root; the capture tree ", flags.root,
                                                     " gives its device's size as ddr_size_kb in its capture.json"));
    }
    config.facts.ddr_size_kb = flags.ddr_size_kb;
  }
  return absl::OkStatus();
}

absl::Status ReadSecurityFiles(const AgentFlags& flags, TransportOptions& transport) {
  if (flags.tls_cert_file.empty() != flags.tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!flags.tls_cert_file.empty() && flags.ca_cert_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert needs --ca-cert (mutual TLS is TLS)");
  }
  for (auto [path, flag, out] : {std::tuple{&flags.ca_cert_file, "--ca-cert", &transport.tls.ca_cert_pem},
                                 std::tuple{&flags.tls_cert_file, "--tls-cert", &transport.tls.client_cert_pem},
                                 std::tuple{&flags.tls_key_file, "--tls-key", &transport.tls.client_key_pem},
                                 std::tuple{&flags.token_file, "--token-file", &transport.token}}) {
    if (path->empty()) continue;
    MEMFLEET_ASSIGN_OR_RETURN(*out, ReadFlagFile(*path, flag));
  }
  std::string& token = transport.token;
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) token.pop_back();
  return absl::OkStatus();
}

void DescribeDevice(const AgentFlags& flags, const DeviceFacts& facts, v1::DeviceInfo& device) {
  device.set_device_id(flags.device_id);
  device.set_model(facts.model);
  device.set_soc(facts.soc);
  device.set_build_fingerprint(facts.build_fingerprint);
  device.set_kernel(facts.kernel);
  device.set_page_size(static_cast<uint32_t>(facts.page_size));
  device.set_agent_version(memfleet::Version());
  device.set_manufacturer(facts.manufacturer);
  device.set_build_type(facts.build_type);
  device.set_abi(facts.abi);
  device.set_android_sdk(facts.android_sdk);
  device.set_access(facts.access);
  device.set_selinux(facts.selinux);
  device.set_tier(TierOfAccess(facts.access));
}

}  // namespace

void AddAgentFlags(CLI::App& app, AgentFlags& flags) {
  app.add_option("--server", flags.server,
                 "memfleet-server address: IPV4:PORT, [IPV6]:PORT (no name lookup: what a phone needs), "
                 "HOST:PORT, or a gRPC ipv4:/ipv6:/unix: URI; several separated by commas are tried in "
                 "order, the next when one goes down (servers sharing one database)")
      ->required();
  app.add_option("--root", flags.root, "root to capture: \"/\" of a device or a capture tree (has capture.json)")
      ->required();
  app.add_flag("--live-root", flags.live_root,
               "--root is not / but the root of a running system (a chroot, a mounted device root): read it "
               "live, run its system/bin/dumpsys and am, write its proc/dma_heap/rss_pid");
  app.add_option("--device-id", flags.device_id, "this device's id in the fleet")->required();
  app.add_option("--interval", flags.interval_s, "seconds between captures (the server may change it)")
      ->check(CLI::Range(1u, 7u * 24 * 3600))
      ->capture_default_str();
  app.add_flag("--once", flags.once, "take one capture, deliver it, exit (0 when the server acked it)");
  app.add_option("--once-timeout", flags.once_timeout_s, "with --once: give up delivering after this many seconds")
      ->check(CLI::Range(1u, 24u * 3600))
      ->capture_default_str();
  app.add_option("--ack-timeout", flags.ack_timeout_s, "reconnect when a sent capture is not acked within this many s")
      ->check(CLI::Range(1u, 3600u))
      ->capture_default_str();
  app.add_option("--resend-refused-after", flags.resend_refused_after_s,
                 "a capture the server refused for now (its database down, its disk full) stays spooled and is "
                 "sent again after this many s")
      ->check(CLI::Range(1u, 3600u))
      ->capture_default_str();
  app.add_option("--spool", flags.spool_dir,
                 "folder of captures not yet acked: the agent's own, writable by no one else (missing folders "
                 "are made 0700). Default: /data/local/tmp/memfleet/spool on a phone, /var/lib/memfleet-agent/<id> "
                 "as root, else $XDG_STATE_HOME/memfleet-agent/<id> (~/.local/state without it)");
  app.add_option("--spool-max-mb", flags.spool_max_mb, "spool size limit; the oldest captures are dropped beyond it")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--max-capture-mb", flags.max_capture_mb,
                 "most one capture holds (contents, paths, error names), MiB; nodes beyond it are recorded as "
                 "ECAPTURE_FULL. Keep it at or under the server's --max-capture-mb")
      ->check(CLI::Range(uint64_t{1}, uint64_t{768}))
      ->capture_default_str();
  app.add_option("--max-node-mb", flags.max_node_mb,
                 "largest node kept, MiB; a bigger one is recorded as EFBIG. Keep it at or under the server's "
                 "--max-node-mb")
      ->check(CLI::Range(uint64_t{1}, uint64_t{256}))
      ->capture_default_str();
  app.add_option("--dumpsys-every", flags.dumpsys_every,
                 "run `dumpsys meminfo`, `dumpsys gpu --gpumem` and `getprop` (live root) in the first capture and "
                 "every N-th after it; the captures between have no cmd/dumpsys_* nodes")
      ->check(CLI::Range(1u, 1000000u))
      ->capture_default_str();
  app.add_option("--heap-dumps-per-capture", flags.heap_dumps_per_capture,
                 "live root: `am dumpheap -n` for at most N GPU processes per capture, taking them in turn (0: none)")
      ->check(CLI::Range(0u, 1000u))
      ->capture_default_str();
  app.add_option("--heap-dump-timeout-ms", flags.heap_dump_timeout_ms,
                 "live root: a heap dump still running after this many ms is killed and recorded as ETIMEDOUT")
      ->check(CLI::Range(1u, 600000u))
      ->capture_default_str();
  app.add_option("--smaps", flags.smaps,
                 "live root: which processes' full smaps each capture reads: \"gpu\" (GPU processes; the rest "
                 "smaps_rollup + maps, cheap) or \"full\" (every process: heaps and App Summary for all, at a cost: "
                 "docs/performance.md)")
      ->check(CLI::IsMember({"gpu", "full"}))
      ->capture_default_str();
  app.add_option("--model", flags.model, "device model reported to the server (default: from capture.json)");
  app.add_option("--soc", flags.soc, "SoC reported to the server (default: from capture.json)");
  app.add_option("--ddr-size-kb", flags.ddr_size_kb,
                 "live root: the device's installed DRAM in kB (16777216 for 16 GiB), written into each capture as "
                 "ddr_size_kb. Without it a phone's is estimated from MemTotal, and a host that is not an Android "
                 "device has none: its static reserved and total are unknown")
      ->check(CLI::Range(uint64_t{1}, capture::kMaxDdrSizeKb));
  app.add_option("--ca-cert", flags.ca_cert_file, "PEM CA of the server's certificate: connect with TLS");
  app.add_option("--tls-cert", flags.tls_cert_file,
                 "PEM client certificate for a server with --client-ca (mutual TLS)");
  app.add_option("--tls-key", flags.tls_key_file, "PEM private key of --tls-cert");
  app.add_option("--token-file", flags.token_file,
                 "file holding this device's agent token (memfleet-server token add)");
  app.add_option("--label", flags.labels,
                 "KEY=VALUE attached to every capture (repeatable, at most 16): e.g. --label rack=7. KEY is "
                 "[a-z][a-z0-9_]*, at most 32 bytes; VALUE 1-128 bytes of printable ASCII. A sweep's label of "
                 "the same key wins");
}

absl::StatusOr<AgentConfig> BuildAgentConfig(const AgentFlags& flags, const AgentHost& host) {
  AgentConfig config;
  if (absl::Status s = CheckDeviceId(flags.device_id); !s.ok()) return FlagError("--device-id", s);
  absl::StatusOr<capture::Labels> labels = capture::ParseLabelFlags(flags.labels);
  if (!labels.ok()) return FlagError("--label", labels.status());
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<ServerAddress> servers, ParseServerList(flags.server));
  for (const ServerAddress& address : servers) {
    MEMFLEET_RETURN_IF_ERROR(CheckResolvable(address));
    config.transport.servers.push_back(GrpcTarget(address));
  }
  config.spool.dir =
      flags.spool_dir.empty() ? DefaultSpoolDir(flags.device_id, SpoolHost::ThisHost()) : flags.spool_dir;
  if (config.spool.dir.empty()) {
    return absl::InvalidArgumentError("no persistent private folder for the spool (not root, no $HOME): give --spool");
  }
  config.spool.max_bytes = flags.spool_max_mb << 20;

  SchedulerOptions& scheduler = config.scheduler;
  scheduler.page_size = host.page_size != 0 ? host.page_size : static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  MEMFLEET_RETURN_IF_ERROR(ChooseRoot(flags, host, config));
  scheduler.device_id = flags.device_id;
  scheduler.interval = std::chrono::seconds(flags.interval_s);
  scheduler.once = flags.once;
  scheduler.once_timeout = std::chrono::seconds(flags.once_timeout_s);
  scheduler.dumpsys_every = flags.dumpsys_every;
  // As shell the agent cannot read other processes' smaps: their figures come from dumpsys (the dumpsys
  // tier, docs/accounting.md section 9), so a live root runs it in every capture, whatever --dumpsys-every says.
  if (!config.capture_tree && TierOfAccess(config.facts.access) == std::string_view(kTierDumpsys)) {
    scheduler.dumpsys_every = 1;
  }
  scheduler.max_heap_dumps = flags.heap_dumps_per_capture;
  scheduler.full_smaps = flags.smaps == "full";
  if (!config.capture_tree) {
    scheduler.header_facts = HeaderFactsOf(config.facts);
    scheduler.android_version = config.facts.android_version;
    scheduler.ddr_size_kb = config.facts.ddr_size_kb;
  }
  scheduler.max_capture_bytes = flags.max_capture_mb << 20;
  scheduler.max_node_bytes = flags.max_node_mb << 20;
  MEMFLEET_ASSIGN_OR_RETURN(scheduler.capture_instance, wire::NewCaptureInstance());
  scheduler.labels = *labels;

  MEMFLEET_RETURN_IF_ERROR(ReadSecurityFiles(flags, config.transport));
  config.transport.ack_timeout = std::chrono::seconds(flags.ack_timeout_s);
  config.transport.rejected_retry_delay = std::chrono::seconds(flags.resend_refused_after_s);
  config.transport.interval = scheduler.interval;
  DescribeDevice(flags, config.facts, config.transport.device);
  return config;
}

std::string DescribeAgentStart(const AgentFlags& flags, const AgentConfig& config, const Spool& spool) {
  const DeviceFacts& facts = config.facts;
  const capture::Labels& labels = config.scheduler.labels;
  return absl::StrCat(
      "memfleet-agent ", memfleet::Version(), " starting: device ", flags.device_id, " (model \"", facts.model,
      "\", soc \"", facts.soc, "\", build \"", facts.build_fingerprint, "\", ",
      facts.access.empty() ? "access unknown" : facts.access, ", selinux ",
      facts.selinux.empty() ? "unknown" : facts.selinux, ", ", TierOfAccess(facts.access), " tier",
      config.scheduler.dumpsys_every == 1 && !config.capture_tree ? ": dumpsys meminfo every capture" : "", "), ",
      config.capture_tree ? "capture tree " : "live root ", flags.root, ", server ", flags.server, ", spool ",
      config.spool.dir, " (", spool.count(), " captures, ", spool.dropped(), " dropped), capture ids ", flags.device_id,
      "-<time>-", config.scheduler.capture_instance, "-<seq>",
      flags.once ? ", once" : absl::StrCat(", every ", flags.interval_s, " s"),
      labels.empty() ? "" : absl::StrCat(", labels ", LabelsText(labels)));
}

}  // namespace memfleet::agent
