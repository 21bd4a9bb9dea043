// memfleet-server: the lab server. Agents stream captures to it; the `memfleet` CLI queries it.
//
//   memfleet-server --listen 0.0.0.0:7420 --db /var/lib/memfleet/memfleet.db [--workers 4]
//   memfleet-server --db /var/lib/memfleet/memfleet.db --reaccount   # recompute every stored report
//
// main() only parses flags and wires a LabServer (lab_server.h).
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "server/clock.h"
#include "server/lab_server.h"
#include "server/reaccount.h"
#include "storage/sqlite_store.h"

namespace {

int RunReaccount(const std::string& db_path) {
  absl::StatusOr<std::unique_ptr<memfleet::storage::Store>> store = memfleet::storage::OpenSqliteStore(db_path);
  if (!store.ok()) {
    std::cerr << "memfleet-server: cannot open the database " << db_path << ": " << store.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<memfleet::server::ReaccountResult> r = memfleet::server::ReaccountCaptures(**store, "");
  if (!r.ok()) {
    std::cerr << "memfleet-server: re-account failed: " << r.status().message() << "\n";
    return 1;
  }
  for (const std::string& f : r->failures) std::cerr << "memfleet-server: not re-accounted: " << f << "\n";
  std::cout << "re-accounted " << r->reaccounted << " captures, " << r->failed << " failed" << std::endl;
  return r->failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "memfleet-server: receives captures from memfleet agents, runs the memory accounting engine on "
      "them, stores captures and reports in SQLite and answers the memfleet CLI."};
  memfleet::server::LabServerOptions options;
  bool reaccount = false;
  app.add_option("--listen", options.listen, "HOST:PORT to serve agents and the CLI on (port 0: a free port)");
  app.add_option("--db", options.db_path, "SQLite database file (created when missing)")->required();
  app.add_option("--workers", options.workers, "threads running the engine and the store writes")
      ->check(CLI::Range(1, 256));
  app.add_flag("--reaccount", reaccount,
               "recompute every stored report from its stored raw capture, then exit (does not listen)");
  options.listen.clear();
  CLI11_PARSE(app, argc, argv);

  if (reaccount) return RunReaccount(options.db_path);
  if (options.listen.empty()) {
    std::cerr << "memfleet-server: --listen HOST:PORT is required (e.g. --listen 127.0.0.1:7420)\n";
    return 2;
  }

  // Block the stop signals before any thread starts (every thread inherits the mask), then wait for them
  // here: no async-signal-safety concerns, and Stop runs on an ordinary thread.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  absl::StatusOr<std::unique_ptr<memfleet::server::LabServer>> server = memfleet::server::LabServer::Start(options);
  if (!server.ok()) {
    std::cerr << "memfleet-server: " << server.status().message() << "\n";
    return 1;
  }
  // Scripts and tests parse this line for the real port (with --listen HOST:0).
  std::cout << "memfleet-server listening on " << (*server)->address() << std::endl;

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  memfleet::server::LogLine(absl::StrCat("received ", signal_number == SIGINT ? "SIGINT" : "SIGTERM", ", stopping"));
  (*server)->Stop();
  return 0;
}
