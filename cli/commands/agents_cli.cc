#include "cli/commands/agents_cli.h"

#include "cli/adb_process.h"

namespace memfleet::cli {
namespace {

void AddTarget(CLI::App* cmd, AgentsTarget& target, const char* neither) {
  cmd->add_option("--serial", target.serials, "a phone's adb serial (repeat for more)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("--all", target.all, neither);
}

void AddQuery(CLI::App* cmd, ServerArgs& query) {
  cmd->add_option("--server", query.server,
                  "memfleet-server to ask whether the agents are online (default: 127.0.0.1:PORT on this host)");
  cmd->add_option("--token", query.token,
                  "read token for that question, admin for --mint-tokens (default: $MEMFLEET_TOKEN)");
}

}  // namespace

AgentsCli::AgentsCli(CLI::App* app) {
  agents_ = app->add_subcommand("agents", "Put memfleet-agent on the farm's phones over adb, and keep it running");
  agents_->require_subcommand(1);

  deploy_ = agents_->add_subcommand(
      "deploy", "Push the static agent to each phone, tunnel it to the server (adb reverse), start it, confirm");
  AddTarget(deploy_, deploy_args_.target, "every phone adb devices lists");
  deploy_->add_option(
      "--server-port", deploy_args_.server_port,
      "the port the phones reach on their 127.0.0.1 through adb reverse: the lab server's, or a relay's "
      "on this host");
  deploy_->add_option("--phone-server", deploy_args_.phone_server,
                      "A.B.C.D:PORT the phones dial themselves (on the lab network; no adb reverse)");
  deploy_->add_option("--interval", deploy_args_.interval_s, "seconds between captures")
      ->check(CLI::Range(1u, 7u * 24 * 3600))
      ->capture_default_str();
  deploy_->add_flag("--mint-tokens", deploy_args_.mint_tokens,
                    "mint one device-bound agent token per phone on the server (admin --token) and push it; a "
                    "phone's valid token is kept");
  deploy_->add_flag("--rotate-tokens", deploy_args_.rotate_tokens,
                    "with --mint-tokens: a new token for every phone, the old one revoked");
  deploy_->add_option("--token-dir", deploy_args_.token_dir, "folder of DEVICE.token, one agent token per phone");
  deploy_->add_option(
      "--name-map", deploy_args_.name_map_file,
      "file of \"SERIAL NAME\" lines: the device id of each phone named there (others keep their serial)");
  deploy_->add_option("--label", deploy_args_.labels, "K=V on every capture of these agents (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  deploy_->add_option("--agent-dir", deploy_args_.agent_dir,
                      "folder holding build-agent-arm64/ and build-agent-x86_64/ (scripts/build-agent); default: "
                      "the memfleet-agents package's, else the current folder's");
  deploy_->add_option("--arm64-agent", deploy_args_.arm64_agent,
                      "the agent for arm64-v8a phones (wins over --agent-dir)");
  deploy_->add_option("--x86_64-agent", deploy_args_.x86_64_agent,
                      "the agent for x86_64 phones (wins over --agent-dir)");
  deploy_
      ->add_option("--confirm-timeout", deploy_args_.confirm_timeout_s,
                   "seconds to wait for the server to see each agent online")
      ->check(CLI::Range(1u, 3600u))
      ->capture_default_str();
  deploy_->add_flag("--insecure-no-tokens", deploy_args_.insecure_no_tokens,
                    "deploy even to a server that takes calls without a token (any app on the phones could reach it)");
  deploy_->add_option("--ca-cert", deploy_args_.query.ca_cert,
                      "PEM CA of the server's certificate: pushed to the phones (the agents use TLS) and used here");
  AddQuery(deploy_, deploy_args_.query);

  status_ = agents_->add_subcommand("status", "Per phone: agent running?, root or shell, version, last capture");
  AddTarget(status_, status_args_.target, "every phone (the default)");
  AddQuery(status_, status_args_.query);
  status_->add_option("--ca-cert", status_args_.query.ca_cert, "PEM CA of the server's certificate");
  status_->add_flag("--json", status_args_.query.json, "one JSON document: phones[] and server_unavailable");
  status_->add_flag("--csv", status_args_.query.csv, "CSV, one row per phone");

  stop_ = agents_->add_subcommand("stop", "Stop the agent and remove its adb reverse tunnel");
  AddTarget(stop_, stop_target_, "every phone adb devices lists");

  logs_ = agents_->add_subcommand("logs", "The last lines of a phone's agent log");
  logs_->add_option("SERIAL", logs_args_.serial, "the phone's adb serial")->required();
  logs_->add_option("--lines", logs_args_.lines, "how many lines (of the log's last 4 MiB)")
      ->check(CLI::Range(1u, 100000u))
      ->capture_default_str();

  supervise_ = agents_->add_subcommand(
      "supervise", "Re-run adb reverse (and adb root) and restart agents that died, every --every seconds");
  AddTarget(supervise_, supervise_args_.target, "every phone (the default)");
  supervise_->add_flag("--once", supervise_args_.once, "one pass, then exit (for cron)");
  supervise_->add_option("--every", supervise_args_.every_s, "seconds between passes")
      ->check(CLI::Range(1u, 24u * 3600))
      ->capture_default_str();
}

int AgentsCli::Run(const ServerArgs& global, std::ostream& out, std::ostream& err) {
  InheritGlobalOptions(global, deploy_args_.query);
  InheritGlobalOptions(global, status_args_.query);
  if ((global.json || global.csv) && !*status_) {
    err << "memfleet agents: --json and --csv apply to `agents status` only; the other agents commands print "
           "what they do as they go\n";
    return kExitUsage;
  }
  ProcessAdb adb(AdbProgram());
  if (*deploy_) return RunAgentsDeploy(deploy_args_, adb, out, err);
  if (*status_) return RunAgentsStatus(status_args_, adb, out, err);
  if (*stop_) return RunAgentsStop(stop_target_, adb, out, err);
  if (*logs_) return RunAgentsLogs(logs_args_, adb, out, err);
  if (*supervise_) return RunAgentsSupervise(supervise_args_, adb, out, err);
  return kExitUsage;
}

CommandLine RegisterAgentsCommands(CLI::App& app) {
  auto agents = std::make_shared<AgentsCli>(&app);
  return {agents->command(), [agents](const ServerArgs& global, std::ostream& out, std::ostream& err) {
            return agents->Run(global, out, err);
          }};
}

}  // namespace memfleet::cli
