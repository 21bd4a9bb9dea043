// memfleet-agent: takes raw memory captures of a device (a live root or a capture tree) and streams them to
// a memfleet-server; main() only parses flags and wires the parts together.
//
//   memfleet-agent --server lab:7070 --root / --device-id bench-3 --spool /var/lib/memfleet-agent
//   memfleet-agent --server 127.0.0.1:7070 --root tests/data/captures/qcom-sm8450/tree --device-id q1 --once
//   memfleet-agent --server lab:7070 ... --ca-cert ca.pem --token-file /data/memfleet/token [--tls-cert c.pem --tls-key c.key]
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>

#include "absl/strings/str_cat.h"
#include "agent/agent_log.h"
#include "agent/reader/capture_tree_fs.h"
#include "agent/clock.h"
#include "agent/reader/collector.h"
#include "agent/device_facts.h"
#include "agent/reader/device_root_fs.h"
#include "agent/reader/root_kind.h"
#include "agent/scheduler.h"
#include "agent/server_address.h"
#include "agent/small_heap.h"
#include "agent/spool.h"
#include "agent/spool_location.h"
#include "agent/transport.h"
#include "capture/labels.h"
#include "capture/node_path.h"
#include "proto/capture_id.h"

#ifndef MEMFLEET_AGENT_VERSION
#define MEMFLEET_AGENT_VERSION "dev"
#endif

namespace {

// The whole file, or an error naming the flag. Token files may end in a newline (echo > file).
absl::StatusOr<std::string> ReadFlagFile(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || text.str().empty()) return absl::InvalidArgumentError(absl::StrCat(flag, ": cannot read ", path));
  return text.str();
}

