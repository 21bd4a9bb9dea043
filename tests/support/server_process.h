// Test support: a real memfleet-server on 127.0.0.1:0 over a SQLite file in a test's folder (or a
// PostgreSQL database given by its URI), and the one query every end-to-end test asks it (a device's
// latest stored report). Header-only.
//
//   testing::ServerProcess server(dir);                 // waits until it listens
//   RunAgent("--server", server.address(), ...);
//   nlohmann::json report = server.Report("sim-qcom-101");
//   RunAgentOnce(server, dir, "qcom-sm8450");           // memfleet-agent --once on a sample tree
#ifndef MEMFLEET_TESTS_SUPPORT_SERVER_PROCESS_H_
#define MEMFLEET_TESTS_SUPPORT_SERVER_PROCESS_H_

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "memfleet/v1/query_service.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"

namespace memfleet::testing {

class ServerProcess {
 public:
  // Starts the build's memfleet-server with `extra` flags on `db` (its --db: "" = DIR/memfleet.db, or a
  // PostgreSQL URI); address() is "" (and the test fails) when it never said where it listens.
  explicit ServerProcess(const std::string& dir, const std::vector<std::string>& extra = {},
                         const std::string& db = "") {
    std::vector<std::string> argv = {Bin("memfleet-server"), "--listen", "127.0.0.1:0", "--db",
                                     db.empty() ? dir + "/memfleet.db" : db};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = std::make_unique<Subprocess>(argv, dir + "/server.log");
    std::string line = process_->WaitForLine("listening on", std::chrono::seconds(60));
    EXPECT_FALSE(line.empty()) << process_->Log();
    if (!line.empty()) address_ = line.substr(line.rfind(' ') + 1);
    UseCredentials(grpc::InsecureChannelCredentials());
  }

  const std::string& address() const { return address_; }
  std::string Log() { return process_->Log(); }
  Subprocess& process() { return *process_; }
  v1::QueryService::Stub& query() { return *query_; }

  // Queries go over a channel with these credentials from now on (a TLS server needs them).
  void UseCredentials(const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
    query_ = v1::QueryService::NewStub(grpc::CreateChannel(address_, credentials));
  }

  // Queries send this read or admin token from now on (a server with tokens needs one).
  void UseToken(const std::string& token) { token_ = token; }

  // The device's latest stored report; null JSON (and a test failure) when the server has none.
  nlohmann::json Report(const std::string& device_id) {
    grpc::ClientContext ctx;
    if (!token_.empty()) ctx.AddMetadata("authorization", "Bearer " + token_);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::GetReportRequest req;
    req.set_device_id(device_id);
    v1::GetReportResponse resp;
    grpc::Status s = query_->GetReport(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << device_id << ": " << s.error_message();
    return s.ok() ? nlohmann::json::parse(resp.report_json()) : nlohmann::json();
  }

 private:
  std::unique_ptr<Subprocess> process_;
  std::string address_;
  std::unique_ptr<v1::QueryService::Stub> query_;
  std::string token_;
};

// `memfleet-server --db DIR/memfleet.db token add` (the database ServerProcess(dir) opens); returns the
// secret (its stdout's last line), with a test failure when there is none.
inline std::string AddServerToken(const std::string& dir, const std::string& kind, const std::string& name,
                                  const std::string& device_id = "") {
  std::vector<std::string> argv = {
      Bin("memfleet-server"), "--db", dir + "/memfleet.db", "token", "add", "--kind", kind, "--name", name};
  if (!device_id.empty()) {
    argv.push_back("--device-id");
    argv.push_back(device_id);
  }
  Subprocess p(argv, dir + "/token-add-" + name + ".log");
  EXPECT_EQ(p.WaitExit(std::chrono::seconds(60)), 0) << p.Log();
  std::istringstream lines(p.Log());
  std::string secret;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("mft_", 0) == 0) secret = line;
  }
  EXPECT_EQ(secret.size(), 4u + 64u) << p.Log();  // "mft_" + 32 random bytes in hex
  return secret;
}

// `memfleet-agent --once` on the sample tree tests/data/captures/<capture>/tree as device <capture>, into
// `server`, its spool and log in `dir`; `extra`: TLS and token flags. A test failure, with both logs,
// unless it exits 0.
inline void RunAgentOnce(ServerProcess& server, const std::string& dir, const std::string& capture,
                         const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {Bin("memfleet-agent"),
                                   "--server",
                                   server.address(),
                                   "--root",
                                   TestData("captures/" + capture + "/tree"),
                                   "--device-id",
                                   capture,
                                   "--once",
                                   "--once-timeout",
                                   "60",
                                   "--spool",
                                   dir + "/spool-" + capture};
  argv.insert(argv.end(), extra.begin(), extra.end());
  Subprocess agent(argv, dir + "/agent-" + capture + ".log");
  EXPECT_EQ(agent.WaitExit(std::chrono::seconds(120)), 0) << agent.Log() << "\n--- server ---\n" << server.Log();
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_SERVER_PROCESS_H_
