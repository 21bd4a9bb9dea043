// Security end to end (docs/security.md): the real memfleet-server binary on loopback with the
// committed test certificates (tests/data/tls, scripts/make-test-certs) and tokens made by its own
// `token add`; agents are the real memfleet-agent or RawAgent streams; the CLI side is the real
// `memfleet` binary or its ServerClient.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/collector.h"
#include "cli/server_client.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "tests/support/raw_agent.h"
#include "tests/support/subprocess.h"
#include "tests/support/sample_capture.h"
#include "tests/support/server_process.h"
#include "tests/support/test_paths.h"

namespace memfleet {
namespace security_scenario {
namespace {

using testing::RawAgent;
using testing::Subprocess;

std::string Tls() { return testing::TestData("tls"); }
std::string QcomTree() { return testing::TestData("captures/qcom-sm8450/tree"); }
constexpr char kQcomDevice[] = "sim-qcom-101";  // the qcom tree's capture.json names it
std::string MtkTree() { return testing::TestData("captures/mtk-mt6989/tree"); }
constexpr char kMtkDevice[] = "sim-mtk-202";  // the mtk tree's capture.json names it
constexpr char kCapturedAt[] = "2026-11-30T08:00:00Z";

using testing::Bin;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Tls(const std::string& file) { return ReadFile(std::string(Tls()) + "/" + file); }

std::shared_ptr<grpc::ChannelCredentials> TlsCredentials(const std::string& ca, const std::string& cert = "",
                                                         const std::string& key = "") {
  grpc::SslCredentialsOptions o;
  o.pem_root_certs = Tls(ca);
  if (!cert.empty()) {
    o.pem_cert_chain = Tls(cert);
    o.pem_private_key = Tls(key);
  }
  return grpc::SslCredentials(o);
}

using memfleet::testing::CaptureId;
using memfleet::testing::LoadCapture;

class SecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-security-");
    ASSERT_FALSE(dir_.empty());
    db_ = dir_ + "/memfleet.db";
  }
  void TearDown() override {
    server_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  // Runs a binary to its end; returns the exit code, its output in *output.
  int Run(const std::vector<std::string>& argv, std::string* output = nullptr) {
    testing::ProcessRun run = testing::RunToExit(argv, dir_ + "/run-" + std::to_string(++runs_) + ".log");
    if (output != nullptr) *output = run.output;
    return run.exit_code;
  }

  // `memfleet-server token add`; returns the secret.
  std::string AddToken(const std::string& kind, const std::string& name, const std::string& device = "") {
    return testing::AddServerToken(dir_, kind, name, device);
  }

  std::string WriteFile(const std::string& name, const std::string& content) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << content;
    return path;
  }

