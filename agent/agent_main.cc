// memfleet-agent: takes raw memory captures of a device (a live root or a capture tree) and streams them to
// a memfleet-server; main() only parses flags and wires the parts together (agent/agent_config.h).
//
//   memfleet-agent --server lab:7070 --root / --device-id bench-3 --spool /var/lib/memfleet-agent
//   memfleet-agent --server 127.0.0.1:7070 --root tests/data/captures/qcom-sm8450/tree --device-id q1 --once
//   memfleet-agent --server lab:7070 ... --ca-cert ca.pem --token-file /data/memfleet/token [--tls-cert c.pem --tls-key
//   c.key]
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>

#include "agent/agent_config.h"
#include "agent/agent_log.h"
#include "agent/clock.h"
#include "agent/scheduler.h"
#include "agent/small_heap.h"
#include "agent/spool.h"
#include "agent/transport.h"
#include "common/exit_codes.h"
#include "common/version.h"

int main(int argc, char** argv) {
  using namespace memfleet::agent;
  UseASmallHeap();

  CLI::App app{"memfleet-agent: streams raw memory captures of this device to a memfleet-server"};
  app.set_version_flag("--version", std::string("memfleet-agent ") + memfleet::Version());
  AgentFlags flags;
  AddAgentFlags(app, flags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return memfleet::UsageExitCode(app.exit(e));
  }

  absl::StatusOr<AgentConfig> config = BuildAgentConfig(flags);
  if (!config.ok()) {
    LogLine(std::string(config.status().message()));
    return memfleet::kExitUsage;
  }
  absl::StatusOr<std::unique_ptr<Spool>> spool = Spool::Open(config->spool);
  if (!spool.ok()) {
    LogLine(std::string(spool.status().message()));
    return memfleet::kExitUsage;
  }
  LogLine(DescribeAgentStart(flags, *config, **spool));

  boost::asio::io_context io;
  SystemClock clock;
  Scheduler scheduler(io, *config->fs, clock, **spool, config->scheduler);
  Transport transport(config->transport, **spool, scheduler);
  scheduler.set_sink(&transport);
  scheduler.set_on_stop([&transport] { transport.Stop(); });
  transport.Start();
  return scheduler.Run();
}
