// Finding the server (--server over $MEMFLEET_SERVER), translating RPC failures, and every server command
// against a closed port on 127.0.0.1: exit code 1 and "cannot reach the server at HOST:PORT".
#include "cli/server_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <string>

#include "cli/commands/devices_command.h"
#include "cli/commands/fleet_command.h"
#include "cli/commands/process_command.h"
#include "cli/commands/report_command.h"
#include "cli/commands/server_command.h"
#include "cli/commands/sweep_command.h"
#include "cli/commands/trend_command.h"
#include "tests/support/load_tree.h"

namespace memfleet::cli {
namespace {

// A port nothing listens on: bind an ephemeral one, then close it.
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

TEST(ResolveServerAddressTest, FlagWinsOverEnvironment) {
  EXPECT_EQ(ResolveServerAddress("10.0.0.1:7070", "10.0.0.2:7070").value(), "10.0.0.1:7070");
  EXPECT_EQ(ResolveServerAddress("", "10.0.0.2:7070").value(), "10.0.0.2:7070");
  EXPECT_EQ(ResolveServerAddress("lab-server:7070", nullptr).value(), "lab-server:7070");
  EXPECT_EQ(ResolveServerAddress("[::1]:7070", nullptr).value(), "[::1]:7070");
  EXPECT_EQ(ResolveServerAddress("unix:/run/memfleet.sock", nullptr).value(), "unix:/run/memfleet.sock");
  // A bad environment value does not matter when the flag is given.
  EXPECT_TRUE(ResolveServerAddress("10.0.0.1:7070", "garbage").ok());
}

TEST(ResolveServerAddressTest, NeitherSaysHowToSetIt) {
  for (const char* env : {static_cast<const char*>(nullptr), ""}) {
    absl::StatusOr<std::string> a = ResolveServerAddress("", env);
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(a.status().message().find("--server HOST:PORT"), std::string::npos) << a.status().message();
    EXPECT_NE(a.status().message().find("MEMFLEET_SERVER"), std::string::npos) << a.status().message();
  }
}

TEST(ResolveServerAddressTest, RejectsWhatIsNotHostPort) {
  for (const char* bad : {"localhost", ":7070", "host:", "host:0", "host:65536", "host:7o70", "::1:7070"}) {
    absl::StatusOr<std::string> a = ResolveServerAddress(bad, nullptr);
    EXPECT_FALSE(a.ok()) << bad;
    EXPECT_NE(a.status().message().find("--server"), std::string::npos) << a.status().message();
  }
  absl::StatusOr<std::string> env = ResolveServerAddress("", "nohost");
  ASSERT_FALSE(env.ok());
  EXPECT_NE(env.status().message().find("$MEMFLEET_SERVER"), std::string::npos);  // says where it came from
}

TEST(TranslateRpcStatusTest, MessagesAUserCanActOn) {
  const std::chrono::seconds d(10);
  absl::Status s = TranslateRpcStatus(grpc::Status(grpc::StatusCode::UNAVAILABLE, "failed to connect to all addresses"),
                                      "ListDevices", "127.0.0.1:7070", d);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "memfleet: cannot reach the server at 127.0.0.1:7070 (is memfleet-server running?)");

  s = TranslateRpcStatus(grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown device \"pixel-9\""), "GetReport", "h:1",
                         d);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "memfleet: unknown device \"pixel-9\"");
  EXPECT_EQ(ExitCodeFor(s), kExitNothingToCheck);

  s = TranslateRpcStatus(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "unknown metric device.foo_kb"), "GetFleet",
                         "h:1", d);
  EXPECT_EQ(s.message(), "memfleet: unknown metric device.foo_kb");
  EXPECT_EQ(ExitCodeFor(s), kExitUsage);

  s = TranslateRpcStatus(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"), "StartSweep", "h:1",
                         std::chrono::seconds(70));
  EXPECT_EQ(s.message(), "memfleet: the server at h:1 did not answer StartSweep within 70 s");
  EXPECT_EQ(ExitCodeFor(s), kExitFailed);

  s = TranslateRpcStatus(grpc::Status(grpc::StatusCode::INTERNAL, "database is locked"), "GetReport", "h:1", d);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("database is locked"), std::string::npos);
  EXPECT_EQ(ExitCodeFor(s), kExitFailed);

  EXPECT_TRUE(TranslateRpcStatus(grpc::Status::OK, "x", "h:1", d).ok());
}

class UnreachableServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int port = ClosedPort();
    ASSERT_GT(port, 0);
    address_ = "127.0.0.1:" + std::to_string(port);
    common_.server = address_;
    common_.env_server = "";  // the test does not depend on the caller's environment
  }
  std::string Expected() const {
    return "memfleet: cannot reach the server at " + address_ + " (is memfleet-server running?)\n";
  }
  std::string address_;
  ServerArgs common_;
  std::ostringstream out_, err_;
};