  // Starts memfleet-server on 127.0.0.1:0 with TLS (unless `tls` is false) and `extra` flags; returns
  // its address ("" when it did not start).
  std::string StartServer(std::vector<std::string> extra = {}, bool tls = true) {
    std::vector<std::string> argv = {Bin("memfleet-server"), "--listen", "127.0.0.1:0", "--db", db_};
    if (tls) {
      for (const char* a : {"--tls-cert", "server.pem", "--tls-key", "server.key"}) {
        argv.push_back(a[0] == '-' ? std::string(a) : std::string(Tls()) + "/" + a);
      }
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    server_ = std::make_unique<Subprocess>(argv, dir_ + "/server.log");
    std::string line = server_->WaitForLine("listening on", std::chrono::seconds(60));
    EXPECT_FALSE(line.empty()) << server_->Log();
    if (line.empty()) return "";
    address_ = line.substr(line.rfind(' ') + 1);
    // The certificate is for localhost / 127.0.0.1; the server prints the address it listens on.
    return address_;
  }

  cli::ServerClient Client(const std::string& token, const std::string& ca = "ca.pem") {
    cli::ClientSecurity security;
    security.ca_cert_pem = Tls(ca);
    security.token = token;
    return cli::ServerClient(address_, security, std::chrono::seconds(20));
  }

  std::vector<std::string> DeviceIds(const std::string& token) {
    absl::StatusOr<v1::ListDevicesResponse> r = Client(token).ListDevices({});
    EXPECT_TRUE(r.ok()) << r.status();
    std::vector<std::string> ids;
    if (r.ok()) {
      for (const v1::DeviceSummary& d : r->devices()) ids.push_back(d.device_id());
    }
    return ids;
  }

  absl::Status Sweep(const std::string& token) {
    v1::SweepRequest request;
    request.set_deadline_s(2);
    return Client(token).StartSweep(request, [](const v1::SweepProgress&) {});
  }

  std::string dir_;
  std::string db_;
  std::string address_;
  std::unique_ptr<Subprocess> server_;
  int runs_ = 0;
};

TEST_F(SecurityTest, TlsHandshakeWorksWithTheTestCaAndFailsWithAnotherCa) {
  ASSERT_FALSE(StartServer().empty());
  // No tokens yet on loopback: authentication is off, so only TLS decides.
  absl::StatusOr<v1::ListDevicesResponse> ok = Client("").ListDevices({});
  EXPECT_TRUE(ok.ok()) << ok.status();
  absl::StatusOr<v1::ListDevicesResponse> wrong = Client("", "other-ca.pem").ListDevices({});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kUnavailable) << wrong.status();
  EXPECT_NE(wrong.status().message().find("--ca-cert"), std::string::npos) << wrong.status();
  // A plaintext client cannot talk to the TLS port either.
  cli::ServerClient plain(address_, std::chrono::seconds(10));
  EXPECT_FALSE(plain.ListDevices({}).ok());
  // The real CLI binary, with --ca-cert and with $MEMFLEET_CA_CERT.
  std::string out;
  setenv("MEMFLEET_CA_CERT", (std::string(Tls()) + "/ca.pem").c_str(), 1);
  EXPECT_EQ(Run({Bin("memfleet"), "devices", "--server", address_}, &out), 0) << out;
  unsetenv("MEMFLEET_CA_CERT");
  EXPECT_EQ(Run({Bin("memfleet"), "devices", "--server", address_, "--ca-cert", std::string(Tls()) + "/ca.pem"}, &out),
            0)
      << out;
  EXPECT_NE(
      Run({Bin("memfleet"), "devices", "--server", address_, "--ca-cert", std::string(Tls()) + "/other-ca.pem"}, &out),
      0)
      << out;
}

TEST_F(SecurityTest, MutualTlsRefusesAnAgentWithoutAClientCertificate) {
  ASSERT_FALSE(StartServer({"--client-ca", std::string(Tls()) + "/ca.pem"}).empty());
  {
    RawAgent no_cert(address_, TlsCredentials("ca.pem"), "");
    EXPECT_FALSE(no_cert.Hello(kQcomDevice));
    grpc::Status s = no_cert.Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
  }
  {
    // A certificate from another CA fails the handshake itself.
    RawAgent foreign(address_, TlsCredentials("ca.pem", "other-client.pem", "other-client.key"), "");
    EXPECT_FALSE(foreign.Hello(kQcomDevice));
    EXPECT_FALSE(foreign.Finish().ok());
  }
  RawAgent with_cert(address_, TlsCredentials("ca.pem", "client.pem", "client.key"), "");
  ASSERT_TRUE(with_cert.Hello(kQcomDevice));
  std::optional<v1::ServerMessage> answer =
      with_cert.SendCapture(LoadCapture(QcomTree()), CaptureId(kQcomDevice, 1), kCapturedAt);
  ASSERT_TRUE(answer.has_value());
  EXPECT_TRUE(answer->has_ack()) << answer->DebugString();
  EXPECT_TRUE(with_cert.Close().ok());
  // CLI users need no certificate (they have tokens): the query port still answers them.
  EXPECT_EQ(DeviceIds(""), std::vector<std::string>{kQcomDevice});
}

TEST_F(SecurityTest, AnAgentWithItsTokenStoresCapturesAndWrongTokensAreRefused) {
  std::string agent_token = AddToken("agent", "qcom", kQcomDevice);
  std::string read_token = AddToken("read", "reader");
  ASSERT_FALSE(StartServer().empty());
  std::string token_file = WriteFile("agent.token", agent_token + "\n");
  std::string out;
  EXPECT_EQ(Run({Bin("memfleet-agent"), "--server", address_, "--root", QcomTree(), "--device-id", kQcomDevice,
                 "--once", "--once-timeout", "30", "--spool", dir_ + "/spool", "--ca-cert",
                 std::string(Tls()) + "/ca.pem", "--token-file", token_file},
                &out),
            0)
      << out;
  EXPECT_EQ(DeviceIds(read_token), std::vector<std::string>{kQcomDevice});

  // No token, a made-up token, an agent token on a query: refused, with the reason.
  for (const std::string& bad : {std::string(), std::string("mft_") + std::string(64, '0'), agent_token}) {
    absl::StatusOr<v1::ListDevicesResponse> r = Client(bad).ListDevices({});
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.status().code() == absl::StatusCode::kUnauthenticated ||
                r.status().code() == absl::StatusCode::kPermissionDenied)
        << r.status();
  }
  // An agent stream with a read token is refused before its Hello is recorded.
  RawAgent wrong_kind(address_, TlsCredentials("ca.pem"), read_token);
  EXPECT_FALSE(wrong_kind.Hello(kMtkDevice));
  EXPECT_EQ(wrong_kind.Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(DeviceIds(read_token), std::vector<std::string>{kQcomDevice});
}

// An agent that sends nothing after its Hello is not left connected on a revoked token: the server
// checks open streams' tokens every --token-recheck-s and cancels the stream.
TEST_F(SecurityTest, ARevokedTokensIdleStreamIsCancelledWithoutWaitingForACapture) {
  std::string agent_token = AddToken("agent", "qcom", kQcomDevice);
  ASSERT_FALSE(StartServer({"--token-recheck-s", "0.5"}).empty());
  RawAgent agent(address_, TlsCredentials("ca.pem"), agent_token);
  ASSERT_TRUE(agent.Hello(kQcomDevice));
  std::string out;
  ASSERT_EQ(Run({Bin("memfleet-server"), "--db", db_, "token", "revoke", "qcom"}, &out), 0) << out;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(agent.Read().has_value());  // the stream ends; the agent sent nothing since its Hello
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));  // not the 60 s deadline
  EXPECT_NE(server_->Log().find("token \"qcom\" no longer valid"), std::string::npos) << server_->Log();
  // Reconnecting with it is refused at the door.
  RawAgent again(address_, TlsCredentials("ca.pem"), agent_token);
  EXPECT_FALSE(again.Hello(kQcomDevice));
  EXPECT_EQ(again.Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(SecurityTest, ATokenRevokedWhileTheServerRunsIsRefusedOnTheNextCall) {
  std::string read_token = AddToken("read", "reader");
  std::string agent_token = AddToken("agent", "qcom", kQcomDevice);
  ASSERT_FALSE(StartServer().empty());
  ASSERT_TRUE(Client(read_token).ListDevices({}).ok());
  RawAgent agent(address_, TlsCredentials("ca.pem"), agent_token);
  ASSERT_TRUE(agent.Hello(kQcomDevice));
  capture::Capture capture = LoadCapture(QcomTree());
  std::optional<v1::ServerMessage> first = agent.SendCapture(capture, CaptureId(kQcomDevice, 1), kCapturedAt);
  ASSERT_TRUE(first.has_value() && first->has_ack());

  std::string out;
  ASSERT_EQ(Run({Bin("memfleet-server"), "--db", db_, "token", "revoke", "reader"}, &out), 0) << out;
  ASSERT_EQ(Run({Bin("memfleet-server"), "--db", db_, "token", "revoke", "qcom"}, &out), 0) << out;
  absl::StatusOr<v1::ListDevicesResponse> after = Client(read_token).ListDevices({});
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.status().code(), absl::StatusCode::kUnauthenticated) << after.status();
  EXPECT_NE(after.status().message().find("revoked"), std::string::npos) << after.status();
  // The open agent stream is cut at its next capture, which is not stored.
  agent.SendAll(RawAgent::CaptureMessages(capture, CaptureId(kQcomDevice, 2), kCapturedAt));
  grpc::Status cut = agent.Finish();
  EXPECT_EQ(cut.error_code(), grpc::StatusCode::UNAUTHENTICATED) << cut.error_message();
  // `token list` shows it revoked and never prints a secret.
  ASSERT_EQ(Run({Bin("memfleet-server"), "--db", db_, "token", "list"}, &out), 0);
  EXPECT_NE(out.find("revoked"), std::string::npos) << out;
  EXPECT_EQ(out.find("mft_"), std::string::npos) << out;
  EXPECT_EQ(out.find(read_token.substr(4, 16)), std::string::npos) << out;
  // --db may also follow the subcommand.
  std::string listed_after;
  ASSERT_EQ(Run({Bin("memfleet-server"), "token", "list", "--db", db_}, &listed_after), 0) << listed_after;
  EXPECT_EQ(listed_after, out);
  std::string admin_token = AddToken("admin", "boss");
  absl::StatusOr<v1::ListDevicesResponse> devices = Client(admin_token).ListDevices({});
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->devices_size(), 1);
  EXPECT_EQ(devices->devices(0).capture_count(), 1u);
}

