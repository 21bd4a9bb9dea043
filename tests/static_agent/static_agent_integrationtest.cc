// The phone binary as a phone runs it: the static memfleet-agent that scripts/build-agent makes, run with
// --once against the real x86-64 memfleet-server on 127.0.0.1 and a real SQLite file. Built twice:
//   - arm64: the aarch64 binary under qemu-aarch64-static (called directly, no binfmt), on each bundled
//     capture tree; the stored reports must equal each tree's expected.json.
//   - x86_64: the static x86-64 binary on the same trees and on this machine's "/".
// MEMFLEET_STATIC_AGENT is the binary; MEMFLEET_STATIC_AGENT_EMULATOR the program that runs it ("" when
// it runs natively). tests/static_agent/CMakeLists.txt registers a build only when its binary is given.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "memfleet/v1/query_service.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/support/expected_report.h"
#include "tests/support/load_tree.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"

namespace memfleet {
namespace {

using nlohmann::json;
using testing::Subprocess;

const std::vector<std::string> kCaptures = {"generic-noddr", "mtk-mt6989", "qcom-edge", "qcom-sm8450", "xring-o1"};

class StaticAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-static-agent-");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    server_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  // memfleet-server on 127.0.0.1:0; its host:port.
  std::string StartServer(const std::vector<std::string>& extra = {}) {
    server_ = std::make_unique<testing::ServerProcess>(dir_, extra);
    return server_->address();
  }

  // The static agent with --once (under the emulator, when there is one); its exit code and log.
  int RunAgentOnce(const std::string& server, const std::string& root, const std::string& device_id, std::string* log,
                   const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv;
    if (std::string(MEMFLEET_STATIC_AGENT_EMULATOR)[0] != '\0') argv.push_back(MEMFLEET_STATIC_AGENT_EMULATOR);
    for (const std::string& a :
         {std::string(MEMFLEET_STATIC_AGENT), std::string("--server"), server, std::string("--root"), root,
          std::string("--device-id"), device_id, std::string("--once"), std::string("--once-timeout"),
          std::string("120"), std::string("--spool"), dir_ + "/spool-" + device_id}) {
      argv.push_back(a);
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    Subprocess agent(argv, dir_ + "/agent-" + device_id + ".log");
    int code = agent.WaitExit(std::chrono::seconds(180));
    *log = agent.Log();
    return code;
  }

  json Report(const std::string& device_id) { return server_->Report(device_id); }

  // Every figure of the tree's expected.json, in the stored report.
  void ExpectReportOfTree(const std::string& capture, const std::string& device_id) {
    testing::ExpectReportMatchesExpected(Report(device_id), capture);
  }

  std::string dir_;
  std::unique_ptr<testing::ServerProcess> server_;
};

// Half the trees reach the server as a gRPC ipv4: literal, half as 127.0.0.1:PORT: neither needs a
// name lookup, which the static agent cannot do on a phone.
TEST_F(StaticAgentTest, EachCaptureTreeIsStoredWithItsExpectedReport) {
  const std::string address = StartServer();
  for (size_t i = 0; i < kCaptures.size(); ++i) {
    const std::string& c = kCaptures[i];
    const std::string server = i % 2 == 0 ? "ipv4:" + address : address;
    std::string log;
    ASSERT_EQ(RunAgentOnce(server, testing::TestData("captures/" + c + "/tree"), c, &log), 0)
        << c << ":\n"
        << log << "\n--- server ---\n"
        << server_->Log();
    EXPECT_NE(log.find("connected to ipv4:" + address), std::string::npos) << log;
    ExpectReportOfTree(c, c);
  }
}

// TLS with the lab's CA (the committed test certificates, whose server certificate names 127.0.0.1):
// the static build's reduced gRPC plugin set keeps the TLS handshaker and the security filters.
TEST_F(StaticAgentTest, ACaptureIsDeliveredOverTls) {
  const std::string tls = testing::TestData("tls");
  const std::string address = StartServer({"--tls-cert", tls + "/server.pem", "--tls-key", tls + "/server.key"});
  std::string log;
  ASSERT_EQ(RunAgentOnce(address, testing::TestData("captures/qcom-sm8450/tree"), "tls-1", &log,
                         {"--ca-cert", tls + "/ca.pem"}),
            0)
      << log << "\n--- server ---\n"
      << server_->Log();
  // The query side of the test speaks TLS too.
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = testing::ReadFileForTest(tls + "/ca.pem");
  server_->UseCredentials(grpc::SslCredentials(ssl));
  ExpectReportOfTree("qcom-sm8450", "tls-1");
}

TEST_F(StaticAgentTest, AHostNameThatDoesNotResolveIsRefusedWithAdvice) {
  std::string log;
  EXPECT_EQ(RunAgentOnce("no-such-lab.invalid:7070", testing::TestData("captures/qcom-sm8450/tree"), "dns-1", &log), 2);
  EXPECT_NE(log.find("cannot resolve host name \"no-such-lab.invalid\""), std::string::npos) << log;
  EXPECT_NE(log.find("Give the server as an address"), std::string::npos) << log;
}

#if MEMFLEET_STATIC_AGENT_LIVE_ROOT
// This machine's "/" read live by the static binary: a capture is stored, and the figures that /proc
// exposes here are there.
TEST_F(StaticAgentTest, ThisMachinesRootIsCapturedWithItsFigures) {
  const std::string address = StartServer();
  std::string log;
  ASSERT_EQ(RunAgentOnce(address, "/", "static-live", &log), 0) << log << "\n--- server ---\n" << server_->Log();
  json report = Report("static-live");
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["platform"], "generic");
  EXPECT_TRUE(report["device"]["mem_total_kb"].is_number()) << report["device"].dump();
  EXPECT_GT(report["device"]["mem_total_kb"].get<int64_t>(), 0);
  EXPECT_TRUE(report["device"]["kernel_kb"].is_number()) << report["device"].dump();
  ASSERT_GT(report["processes"].size(), 1u);
  // Processes whose smaps_rollup this (root) agent reads have a Pss; at least the agent itself.
  size_t with_pss = 0;
  for (auto p = report["processes"].begin(); p != report["processes"].end(); ++p) {
    if (p.value()["pss_kb"].is_number() && p.value()["pss_kb"].get<int64_t>() > 0) ++with_pss;
  }
  EXPECT_GT(with_pss, 1u) << report["processes"].dump().substr(0, 2000);
}
#endif

}  // namespace
}  // namespace memfleet
