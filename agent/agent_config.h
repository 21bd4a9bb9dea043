// The agent's command line made into what its parts run on: the flags memfleet-agent takes, and
// BuildAgentConfig, which checks them, reads the files they name and the device's facts, and returns the
// scheduler's and the transport's options (or an error naming the flag). agent_main only parses and wires.
//
//   CLI::App app;  AgentFlags flags;  AddAgentFlags(app, flags);  app.parse(argc, argv);
//   absl::StatusOr<AgentConfig> config = BuildAgentConfig(flags);   // "--device-id: ..." on a bad id
//   Scheduler scheduler(io, *config->fs, clock, spool, config->scheduler);
#ifndef MEMFLEET_AGENT_AGENT_CONFIG_H_
#define MEMFLEET_AGENT_AGENT_CONFIG_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/device_facts.h"
#include "agent/reader/root_fs.h"
#include "agent/scheduler.h"
#include "agent/spool.h"
#include "agent/transport.h"

namespace CLI {
class App;
}  // namespace CLI

namespace memfleet::agent {

// The flags as typed (defaults as `memfleet-agent --help` shows them).
struct AgentFlags {
  std::string server;
  std::string root;
  bool live_root = false;
  std::string device_id;
  uint32_t interval_s = 300;
  bool once = false;
  uint32_t once_timeout_s = 60;
  uint32_t ack_timeout_s = 30;
  uint32_t resend_refused_after_s = 30;
  std::string spool_dir;  // "": DefaultSpoolDir
  uint64_t spool_max_mb = 64;
  uint64_t max_capture_mb = kDefaultMaxCaptureBytes >> 20;
  uint64_t max_node_mb = kDefaultMaxNodeBytes >> 20;
  uint32_t dumpsys_every = 12;
  uint32_t heap_dumps_per_capture = 2;
  uint32_t heap_dump_timeout_ms = 5000;
  std::string smaps = "gpu";  // --smaps: "gpu" or "full"
  std::string model;
  std::string soc;
  uint64_t ddr_size_kb = 0;  // --ddr-size-kb; 0: not given
  std::string ca_cert_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string token_file;
  std::vector<std::string> labels;  // KEY=VALUE
};

void AddAgentFlags(CLI::App& app, AgentFlags& flags);

// Where the agent runs: the host facts BuildAgentConfig would otherwise read itself (tests fix them).
struct AgentHost {
  uint64_t page_size = 0;  // 0: sysconf(_SC_PAGESIZE)
  uid_t euid = 0;
  bool euid_set = false;  // false: geteuid()
};

struct AgentConfig {
  std::unique_ptr<RootFs> fs;  // the capture tree or the device root to read
  bool capture_tree = false;
  DeviceFacts facts;
  Spool::Options spool;
  SchedulerOptions scheduler;
  TransportOptions transport;
};

// InvalidArgument naming the flag ("--device-id: ...", "--tls-cert and --tls-key go together") when the
// flags are wrong or a file they name cannot be read.
absl::StatusOr<AgentConfig> BuildAgentConfig(const AgentFlags& flags, const AgentHost& host = {});

// The start-up log line: device, facts, root, server, spool, capture ids, interval and labels.
std::string DescribeAgentStart(const AgentFlags& flags, const AgentConfig& config, const Spool& spool);

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_AGENT_CONFIG_H_