TEST_F(SecurityTest, AReadTokenQueriesButCannotSweepAnAdminTokenCan) {
  std::string read_token = AddToken("read", "reader");
  std::string admin_token = AddToken("admin", "boss");
  ASSERT_FALSE(StartServer().empty());
  EXPECT_TRUE(Client(read_token).ListDevices({}).ok());
  absl::Status denied = Sweep(read_token);
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied) << denied;
  EXPECT_TRUE(Sweep(admin_token).ok());
  EXPECT_TRUE(Client(admin_token).ListDevices({}).ok());
  // Re-accounting is admin-only too (no CLI command: the raw stub).
  for (const auto& [token, code] :
       {std::pair{read_token, grpc::StatusCode::PERMISSION_DENIED}, std::pair{admin_token, grpc::StatusCode::OK}}) {
    auto channel = grpc::CreateChannel(address_, TlsCredentials("ca.pem"));
    auto stub = v1::QueryService::NewStub(channel);
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + token);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    v1::ReaccountRequest request;
    v1::ReaccountResponse response;
    EXPECT_EQ(stub->Reaccount(&context, request, &response).error_code(), code);
  }
  // The real CLI: exit code 1 and the reason.
  std::string out;
  EXPECT_EQ(Run({Bin("memfleet"), "sweep", "--server", address_, "--ca-cert", std::string(Tls()) + "/ca.pem", "--token",
                 read_token, "--deadline", "1"},
                &out),
            1);
  EXPECT_NE(out.find("needs an admin token"), std::string::npos) << out;
}