int Fail(const std::string& message) {
  memfleet::agent::LogLine(message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace memfleet::agent;
  UseASmallHeap();

  CLI::App app{"memfleet-agent: streams raw memory captures of this device to a memfleet-server"};
  std::string server, root, device_id, spool_dir, model, soc;
  uint32_t interval_s = 300, once_timeout_s = 60, ack_timeout_s = 30;
  uint64_t spool_max_mb = 64;
  bool once = false;
  app.add_option("--server", server,
                 "memfleet-server address: IPV4:PORT, [IPV6]:PORT (no name lookup: what a phone needs), "
                 "HOST:PORT, or a gRPC ipv4:/ipv6:/unix: URI; several separated by commas are tried in "
                 "order, the next when one goes down (servers sharing one database)")
      ->required();
  bool live_root = false;
  app.add_option("--root", root, "root to capture: \"/\" of a device or a capture tree (has capture.json)")
      ->required();
  app.add_flag("--live-root", live_root,
               "--root is not / but the root of a running system (a chroot, a mounted device root): read it "
               "live, run its system/bin/dumpsys and am, write its proc/dma_heap/rss_pid");
  app.add_option("--device-id", device_id, "this device's id in the fleet")->required();
  app.add_option("--interval", interval_s, "seconds between captures (the server may change it)")
      ->check(CLI::Range(1u, 7u * 24 * 3600));
  app.add_flag("--once", once, "take one capture, deliver it, exit (0 when the server acked it)");
  app.add_option("--once-timeout", once_timeout_s, "with --once: give up delivering after this many seconds")
      ->check(CLI::Range(1u, 24u * 3600));
  app.add_option("--ack-timeout", ack_timeout_s, "reconnect when a sent capture is not acked within this many s")
      ->check(CLI::Range(1u, 3600u));
  app.add_option("--spool", spool_dir,
                 "folder of captures not yet acked: the agent's own, writable by no one else (missing folders "
                 "are made 0700). Default: /data/local/tmp/memfleet/spool on a phone, /var/lib/memfleet-agent/<id> "
                 "as root, else $XDG_STATE_HOME/memfleet-agent/<id> (~/.local/state without it)");
  app.add_option("--spool-max-mb", spool_max_mb, "spool size limit; the oldest captures are dropped beyond it")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  uint64_t max_capture_mb = kDefaultMaxCaptureBytes >> 20, max_node_mb = kDefaultMaxNodeBytes >> 20;
  app.add_option("--max-capture-mb", max_capture_mb,
                 "most one capture holds (contents, paths, error names), MiB; nodes beyond it are recorded as "
                 "ECAPTURE_FULL. Keep it at or under the server's --max-capture-mb")
      ->check(CLI::Range(uint64_t{1}, uint64_t{768}));
  app.add_option("--max-node-mb", max_node_mb,
                 "largest node kept, MiB; a bigger one is recorded as EFBIG. Keep it at or under the server's "
                 "--max-node-mb")
      ->check(CLI::Range(uint64_t{1}, uint64_t{256}));
  uint32_t dumpsys_every = 12, heap_dumps_per_capture = 2, heap_dump_timeout_ms = 5000;
  app.add_option("--dumpsys-every", dumpsys_every,
                 "run `dumpsys meminfo`, `dumpsys gpu --gpumem` and `getprop` (live root) in the first capture and "
                 "every N-th after it; the captures between have no cmd/dumpsys_* nodes")
      ->check(CLI::Range(1u, 1000000u));
  app.add_option("--heap-dumps-per-capture", heap_dumps_per_capture,
                 "live root: `am dumpheap -n` for at most N GPU processes per capture, taking them in turn (0: none)")
      ->check(CLI::Range(0u, 1000u));
  app.add_option("--heap-dump-timeout-ms", heap_dump_timeout_ms,
                 "live root: a heap dump still running after this many ms is killed and recorded as ETIMEDOUT")
      ->check(CLI::Range(1u, 600000u));
  std::string smaps_mode = "gpu";
  app.add_option("--smaps", smaps_mode,
                 "live root: which processes' full smaps each capture reads: \"gpu\" (GPU processes; the rest "
                 "smaps_rollup + maps, cheap) or \"full\" (every process: heaps and App Summary for all, at a cost: "
                 "docs/performance.md)")
      ->check(CLI::IsMember({"gpu", "full"}))
      ->capture_default_str();
  app.add_option("--model", model, "device model reported to the server (default: from capture.json)");
  app.add_option("--soc", soc, "SoC reported to the server (default: from capture.json)");
  std::string ca_cert_file, tls_cert_file, tls_key_file, token_file;
  app.add_option("--ca-cert", ca_cert_file, "PEM CA of the server's certificate: connect with TLS");
  app.add_option("--tls-cert", tls_cert_file, "PEM client certificate for a server with --client-ca (mutual TLS)");
  app.add_option("--tls-key", tls_key_file, "PEM private key of --tls-cert");
  app.add_option("--token-file", token_file, "file holding this device's agent token (memfleet-server token add)");
  std::vector<std::string> label_flags;
  app.add_option("--label", label_flags,
                 "KEY=VALUE attached to every capture (repeatable, at most 16): e.g. --label rack=7. KEY is "
                 "[a-z][a-z0-9_]*, at most 32 bytes; VALUE 1-128 bytes of printable ASCII. A sweep's label of "
                 "the same key wins");
  CLI11_PARSE(app, argc, argv);

  if (absl::Status s = CheckDeviceId(device_id); !s.ok()) return Fail(absl::StrCat("--device-id: ", s.message()));
  absl::StatusOr<memfleet::capture::Labels> labels = memfleet::capture::ParseLabelFlags(label_flags);
  if (!labels.ok()) return Fail(absl::StrCat("--label: ", labels.status().message()));
  absl::StatusOr<std::vector<ServerAddress>> server_addresses = ParseServerList(server);
  if (!server_addresses.ok()) return Fail(std::string(server_addresses.status().message()));
  for (const ServerAddress& address : *server_addresses) {
    if (absl::Status s = CheckResolvable(address); !s.ok()) return Fail(std::string(s.message()));
  }
  if (spool_dir.empty()) spool_dir = DefaultSpoolDir(device_id, SpoolHost::ThisHost());
  if (spool_dir.empty()) return Fail("no persistent private folder for the spool (not root, no $HOME): give --spool");

  uint64_t page_size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  absl::StatusOr<RootKind> kind = ChooseRootKind(root, live_root);
  if (!kind.ok()) return Fail(absl::StrCat("--root ", kind.status().message()));
  const bool capture_tree = *kind == RootKind::kCaptureTree;
  std::unique_ptr<RootFs> fs;
  DeviceFacts facts;
  if (capture_tree) {
    fs = std::make_unique<CaptureTreeFs>(root);
    NodeRead header = fs->Read(memfleet::capture::kHeaderNode);
    absl::StatusOr<DeviceFacts> from_header = DeviceFactsFromHeader(header.content);
    if (!header.ok() || !from_header.ok()) {
      return Fail(absl::StrCat("--root ", root, ": its capture.json is not usable (",
                               header.ok() ? std::string(from_header.status().message()) : header.errno_name, ")"));
    }
    facts = *from_header;
  } else {
    DeviceRootFs::Options live_options;
    live_options.live_folder = live_root;
    live_options.heap_dump_timeout_ms = static_cast<int>(heap_dump_timeout_ms);
    fs = std::make_unique<DeviceRootFs>(root, live_options);
    facts = LiveRootFacts(*fs, page_size, geteuid());
    if (!facts.getprop_problem.empty()) LogLine(absl::StrCat("no Android facts: ", facts.getprop_problem));
  }
  if (!model.empty()) facts.model = model;
  if (!soc.empty()) facts.soc = soc;

  absl::StatusOr<std::unique_ptr<Spool>> spool = Spool::Open({spool_dir, spool_max_mb << 20});
  if (!spool.ok()) return Fail(std::string(spool.status().message()));

  SchedulerOptions scheduler_options;
  scheduler_options.device_id = device_id;
  scheduler_options.interval = std::chrono::seconds(interval_s);
  scheduler_options.once = once;
  scheduler_options.once_timeout = std::chrono::seconds(once_timeout_s);
  scheduler_options.page_size = page_size;
  scheduler_options.dumpsys_every = dumpsys_every;
  scheduler_options.max_heap_dumps = heap_dumps_per_capture;
  scheduler_options.full_smaps = smaps_mode == "full";
  if (!capture_tree) {
    scheduler_options.header_facts = HeaderFactsOf(facts);
    scheduler_options.android_version = facts.android_version;
  }
  scheduler_options.max_capture_bytes = max_capture_mb << 20;
  scheduler_options.max_node_bytes = max_node_mb << 20;
  absl::StatusOr<std::string> instance = memfleet::wire::NewCaptureInstance();
  if (!instance.ok()) return Fail(std::string(instance.status().message()));
  scheduler_options.capture_instance = *instance;
  scheduler_options.labels = *labels;

  TransportOptions transport_options;
  for (const ServerAddress& address : *server_addresses) transport_options.servers.push_back(GrpcTarget(address));
  if ((tls_cert_file.empty()) != (tls_key_file.empty())) return Fail("--tls-cert and --tls-key go together");
  if (!tls_cert_file.empty() && ca_cert_file.empty()) return Fail("--tls-cert needs --ca-cert (mutual TLS is TLS)");
  for (auto [path, flag, out] : {std::tuple{&ca_cert_file, "--ca-cert", &transport_options.tls.ca_cert_pem},
                                 std::tuple{&tls_cert_file, "--tls-cert", &transport_options.tls.client_cert_pem},
                                 std::tuple{&tls_key_file, "--tls-key", &transport_options.tls.client_key_pem},
                                 std::tuple{&token_file, "--token-file", &transport_options.token}}) {
    if (path->empty()) continue;
    absl::StatusOr<std::string> text = ReadFlagFile(*path, flag);
    if (!text.ok()) return Fail(std::string(text.status().message()));
    *out = *text;
  }
  while (!transport_options.token.empty() &&
         (transport_options.token.back() == '\n' || transport_options.token.back() == '\r' ||
          transport_options.token.back() == ' ')) {
    transport_options.token.pop_back();
  }
  transport_options.ack_timeout = std::chrono::seconds(ack_timeout_s);
  memfleet::v1::DeviceInfo& device = transport_options.device;
  device.set_device_id(device_id);
  device.set_model(facts.model);
  device.set_soc(facts.soc);
  device.set_build_fingerprint(facts.build_fingerprint);
  device.set_kernel(facts.kernel);
  device.set_page_size(static_cast<uint32_t>(facts.page_size));
  device.set_agent_version(MEMFLEET_AGENT_VERSION);
  device.set_manufacturer(facts.manufacturer);
  device.set_build_type(facts.build_type);
  device.set_abi(facts.abi);
  device.set_android_sdk(facts.android_sdk);
  device.set_access(facts.access);
  device.set_selinux(facts.selinux);

  LogLine(absl::StrCat("memfleet-agent ", MEMFLEET_AGENT_VERSION, " starting: device ", device_id, " (model \"",
                       facts.model, "\", soc \"", facts.soc, "\", build \"", facts.build_fingerprint, "\", ",
                       facts.access.empty() ? "access unknown" : facts.access, ", selinux ",
                       facts.selinux.empty() ? "unknown" : facts.selinux, "), ", capture_tree ? "capture tree " : "live root ",
                       root, ", server ", server, ", spool ", spool_dir, " (", (*spool)->count(), " captures, ",
                       (*spool)->dropped(), " dropped), capture ids ", device_id, "-<time>-", *instance, "-<seq>",
                       once ? ", once" : absl::StrCat(", every ", interval_s, " s"),
                       labels->empty() ? "" : absl::StrCat(", labels ", memfleet::capture::LabelsToString(*labels))));

  boost::asio::io_context io;
  SystemClock clock;
  Scheduler scheduler(io, *fs, clock, **spool, scheduler_options);
  Transport transport(transport_options, **spool, scheduler);
  scheduler.set_sink(&transport);
  scheduler.set_on_stop([&transport] { transport.Stop(); });
  transport.Start();
  return scheduler.Run();
}