TEST_F(UnreachableServerTest, Devices) {
  DevicesArgs args;
  args.common = common_;
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(RunDevices(args, out_, err_), kExitFailed);
  EXPECT_EQ(err_.str(), Expected());
  EXPECT_EQ(out_.str(), "");
  // Connection refused fails fast; it does not wait out the 10 s deadline.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8));
}

TEST_F(UnreachableServerTest, AddressFromTheEnvironment) {
  DevicesArgs args;
  args.common.env_server = address_;
  EXPECT_EQ(RunDevices(args, out_, err_), kExitFailed);
  EXPECT_EQ(err_.str(), Expected());
}

TEST_F(UnreachableServerTest, Sweep) {
  SweepArgs args;
  args.common = common_;
  args.deadline_s = 5;
  args.progress_tty = true;
  EXPECT_EQ(RunSweep(args, out_, err_), kExitFailed);
  EXPECT_EQ(err_.str(), Expected());  // no progress bar was drawn before the failure
}

TEST_F(UnreachableServerTest, Report) {
  ReportArgs args;
  args.common = common_;
  args.device_id = "pixel-7";
  EXPECT_EQ(RunReport(args, out_, err_), kExitFailed);
  EXPECT_EQ(err_.str(), Expected());
}

TEST_F(UnreachableServerTest, Process) {
  ProcessArgs args;
  args.common = common_;
  args.device_id = "pixel-7";
  args.process_name = "surfaceflinger";
  args.common.json = true;
  EXPECT_EQ(RunProcess(args, out_, err_), kExitFailed);
  EXPECT_EQ(err_.str(), Expected());
}

TEST_F(UnreachableServerTest, Trend) {
  TrendArgs args;
  args.common = common_;
  args.device_id = "pixel-7";
  args.process_name = "surfaceflinger";
  args.since = "7d";
  args.common.csv = true;
  EXPECT_EQ(RunTrend(args, out_, err_), kExitFailed);
  EXPECT_EQ(err_.str(), Expected());
}

TEST_F(UnreachableServerTest, Fleet) {
  FleetArgs args;
  args.common = common_;
  EXPECT_EQ(RunFleet(args, out_, err_), kExitFailed);
  EXPECT_EQ(err_.str(), Expected());
}

// A plaintext client meeting a TLS port: gRPC says only UNAVAILABLE, so the message names the TLS flags.
TEST(TlsServerTest, APlaintextClientIsToldAboutCaCert) {
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({testing::ReadFileForTest(testing::TestData("tls/server.key")),
                                    testing::ReadFileForTest(testing::TestData("tls/server.pem"))});
  v1::QueryService::Service service;  // every call UNIMPLEMENTED: the handshake fails before any
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(ssl), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port, 0);

  DevicesArgs args;
  args.common.server = "127.0.0.1:" + std::to_string(port);
  args.common.env_server = "";
  args.common.env_ca_cert = "";
  std::ostringstream out, err;
  EXPECT_EQ(RunDevices(args, out, err), kExitFailed);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(), "memfleet: cannot reach the server at " + args.common.server +
                           " (is memfleet-server running?); something at " + args.common.server +
                           " closed the connection unanswered: if the server uses TLS, pass --ca-cert FILE (or set "
                           "$MEMFLEET_CA_CERT)\n");
  server->Shutdown();
}

TEST(ServerCommandUsageTest, NoServerIsAUsageError) {
  DevicesArgs args;
  args.common.env_server = "";
  std::ostringstream out, err;
  EXPECT_EQ(RunDevices(args, out, err), kExitUsage);
  EXPECT_NE(err.str().find("MEMFLEET_SERVER"), std::string::npos) << err.str();
}

TEST(ServerCommandUsageTest, FlagErrorsComeBeforeAnyConnection) {
  // No server is named: each must fail on its own flag (exit 2) and say which, not on the server.
  std::ostringstream out, err;
  DevicesArgs both;
  both.common.env_server = "";
  both.common.json = both.common.csv = true;
  EXPECT_EQ(RunDevices(both, out, err), kExitUsage);
  EXPECT_NE(err.str().find("--json or --csv"), std::string::npos) << err.str();

  err.str("");
  TrendArgs trend;
  trend.common.env_server = "";
  trend.device_id = "d";
  trend.process_name = "p";
  trend.since = "last tuesday";
  EXPECT_EQ(RunTrend(trend, out, err), kExitUsage);
  EXPECT_NE(err.str().find("--since"), std::string::npos) << err.str();

  err.str("");
  SweepArgs sweep;
  sweep.common.env_server = "";
  sweep.where = {"colour=blue"};
  EXPECT_EQ(RunSweep(sweep, out, err), kExitUsage);
  EXPECT_NE(err.str().find("unknown key"), std::string::npos) << err.str();

  err.str("");
  ReportArgs report;
  report.common.env_server = "";
  report.device_id = "d";
  report.at = "2026-13-01T00:00:00Z";
  EXPECT_EQ(RunReport(report, out, err), kExitUsage);
  EXPECT_NE(err.str().find("--at"), std::string::npos) << err.str();
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace memfleet::cli