TEST_F(SecurityTest, AnAgentTokenForOneDeviceCannotSendAsAnother) {
  std::string qcom_token = AddToken("agent", "qcom", kQcomDevice);
  std::string read_token = AddToken("read", "reader");
  ASSERT_FALSE(StartServer().empty());
  RawAgent impostor(address_, TlsCredentials("ca.pem"), qcom_token);
  EXPECT_FALSE(impostor.Hello(kMtkDevice));
  grpc::Status s = impostor.Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  EXPECT_TRUE(DeviceIds(read_token).empty());  // the claimed device was not even recorded
}

TEST_F(SecurityTest, BeyondLoopbackTheServerNeedsTlsAndTokensOrInsecure) {
  std::string out;
  // 0.0.0.0 is every interface: not loopback.
  EXPECT_EQ(Run({Bin("memfleet-server"), "--listen", "0.0.0.0:0", "--db", db_}, &out), 2);
  EXPECT_NE(out.find("--insecure"), std::string::npos) << out;
  EXPECT_NE(out.find("--tls-cert"), std::string::npos) << out;
  EXPECT_EQ(out.find("listening on"), std::string::npos) << out;
  // TLS alone is not enough.
  EXPECT_EQ(Run({Bin("memfleet-server"), "--listen", "0.0.0.0:0", "--db", db_, "--tls-cert",
                 std::string(Tls()) + "/server.pem", "--tls-key", std::string(Tls()) + "/server.key"},
                &out),
            2);
  EXPECT_NE(out.find("token add"), std::string::npos) << out;
  // --insecure accepts the risk.
  server_ = std::make_unique<Subprocess>(
      std::vector<std::string>{Bin("memfleet-server"), "--listen", "0.0.0.0:0", "--db", db_, "--insecure"},
      dir_ + "/insecure.log");
  EXPECT_FALSE(server_->WaitForLine("listening on", std::chrono::seconds(60)).empty()) << server_->Log();
  server_.reset();
  // TLS and tokens: starts.
  AddToken("admin", "boss");
  server_ = std::make_unique<Subprocess>(
      std::vector<std::string>{Bin("memfleet-server"), "--listen", "0.0.0.0:0", "--db", db_, "--tls-cert",
                               std::string(Tls()) + "/server.pem", "--tls-key", std::string(Tls()) + "/server.key"},
      dir_ + "/secure.log");
  EXPECT_FALSE(server_->WaitForLine("listening on", std::chrono::seconds(60)).empty()) << server_->Log();
}

