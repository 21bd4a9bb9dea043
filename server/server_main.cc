// memfleet-server: the lab server. Agents stream captures to it; the `memfleet` CLI queries it.
//
//   memfleet-server --listen 0.0.0.0:7070 --db /var/lib/memfleet/memfleet.db [--workers 4]
//   memfleet-server --db /var/lib/memfleet/memfleet.db --reaccount   # recompute every stored report
//   memfleet-server --listen 0.0.0.0:7070 --db postgresql://memfleet@db.lab:5432/memfleet   # a shared PostgreSQL
//   memfleet-server --listen 0.0.0.0:7070 --db F --tls-cert server.pem --tls-key server.key [--client-ca ca.pem]
//   memfleet-server --db F token add --kind agent --name bench-3 --device-id bench-3   # prints the secret once
//   memfleet-server --db F token list | token revoke NAME                               (docs/security.md)
//   memfleet-server --listen 127.0.0.1:7070 --db F --http-listen 127.0.0.1:9420       # GET /metrics (docs/metrics.md)
//   memfleet-server --listen ... --db F --retain-full-days 30 --retain-hourly-days 365  # thin old captures
//   memfleet-server --db F compact --retain-full-days 30 [--retain-hourly-days 365] [--dry-run]  # now, then exit
//   memfleet-server ... --http-listen 127.0.0.1:9420 --dashboard                       # and GET / (docs/dashboard.md)
//   memfleet-server migrate --from memfleet.db --to postgresql://memfleet@db.lab:5432/memfleet [--resume]
//
// main() only parses flags and wires a LabServer (lab_server.h).
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "common/exit_codes.h"
#include "common/status_macros.h"
#include "common/version.h"
#include "server/core/clock.h"
#include "server/lab_server.h"
#include "server/history/reaccount.h"
#include "server/history/retention.h"
#include "server/security/token_admin.h"
#include "storage/backends/history_migration.h"
#include "storage/backends/open_store.h"

namespace {

// On PostgreSQL the run is shared: servers started with --reaccount on the same database split the captures.
absl::StatusOr<memfleet::server::ReaccountResult> Reaccount(const std::string& db_path) {
  MEMFLEET_ASSIGN_OR_RETURN(std::unique_ptr<memfleet::storage::SqlStore> store, memfleet::storage::OpenStore(db_path));
  return memfleet::server::ReaccountSharedCaptures(*store, "", memfleet::server::NowRfc3339());
}

int RunReaccount(const std::string& db_path) {
  absl::StatusOr<memfleet::server::ReaccountResult> r = Reaccount(db_path);
  if (!r.ok()) {
    std::cerr << "memfleet-server: re-account failed: " << r.status().message() << "\n";
    return memfleet::kExitFailed;
  }
  for (const std::string& f : r->failures) std::cerr << "memfleet-server: not re-accounted: " << f << "\n";
  std::cout << "re-accounted " << r->reaccounted << " captures, " << r->failed << " failed"
            << memfleet::server::DescribeReaccountSkips(*r);
  if (r->run_id != 0) std::cout << " (" << (r->joined_run ? "joined" : "started") << " shared run " << r->run_id << ")";
  std::cout << std::endl;
  return r->failed == 0 ? memfleet::kExitOk : memfleet::kExitPartial;
}

// Retention flags (docs/performance.md "Retention"), shared by the server and `compact`:
//   memfleet-server --listen ... --db F --retain-full-days 30 --retain-hourly-days 365  # thin in the background
//   memfleet-server --db F compact --retain-full-days 30 [--retain-hourly-days 365] [--dry-run]  # now, then exit
//   memfleet-server --db F compact --retain-raw-days 30 [--dry-run]  # raw text beyond 30 days, reports kept
struct RetentionArgs {
  int full_days = 0;
  int hourly_days = 0;
  int raw_days = 0;
  bool dry_run = false;

