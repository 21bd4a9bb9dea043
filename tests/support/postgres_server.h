// Test support: a real PostgreSQL server for the tests of one binary, in a temporary folder on a free
// loopback port, and a fresh empty database per test on it. Header-only; POSIX.
//
//   std::string uri = testing::NewPostgresDatabase();   // "postgresql://postgres@127.0.0.1:PORT/t_3"
//   absl::StatusOr<std::unique_ptr<storage::Store>> store = storage::OpenStore(uri);
//
// A test may stop the server and start it again (Stop, StartAgain: an operator's restart under running
// memfleet servers). The server starts at the first NewPostgresDatabase of the binary (initdb -A trust, pg_ctl start
// -w, then a connection loop until it answers) and a GoogleTest Environment stops it (pg_ctl stop -m immediate) when
// the binary's tests are done. It runs with fsync=off: it is thrown away, and the tests assert what the store answers,
// not what survives a power cut. PostgreSQL refuses to run as root, so under root its programs run as the user nobody
// (setpriv), in a folder chowned to nobody. When its programs (Debian package postgresql) are missing,
// NewPostgresDatabase fails the test saying so: the tests never skip.
#ifndef MEMFLEET_TESTS_SUPPORT_POSTGRES_SERVER_H_
#define MEMFLEET_TESTS_SUPPORT_POSTGRES_SERVER_H_

#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "storage/postgres/pg_connection.h"
#include "tests/support/subprocess.h"

namespace memfleet::testing {

class PostgresServer {
 public:
  // Starts a server; a failure says why (and names the package when the programs are missing). `fsync`:
  // flush every commit to disk, for a benchmark that sets commits beside SQLite's synchronous=FULL.
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start(bool fsync = false) {
    std::unique_ptr<PostgresServer> server(new PostgresServer());
    server->fsync_ = fsync;
    absl::Status started = server->Run();
    if (!started.ok()) return started;
    return server;
  }

  ~PostgresServer() {
    if (started_) RunTool({bin_ + "/pg_ctl", "stop", "-D", data_, "-m", "immediate"}, "pg_ctl_stop.log").IgnoreError();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  // postgresql://postgres@127.0.0.1:PORT/DB
  std::string Uri(const std::string& database) const {
    return absl::StrCat("postgresql://postgres@127.0.0.1:", port_.port(), "/", database);
  }

  // A new, empty database (t_1, t_2, ...); its URI.
  absl::StatusOr<std::string> NewDatabase() {
    const std::string name = absl::StrCat("t_", next_database_.fetch_add(1) + 1);
    absl::StatusOr<std::unique_ptr<storage::PgConnection>> admin = storage::PgConnection::Connect(Uri("postgres"));
    if (!admin.ok()) return admin.status();
    absl::Status created = (*admin)->Exec("CREATE DATABASE " + name);  // a name made here, not test input
    if (!created.ok()) return created;
    return Uri(name);
  }

  const std::string& log_path() const { return log_; }
  // The server's data directory (its postmaster.pid names the server's process).
  const std::string& data_dir() const { return data_; }

  // Stops the server as an operator's restart does (pg_ctl stop -m fast: sessions are ended, open
  // transactions rolled back) and returns once it is down; the port stays reserved for StartAgain().
  absl::Status Stop() {
    absl::Status stopped =
        RunTool({bin_ + "/pg_ctl", "stop", "-D", data_, "-m", "fast", "-w", "-t", "120"}, "pg_ctl_stop_fast.log");
    if (stopped.ok()) started_ = false;
    return stopped;
  }

  // Starts a server stopped by Stop() again, on the same data and port; returns once it answers.
  absl::Status StartAgain() {
    absl::Status start = StartServerProcess();
    if (!start.ok()) return start;
    started_ = true;
    return WaitUntilItAnswers();
  }

 private:
  PostgresServer() = default;

  // The server programs: Debian keeps them off PATH, in /usr/lib/postgresql/VERSION/bin.
  static std::string FindBinDir() {
    std::error_code ec;
    std::string best;
    for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      const std::string bin = entry.path().string() + "/bin";
      if (std::filesystem::exists(bin + "/initdb") && std::filesystem::exists(bin + "/pg_ctl") && bin > best)
        best = bin;
    }
    return best;
  }