TEST_F(SecurityTest, ARogueOverItsStreamLimitIsCutOffAndOthersAreServed) {
  std::string rogue_token = AddToken("agent", "mtk", kMtkDevice);
  std::string good_token = AddToken("agent", "qcom", kQcomDevice);
  ASSERT_FALSE(StartServer({"--max-streams-per-token", "1"}).empty());
  RawAgent first(address_, TlsCredentials("ca.pem"), rogue_token);
  ASSERT_TRUE(first.Hello(kMtkDevice));
  RawAgent second(address_, TlsCredentials("ca.pem"), rogue_token);
  EXPECT_FALSE(second.Hello(kMtkDevice));
  grpc::Status s = second.Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("--max-streams-per-token"), std::string::npos) << s.error_message();

  RawAgent good(address_, TlsCredentials("ca.pem"), good_token);
  ASSERT_TRUE(good.Hello(kQcomDevice));
  std::optional<v1::ServerMessage> answer =
      good.SendCapture(LoadCapture(QcomTree()), CaptureId(kQcomDevice, 1), kCapturedAt);
  ASSERT_TRUE(answer.has_value());
  EXPECT_TRUE(answer->has_ack()) << answer->DebugString();
  EXPECT_TRUE(good.Close().ok());
  // The rogue's first stream is untouched by the refusal of its second.
  std::optional<v1::ServerMessage> rogue_answer =
      first.SendCapture(LoadCapture(MtkTree()), CaptureId(kMtkDevice, 1), kCapturedAt);
  ASSERT_TRUE(rogue_answer.has_value());
  EXPECT_TRUE(rogue_answer->has_ack()) << rogue_answer->DebugString();
  EXPECT_TRUE(first.Close().ok());
}

TEST_F(SecurityTest, ARogueOverItsCaptureRateIsCutOffAndOthersAreServed) {
  std::string rogue_token = AddToken("agent", "mtk", kMtkDevice);
  std::string good_token = AddToken("agent", "qcom", kQcomDevice);
  std::string read_token = AddToken("read", "reader");
  ASSERT_FALSE(StartServer({"--max-captures-per-minute", "3"}).empty());
  capture::Capture mtk = LoadCapture(MtkTree());
  RawAgent rogue(address_, TlsCredentials("ca.pem"), rogue_token);
  ASSERT_TRUE(rogue.Hello(kMtkDevice));
  for (int seq = 1; seq <= 3; ++seq) {
    std::optional<v1::ServerMessage> a = rogue.SendCapture(mtk, CaptureId(kMtkDevice, seq), kCapturedAt);
    ASSERT_TRUE(a.has_value());
    EXPECT_TRUE(a->has_ack()) << seq << ": " << a->DebugString();
  }
  // The fourth within the minute: rejected (kept spooled: retry) and the stream ends.
  std::optional<v1::ServerMessage> fourth = rogue.SendCapture(mtk, CaptureId(kMtkDevice, 4), kCapturedAt);
  ASSERT_TRUE(fourth.has_value());
  ASSERT_TRUE(fourth->has_rejected()) << fourth->DebugString();
  EXPECT_EQ(fourth->rejected().code(), static_cast<int>(grpc::StatusCode::RESOURCE_EXHAUSTED));
  EXPECT_TRUE(fourth->rejected().retry());
  grpc::Status s = rogue.Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("--max-captures-per-minute"), std::string::npos) << s.error_message();

  RawAgent good(address_, TlsCredentials("ca.pem"), good_token);
  ASSERT_TRUE(good.Hello(kQcomDevice));
  std::optional<v1::ServerMessage> answer =
      good.SendCapture(LoadCapture(QcomTree()), CaptureId(kQcomDevice, 1), kCapturedAt);
  ASSERT_TRUE(answer.has_value());
  EXPECT_TRUE(answer->has_ack()) << answer->DebugString();
  EXPECT_TRUE(good.Close().ok());

  absl::StatusOr<v1::ListDevicesResponse> devices = Client(read_token).ListDevices({});
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->devices_size(), 2);
  EXPECT_EQ(devices->devices(0).device_id(), kMtkDevice);  // sorted by id: "sim-mtk" < "sim-qcom"
  EXPECT_EQ(devices->devices(0).capture_count(), 3u);      // the rogue's three before the cut, not the fourth
  EXPECT_EQ(devices->devices(1).capture_count(), 1u);
}

}  // namespace
}  // namespace security_scenario
}  // namespace memfleet