  memfleet::server::RetentionPolicy Policy() const {
    return {std::chrono::hours(24) * full_days, std::chrono::hours(24) * hourly_days,
            std::chrono::hours(24) * raw_days};
  }
};

void AddRetentionFlags(CLI::App* app, RetentionArgs& args) {
  app->add_option("--retain-full-days", args.full_days,
                  "keep every capture this many days; older ones are thinned to one an hour (0 = keep everything)")
      ->check(CLI::Range(0, 100000));
  app->add_option("--retain-hourly-days", args.hourly_days,
                  "after this many days, one capture a day instead of one an hour (0 = hourly forever)")
      ->check(CLI::Range(0, 100000));
  // Independent of the two above: it thins what each kept capture stores, they thin which captures stay.
  app->add_option("--retain-raw-days", args.raw_days,
                  "keep each capture's raw text this many days; older captures keep their report, process figures "
                  "and labels, and are no longer re-accounted (0 = raw text as long as the capture)")
      ->check(CLI::Range(0, 100000));
}

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int RunCompact(const std::string& db_path, const RetentionArgs& args) {
  if (args.full_days <= 0 && args.raw_days <= 0) {
    std::cerr << "memfleet-server: compact: --retain-full-days N (the days kept at full resolution) or "
                 "--retain-raw-days N (the days raw text is kept) is required\n";
    return memfleet::kExitUsage;
  }
  // One writer: compaction deletes in one transaction at a time, whatever the backend.
  memfleet::storage::OpenStoreOptions open;
  open.writers = 1;
  absl::StatusOr<std::unique_ptr<memfleet::storage::SqlStore>> store = memfleet::storage::OpenStore(db_path, open);
  if (!store.ok()) {
    std::cerr << "memfleet-server: cannot open the database " << db_path << ": " << store.status().message() << "\n";
    return memfleet::kExitFailed;
  }
  memfleet::server::RetentionOptions options;
  options.dry_run = args.dry_run;
  absl::StatusOr<memfleet::server::RetentionRun> run =
      memfleet::server::ApplyRetention(**store, args.Policy(), WallClockMs(), options);
  if (!run.ok()) {
    std::cerr << "memfleet-server: compact: " << run.status().message() << "\n";
    return memfleet::kExitFailed;
  }
  std::cout << "compact: " << memfleet::server::DescribeRetentionRun(*run, args.dry_run) << std::endl;
  // The other devices were thinned all the same; these keep their history until a later run succeeds.
  for (const std::string& failure : run->failures) {
    std::cerr << "memfleet-server: compact: not thinned: " << failure << "\n";
  }
  return run->failures.empty() ? memfleet::kExitOk : memfleet::kExitPartial;
}

struct TokenArgs {
  std::string kind;
  std::string name;
  std::string device_id;
  std::string revoke_name;
};

int RunToken(const std::string& db_path, CLI::App* add, CLI::App* list, CLI::App* revoke, const TokenArgs& args) {
  absl::StatusOr<std::unique_ptr<memfleet::storage::Store>> store = memfleet::storage::OpenStore(db_path);
  if (!store.ok()) {
    std::cerr << "memfleet-server: cannot open the database " << db_path << ": " << store.status().message() << "\n";
    return memfleet::kExitFailed;
  }
  const std::string now = memfleet::server::NowRfc3339();
  if (*add) {
    std::optional<memfleet::security::TokenKind> kind = memfleet::security::ParseTokenKind(args.kind);
    if (!kind.has_value()) {
      std::cerr << "memfleet-server: --kind is agent, read or admin\n";
      return memfleet::kExitUsage;
    }
    absl::StatusOr<std::string> secret = memfleet::security::AddToken(**store, {args.name, *kind, args.device_id}, now);
    if (!secret.ok()) {
      std::cerr << "memfleet-server: token add: " << secret.status().message() << "\n";
      return secret.status().code() == absl::StatusCode::kInvalidArgument ? memfleet::kExitUsage
                                                                          : memfleet::kExitFailed;
    }
    std::cerr << "memfleet-server: added " << args.kind << " token \"" << args.name << "\""
              << (args.device_id.empty() ? "" : absl::StrCat(" for device ", args.device_id))
              << "; the secret below is shown only now (the server keeps its SHA-256):\n";
    std::cout << *secret << std::endl;
    return memfleet::kExitOk;
  }
  if (*list) {
    absl::StatusOr<std::string> text = memfleet::security::ListTokensText(**store);
    if (!text.ok()) {
      std::cerr << "memfleet-server: token list: " << text.status().message() << "\n";
      return memfleet::kExitFailed;
    }
    std::cout << *text << std::flush;
    return memfleet::kExitOk;
  }
  if (*revoke) {
    absl::Status s = memfleet::security::RevokeToken(**store, args.revoke_name, now);
    if (!s.ok()) {
      std::cerr << "memfleet-server: token revoke: " << s.message() << "\n";
      return s.code() == absl::StatusCode::kNotFound ? 2 : 1;
    }
    std::cerr << "memfleet-server: revoked token \"" << args.revoke_name << "\" (refused from its next call on)\n";
    return memfleet::kExitOk;
  }
  std::cerr << "memfleet-server: token: add, list or revoke\n";
  return memfleet::kExitUsage;
}

// `migrate` (docs/architecture.md "Storage backends"): copies an SQLite history into PostgreSQL, then
// compares the two.
struct MigrateArgs {
  std::string from;
  std::string to;
  bool resume = false;
  bool verify_only = false;
  size_t report_sample = 200;
  std::string work_dir;  // where a file of an older schema is upgraded; "" = $TMPDIR or /tmp
};

std::string TempFolder() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

void PrintCopied(const memfleet::storage::CopiedHistory& c) {
  std::cout << "migrate: copied " << c.devices << " devices, " << c.captures << " captures, " << c.tokens << " tokens, "
            << c.baselines << " baseline versions, " << c.sweeps << " sweeps, " << c.retention_marks
            << " retention marks";
  if (c.devices_present + c.captures_present + c.tokens_present + c.baselines_present > 0) {
    std::cout << " (already there: " << c.devices_present << " devices, " << c.captures_present << " captures, "
              << c.tokens_present << " tokens, " << c.baselines_present << " baseline versions)";
  }
  std::cout << std::endl;
}

// 0: copied (or checked) and equal; 1: a failure or a difference; 2: refused, nothing written.
int RunMigrate(const MigrateArgs& args) {
  if (!memfleet::storage::IsPostgresUri(args.to) || memfleet::storage::IsPostgresUri(args.from)) {
    std::cerr << "memfleet-server: migrate: --from is the SQLite file and --to a postgresql:// URI\n";
    return memfleet::kExitUsage;
  }
  absl::StatusOr<memfleet::storage::MigrationSource> from =
      memfleet::storage::OpenMigrationSource(args.from, args.work_dir.empty() ? TempFolder() : args.work_dir);
  if (!from.ok()) {
    std::cerr << "memfleet-server: migrate: " << from.status().message() << "\n";
    return memfleet::kExitFailed;
  }
  absl::StatusOr<std::unique_ptr<memfleet::storage::SqlStore>> to = memfleet::storage::OpenStore(args.to);
  if (!to.ok()) {
    std::cerr << "memfleet-server: migrate: cannot open " << args.to << ": " << to.status().message() << "\n";
    return memfleet::kExitFailed;
  }
  if (!args.verify_only) {
    absl::StatusOr<memfleet::storage::CopiedHistory> copied = memfleet::storage::CopyHistory(*from, **to, args.resume);
    if (!copied.ok()) {
      std::cerr << "memfleet-server: migrate: " << copied.status().message() << "\n";
      return absl::IsFailedPrecondition(copied.status()) ? 2 : 1;
    }
    PrintCopied(*copied);
  }
  absl::StatusOr<memfleet::storage::HistoryCheck> check =
      memfleet::storage::VerifyHistory(*from, **to, args.report_sample);
  if (!check.ok()) {
    std::cerr << "memfleet-server: migrate: checking the copy: " << check.status().message() << "\n";
    return memfleet::kExitFailed;
  }
  for (const std::string& line : check->checked) std::cout << "checked " << line << "\n";
  for (const std::string& line : check->mismatches) std::cout << "MISMATCH " << line << "\n";
  std::cout << (check->ok() ? "migrate: the PostgreSQL history matches the SQLite file"
                            : "migrate: the PostgreSQL history does NOT match the SQLite file")
            << std::endl;
  return check->ok() ? memfleet::kExitOk : memfleet::kExitFailed;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "memfleet-server: receives captures from memfleet agents, runs the memory accounting engine on "
      "them, stores captures and reports in SQLite or PostgreSQL and answers the memfleet CLI."};
  app.set_version_flag("--version", std::string("memfleet-server ") + memfleet::Version());
  memfleet::server::LabServerOptions options;
  bool reaccount = false;
  app.add_option("--listen", options.listen, "HOST:PORT to serve agents and the CLI on (port 0: a free port)");
  app.add_option("--db", options.db_path,
                 "SQLite database file (created when missing), or an existing PostgreSQL database as a libpq URI "
                 "postgresql://USER@HOST:PORT/DB (docs/architecture.md \"Storage backends\"); required but by migrate");
  app.add_option("--workers", options.workers, "threads running the engine and the store writes")
      ->check(CLI::Range(1, 256));
  app.add_flag("--reaccount", reaccount,
               "recompute every stored report from its stored raw capture, then exit (does not listen)");
  // Security (docs/security.md).
  bool insecure = false;
  int max_message_mb = 8, max_capture_mb = 256, max_node_mb = 64;
  uint32_t max_nodes = 200000;
  app.add_option("--tls-cert", options.tls_cert_file, "PEM certificate (chain) of the server: TLS on the port");
  app.add_option("--tls-key", options.tls_key_file, "PEM private key of --tls-cert");
  app.add_option("--client-ca", options.client_ca_file,
                 "PEM CA: agents must present a client certificate it signed (mutual TLS)");
  app.add_flag("--insecure", insecure,
               "allow listening beyond loopback without TLS and tokens (anyone on the network gets in)");
  app.add_option("--max-message-mb", max_message_mb, "largest gRPC message accepted, MiB")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--max-capture-mb", max_capture_mb,
                 "largest capture accepted, MiB: contents, error names and node paths (parent folders' included)")
      ->check(CLI::Range(1, 16384))
      ->capture_default_str();
  app.add_option("--max-node-mb", max_node_mb, "largest single node of a capture, MiB")
      ->check(CLI::Range(1, 16384))
      ->capture_default_str();
  app.add_option(
         "--max-nodes", max_nodes,
         "most node paths in one capture, parent folders included. Fixed bounds besides: a node path has at most "
         "32 segments and 4096 bytes, an error value is an errno name of at most 32 bytes "
         "(docs/capture-format.md)")
      ->check(CLI::Range(1u, 10000000u))
      ->capture_default_str();
  app.add_option("--max-streams-per-token", options.agent_limits.max_streams_per_key,
                 "open agent streams per agent token; 0 = unlimited")
      ->capture_default_str();
  app.add_option("--max-captures-per-minute", options.agent_limits.max_captures_per_minute,
                 "captures per device per minute before its stream is cut off; 0 = unlimited")
      ->capture_default_str();

  // Delta storage of raw captures (docs/performance.md, "Storage").
  size_t delta_cache_mb = options.delta.cache_bytes >> 20;
  app.add_option("--keyframe-every", options.delta.keyframe_every,
                 "store one capture in this many per device whole, the others as deltas of it; 1 = all whole")
      ->check(CLI::Range(1u, 100000u))
      ->capture_default_str();
  app.add_option("--delta-cache-mb", delta_cache_mb,
                 "memory for the devices' keyframes, MiB (a device without room reads its keyframe back from the "
                 "database for each capture)")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20))
      ->capture_default_str();

  // Memory of captures in flight (docs/performance.md, "Memory").
  size_t max_inflight_mb = options.max_inflight_bytes >> 20;
  app.add_option("--max-inflight-mb", max_inflight_mb,
                 "memory all agent streams' captures in flight may hold, MiB; a stream whose next capture does not "
                 "fit is not read until room frees (its agent keeps the capture spooled); 0 = unbounded")
      ->check(CLI::Range(size_t{0}, size_t{1} << 20))
      ->capture_default_str();
  app.add_option("--sweep-window", options.sweeps.max_asked_at_once,
                 "this server's agents a sweep asks at once; the next is asked as each is stored (or fails), so "
                 "every phone captures when its upload can be stored; 0 = all at once")
      ->check(CLI::Range(size_t{0}, size_t{1} << 20))
      ->capture_default_str();

  // Streams that have not said Hello (docs/security.md).
  double hello_timeout_s = 10;
  app.add_option("--hello-timeout-s", hello_timeout_s, "seconds an agent stream may take to send its Hello")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app.add_option("--max-waiting-streams", options.hello.max_waiting,
                 "agent streams that may wait for their Hello at once, all hosts")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20))
      ->capture_default_str();
  app.add_option("--max-waiting-streams-per-host", options.hello.max_waiting_per_host,
                 "agent streams that may wait for their Hello at once from one host")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20))
      ->capture_default_str();

  double token_recheck_s = 10;
  app.add_option("--token-recheck-s", token_recheck_s,
                 "seconds between checks of open agent streams' tokens: a revoked token's idle stream ends; 0 = "
                 "only at each capture")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();

  // Device clocks (server/ingest/clock_skew.h): `memfleet devices` shows each device's skew.
  int64_t max_clock_skew_s = options.max_clock_skew.count();
  app.add_option("--max-clock-skew-s", max_clock_skew_s,
                 "seconds a capture's time may be ahead of this server's clock; a capture dated later is "
                 "refused for good (the agent drops it and logs why: fix that device's clock)")
      ->check(CLI::Range(int64_t{0}, int64_t{10} * 365 * 86400))
      ->capture_default_str();

  // Prometheus (docs/metrics.md).
  app.add_option("--http-listen", options.http.listen,
                 "HOST:PORT to serve GET /metrics on for Prometheus (HTTPS with --tls-cert; tokens as for gRPC); off "
                 "unless given");
  app.add_option("--http-host", options.http.host_names,
                 "a name clients use for this server in URLs (lab-a.example), besides its addresses and localhost: "
                 "the HTTP port answers a request only when its Host header names the server (against DNS "
                 "rebinding); repeat or separate with commas")
      ->delimiter(',');
  app.add_option("--http-max-connections-per-host", options.http.max_connections_per_peer,
                 "HTTP connections one peer address may hold at once (of 64 in all); the next is closed at once")
      ->check(CLI::Range(size_t{1}, size_t{64}))
      ->capture_default_str();
  app.add_option("--metrics-top-processes", options.metrics_top_processes,
                 "processes per device on /metrics, the biggest by total_kb (0: none)")
      ->check(CLI::Range(size_t{0}, size_t{10000}))
      ->capture_default_str();
  app.add_flag("--metrics-app-summary", options.metrics_app_summary,
               "also the App Summary (java heap, native heap, code, ...) of those processes on /metrics, where a "
               "capture has their full smaps: nine more series per process")
      ->needs("--http-listen");
  // The browser dashboard (docs/dashboard.md), on the --http-listen port.
  app.add_flag("--dashboard", options.dashboard,
               "also serve the browser dashboard (GET /) on --http-listen, with the same TLS and tokens")
      ->needs("--http-listen");

  // Several servers on one PostgreSQL database (README "More than one server").
  app.add_option("--server-id", options.fleet.server_id,
                 "this server's name among servers sharing one PostgreSQL database, as `memfleet devices` shows "
                 "it (default HOSTNAME:PORT)");
  double heartbeat_s = std::chrono::duration<double>(options.fleet.heartbeat_period).count();
  app.add_option("--heartbeat-s", heartbeat_s,
                 "shared database: seconds between refreshes of this server's agent sessions; a session not "
                 "refreshed for 3 periods is offline")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();

  RetentionArgs retention;
  AddRetentionFlags(&app, retention);
  CLI::App* compact_cmd = app.add_subcommand(
      "compact",
      "thin old captures now as --retain-full-days/--retain-hourly-days/--retain-raw-days say, print what was "
      "freed, exit");
  compact_cmd->add_flag("--dry-run", retention.dry_run,
                        "only count what would be deleted or dropped (deleting is irreversible)");

  TokenArgs token_args;
  CLI::App* token_cmd = app.add_subcommand("token", "manage access tokens (agent, read, admin) in --db, then exit");
  token_cmd->require_subcommand(1);
  CLI::App* token_add = token_cmd->add_subcommand("add", "add a token; prints its secret once");
  token_add->add_option("--kind", token_args.kind, "agent, read or admin")->required();
  token_add->add_option("--name", token_args.name, "unique name, e.g. the device id or the user")->required();
  token_add->add_option("--device-id", token_args.device_id, "agent tokens: the device it may send captures as");
  CLI::App* token_list = token_cmd->add_subcommand("list", "list tokens (never their secrets)");
  CLI::App* token_revoke = token_cmd->add_subcommand("revoke", "revoke a token: refused from its next call on");
  token_revoke->add_option("NAME", token_args.revoke_name, "token name")->required();
  MigrateArgs migrate_args;
  CLI::App* migrate_cmd = app.add_subcommand(
      "migrate",
      "copy a lab's SQLite history into an empty PostgreSQL database, compare the two, exit (non-zero on a "
      "difference)");
  migrate_cmd->add_option("--from", migrate_args.from, "the SQLite file (its server stopped)")->required();
  migrate_cmd->add_option("--to", migrate_args.to, "the PostgreSQL database, postgresql://USER@HOST:PORT/DB")
      ->required();
  migrate_cmd->add_flag("--resume", migrate_args.resume,
                        "copy into a database that holds part of the history already (a copy that stopped part way)");
  migrate_cmd->add_flag("--verify-only", migrate_args.verify_only, "copy nothing: only compare the two histories");
  migrate_cmd->add_option("--work-dir", migrate_args.work_dir,
                          "where a file of an older memfleet's schema is copied and upgraded first (the file stays "
                          "as it is; needs its size free; default $TMPDIR or /tmp)");
  migrate_cmd
      ->add_option("--sample-reports", migrate_args.report_sample,
                   "captures whose report, raw capture and labels are compared, spread over the history")
      ->check(CLI::Range(size_t{1}, size_t{1} << 30))
      ->capture_default_str();
  // Parent options (--db) after the subcommand too: `memfleet-server token list --db F`.
  app.fallthrough();
  for (CLI::App* sub : {token_cmd, token_add, token_list, token_revoke, compact_cmd}) sub->fallthrough();

  options.listen.clear();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return memfleet::UsageExitCode(app.exit(e));
  }

  if (*migrate_cmd) return RunMigrate(migrate_args);
  if (options.db_path.empty()) {
    std::cerr << "memfleet-server: --db is required (an SQLite file or a postgresql:// URI)\n";
    return memfleet::kExitUsage;
  }
  if (*token_cmd) return RunToken(options.db_path, token_add, token_list, token_revoke, token_args);
  if (*compact_cmd) return RunCompact(options.db_path, retention);
  if (reaccount) return RunReaccount(options.db_path);
  if (options.listen.empty()) {
    std::cerr << "memfleet-server: --listen HOST:PORT is required (e.g. --listen 127.0.0.1:7070)\n";
    return memfleet::kExitUsage;
  }
  options.max_receive_message_bytes = max_message_mb << 20;
  options.capture_limits.max_capture_bytes = static_cast<uint64_t>(max_capture_mb) << 20;
  options.capture_limits.max_node_bytes = static_cast<uint64_t>(max_node_mb) << 20;
  options.capture_limits.max_nodes = max_nodes;
  options.delta.cache_bytes = delta_cache_mb << 20;
  options.max_inflight_bytes = max_inflight_mb << 20;
  options.hello.hello_timeout = std::chrono::milliseconds(static_cast<int64_t>(hello_timeout_s * 1000));
  options.token_recheck = std::chrono::milliseconds(static_cast<int64_t>(token_recheck_s * 1000));
  options.fleet.heartbeat_period = std::chrono::milliseconds(static_cast<int64_t>(heartbeat_s * 1000));
  options.fleet.session_timeout = 3 * options.fleet.heartbeat_period;
  options.max_clock_skew = std::chrono::seconds(max_clock_skew_s);
  options.delta.enabled = options.delta.keyframe_every > 1;

  absl::StatusOr<std::unique_ptr<memfleet::storage::Store>> store = memfleet::storage::OpenStore(options.db_path);
  if (!store.ok()) {
    std::cerr << "memfleet-server: cannot open the database " << options.db_path << ": " << store.status().message()
              << "\n";
    return memfleet::kExitFailed;
  }
  options.insecure = insecure;
  options.retention.policy = retention.Policy();  // off while --retain-full-days and --retain-raw-days are 0

  // Block the stop signals before any thread starts (every thread inherits the mask), then wait for them
  // here: no async-signal-safety concerns, and Stop runs on an ordinary thread.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  absl::StatusOr<std::unique_ptr<memfleet::server::LabServer>> server =
      memfleet::server::LabServer::StartWithStore(std::move(*store), options);
  if (!server.ok()) {
    std::cerr << "memfleet-server: " << server.status().message() << "\n";
    // Refused to listen beyond loopback without TLS and tokens: a usage error, as a bad flag is.
    return absl::IsFailedPrecondition(server.status()) ? memfleet::kExitUsage : memfleet::kExitFailed;
  }
  // Scripts and tests parse this line for the real port (with --listen HOST:0).
  std::cout << "memfleet-server listening on " << (*server)->address() << std::endl;
  if (!options.http.listen.empty()) {
    std::cout << "memfleet-server metrics on " << (options.tls_cert_file.empty() ? "http" : "https") << "://"
              << (*server)->http_address() << "/metrics" << std::endl;
  }
  if (options.dashboard) {
    std::cout << "memfleet-server dashboard on " << (options.tls_cert_file.empty() ? "http" : "https") << "://"
              << (*server)->http_address() << "/" << std::endl;
  }

  int signal_number = -1;
  while (signal_number < 0) signal_number = sigwaitinfo(&stop_signals, nullptr);  // -1: interrupted (EINTR)
  memfleet::server::LogLine(absl::StrCat("received ", signal_number == SIGINT ? "SIGINT" : "SIGTERM", ", stopping"));
  (*server)->Stop();
  return memfleet::kExitOk;
}