  absl::Status Run() {
    bin_ = FindBinDir();
    if (bin_.empty()) {
      return absl::FailedPreconditionError(
          "PostgreSQL's server programs (initdb, pg_ctl in /usr/lib/postgresql/*/bin) are not installed: install the "
          "Debian package postgresql (scripts/setup-deps does)");
    }
    dir_ = MakeTempDir("memfleet_pg_");
    if (dir_.empty()) return absl::InternalError("cannot make a folder for PostgreSQL");
    data_ = dir_ + "/data";
    log_ = dir_ + "/postgres.log";
    if (geteuid() == 0) {
      // PostgreSQL refuses root: its programs run as nobody, who must own the folder.
      const passwd* nobody = getpwnam("nobody");
      if (nobody == nullptr)
        return absl::FailedPreconditionError("running as root, and there is no user nobody to run PostgreSQL as");
      run_as_ = {"/usr/bin/setpriv", absl::StrCat("--reuid=", nobody->pw_uid), absl::StrCat("--regid=", nobody->pw_gid),
                 "--clear-groups", "--"};
      if (chown(dir_.c_str(), nobody->pw_uid, nobody->pw_gid) != 0)
        return absl::InternalError("cannot chown the PostgreSQL folder to nobody");
    }
    absl::Status init = RunTool(
        {bin_ + "/initdb", "-D", data_, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale", "--no-sync"},
        "initdb.log");
    if (!init.ok()) return init;
    return StartAgain();
  }

  absl::Status StartServerProcess() const {
    const std::string options =
        absl::StrCat("-p ", port_.port(), " -k ", dir_,
                     " -c listen_addresses=127.0.0.1 -c fsync=", fsync_ ? "on" : "off", " -c max_connections=200");
    absl::Status start = RunTool({bin_ + "/pg_ctl", "start", "-D", data_, "-l", log_, "-w", "-t", "120", "-o", options},
                                 "pg_ctl_start.log");
    if (!start.ok()) return absl::Status(start.code(), absl::StrCat(start.message(), "\n", ReadFile(log_)));
    return absl::OkStatus();
  }

  // pg_ctl -w returns once the server accepts connections; a connection over TCP (what the tests use)
  // proves it, retried only while the server says it is still starting up.
  absl::Status WaitUntilItAnswers() const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (true) {
      absl::StatusOr<std::unique_ptr<storage::PgConnection>> db = storage::PgConnection::Connect(Uri("postgres"));
      if (db.ok()) return absl::OkStatus();
      if (std::chrono::steady_clock::now() > deadline) return db.status();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // Runs a PostgreSQL program (as nobody under root) to its end; its output goes to DIR/`log_name`.
  absl::Status RunTool(const std::vector<std::string>& tool, const std::string& log_name) const {
    std::vector<std::string> argv = run_as_;
    argv.insert(argv.end(), tool.begin(), tool.end());
    Subprocess process(argv, dir_ + "/" + log_name);
    const int code = process.WaitExit(std::chrono::seconds(180));
    if (code == 0) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(tool[0], " exited with ", code, ":\n", process.Log()));
  }

  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string bin_;
  std::string dir_;
  std::string data_;
  std::string log_;
  std::vector<std::string> run_as_;  // setpriv ... -- under root; empty otherwise
  LoopbackPortReservation port_;     // held while the server runs, so no other test takes the port
  bool started_ = false;
  bool fsync_ = false;
  std::atomic<int> next_database_{0};
};

// The binary's one server: started at first use, stopped by PostgresEnvironment's TearDown.
class PostgresEnvironment : public ::testing::Environment {
 public:
  static absl::StatusOr<PostgresServer*> Server() {
    std::lock_guard<std::mutex> lock(mu());
    if (server() == nullptr && start_error().ok()) {
      absl::StatusOr<std::unique_ptr<PostgresServer>> started = PostgresServer::Start();
      if (started.ok()) {
        server() = *std::move(started);
      } else {
        start_error() = started.status();
      }
    }
    if (!start_error().ok()) return start_error();  // every test fails with the reason, none retries it
    return server().get();
  }

  void TearDown() override {
    std::lock_guard<std::mutex> lock(mu());
    server().reset();
  }

 private:
  static std::mutex& mu() {
    static std::mutex* m = new std::mutex();
    return *m;
  }
  static std::unique_ptr<PostgresServer>& server() {
    static std::unique_ptr<PostgresServer>* s = new std::unique_ptr<PostgresServer>();
    return *s;
  }
  static absl::Status& start_error() {
    static absl::Status* s = new absl::Status();
    return *s;
  }
};

inline ::testing::Environment* const kPostgresEnvironment =
    ::testing::AddGlobalTestEnvironment(new PostgresEnvironment());

// The binary's server, for a test that stops and starts it (PostgresServer::Stop, StartAgain); null and a test
// failure when there is none. Call it after NewPostgresDatabase.
inline PostgresServer* ThisBinarysPostgresServer() {
  absl::StatusOr<PostgresServer*> server = PostgresEnvironment::Server();
  if (!server.ok()) {
    ADD_FAILURE() << "no PostgreSQL server for this test: " << server.status().message();
    return nullptr;
  }
  return *server;
}

// A fresh, empty database on the binary's server; "" and a test failure when there is no server.
inline std::string NewPostgresDatabase() {
  absl::StatusOr<PostgresServer*> server = PostgresEnvironment::Server();
  if (!server.ok()) {
    ADD_FAILURE() << "no PostgreSQL server for this test: " << server.status().message();
    return "";
  }
  absl::StatusOr<std::string> uri = (*server)->NewDatabase();
  if (!uri.ok()) {
    ADD_FAILURE() << "cannot create a PostgreSQL database: " << uri.status() << "\n" << (*server)->log_path();
    return "";
  }
  return *uri;
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_POSTGRES_SERVER_H_
