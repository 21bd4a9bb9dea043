// The memfleet binary as people type it, against a real server (a LabServer on 127.0.0.1:0 over a
// temporary SQLite file, fed by a raw agent with the qcom-sm8450 fixture): global options before the
// subcommand as well as after it, and process names typed as base names or ends of the cmdline.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "server/security/token_admin.h"
#include "tests/support/load_tree.h"
#include "tests/support/memfleet_cli.h"
#include "tests/support/raw_agent.h"
#include "tests/support/sample_capture.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"
#include "tests/support/test_server.h"

namespace memfleet {
namespace cli_scenario {
namespace {

using nlohmann::json;

std::string QcomTree() { return testing::TestData("captures/qcom-sm8450/tree"); }
constexpr char kQcomDevice[] = "sim-qcom-101";  // its capture.json's device_id
constexpr char kCapturedAt[] = "2026-11-30T08:00:00Z";
constexpr char kStoredAt[] = "2026-11-30T08:00:00.000Z";  // kCapturedAt as the store keeps it

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<testing::TestServer>> s = testing::TestServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    cli_ = testing::MemfleetCli(server_->dir(), {}, std::chrono::seconds(60));
    testing::RawAgent agent(server_->target());
    ASSERT_TRUE(agent.Hello(kQcomDevice));
    std::optional<v1::ServerMessage> answer =
        agent.SendCapture(testing::LoadCapture(QcomTree()), testing::CaptureId(kQcomDevice, 1), kCapturedAt);
    ASSERT_TRUE(answer.has_value() && answer->has_ack()) << (answer ? answer->DebugString() : "stream ended");
    ASSERT_TRUE(agent.Close().ok());
  }

  // Runs bin/memfleet with `args`; its stdout and stderr go to *output. Returns the exit code.
  int Memfleet(const std::vector<std::string>& args, std::string* output) {
    testing::ProcessRun run = cli_.Run(args);
    *output = run.output;
    return run.exit_code;
  }

  std::unique_ptr<testing::TestServer> server_;
  testing::MemfleetCli cli_;
};

TEST_F(CliTest, GlobalOptionsWorkBeforeTheSubcommandAsWellAsAfterIt) {
  const std::string target = server_->target();
  std::string out;
  ASSERT_EQ(Memfleet({"--server", target, "devices"}, &out), 0) << out;
  EXPECT_NE(out.find(kQcomDevice), std::string::npos) << out;

  ASSERT_EQ(Memfleet({"--server", target, "--json", "devices"}, &out), 0) << out;
  EXPECT_EQ(json::parse(out)[0]["device_id"], kQcomDevice) << out;
  ASSERT_EQ(Memfleet({"--json", "devices", "--server", target}, &out), 0) << out;  // split around it
  EXPECT_EQ(json::parse(out)[0]["device_id"], kQcomDevice) << out;
  ASSERT_EQ(Memfleet({"--csv", "--server", target, "report", kQcomDevice}, &out), 0) << out;
  EXPECT_NE(out.find("\r\n"), std::string::npos) << out;  // CSV rows

  // The one after the subcommand wins.
  ASSERT_EQ(Memfleet({"--server", "127.0.0.1:1", "devices", "--server", target}, &out), 0) << out;
  // --json and --csv still conflict, wherever they are.
  EXPECT_EQ(Memfleet({"--json", "--server", target, "devices", "--csv"}, &out), 2) << out;
  EXPECT_NE(out.find("give --json or --csv, not both"), std::string::npos) << out;
  // account runs offline: server options before it are refused, not silently dropped.
  EXPECT_EQ(Memfleet({"--server", target, "account", QcomTree()}, &out), 2) << out;
  EXPECT_NE(out.find("memfleet account: runs offline"), std::string::npos) << out;
}

TEST_F(CliTest, TokenOptionsBeforeTheSubcommandAuthenticate) {
  absl::StatusOr<std::string> secret =
      security::AddToken(server_->store(), {"ci", security::TokenKind::kRead, ""}, kCapturedAt);
  ASSERT_TRUE(secret.ok()) << secret.status();
  const std::string token_file = server_->dir() + "/token";
  std::ofstream(token_file) << *secret << "\n";
  std::string out;
  EXPECT_EQ(Memfleet({"--server", server_->target(), "devices"}, &out), 1) << out;
  EXPECT_NE(out.find("requires a token"), std::string::npos) << out;
  ASSERT_EQ(Memfleet({"--server", server_->target(), "--token-file", token_file, "devices"}, &out), 0) << out;
  EXPECT_NE(out.find(kQcomDevice), std::string::npos) << out;
  ASSERT_EQ(Memfleet({"--token", *secret, "--server", server_->target(), "devices"}, &out), 0) << out;
}

TEST_F(CliTest, ProcessAndTrendTakeABaseNameOrAnEndOfTheCmdline) {
  const std::string target = server_->target();
  std::string out;
  ASSERT_EQ(Memfleet({"--server", target, "--json", "process", kQcomDevice, "surfaceflinger"}, &out), 0) << out;
  EXPECT_NE(out.find("memfleet process: \"surfaceflinger\" is \"/system/bin/surfaceflinger\""), std::string::npos)
      << out;
  ASSERT_EQ(Memfleet({"--server", target, "process", kQcomDevice, "tencent.mm"}, &out), 0) << out;
  EXPECT_NE(out.find("com.tencent.mm (pid 13560)"), std::string::npos) << out;

  ASSERT_EQ(Memfleet({"--server", target, "--csv", "trend", kQcomDevice, "--process", "surfaceflinger"}, &out), 0)
      << out;
  EXPECT_NE(out.find("memfleet trend: \"surfaceflinger\" is \"/system/bin/surfaceflinger\""), std::string::npos) << out;
  EXPECT_NE(
      out.find("captured_at,capture_id,pid,total_kb,sweep_id,labels,agent_labels\r\n" + std::string(kStoredAt) + ","),
      std::string::npos)
      << out;
}

TEST_F(CliTest, NoneOrSeveralMatchingNamesAreRefusedWithTheClosestNames) {
  const std::string target = server_->target();
  std::string out;
  EXPECT_EQ(Memfleet({"--server", target, "process", kQcomDevice, "surfaceflinga"}, &out), 4) << out;
  EXPECT_NE(out.find("no process named \"surfaceflinga\""), std::string::npos) << out;
  EXPECT_NE(out.find("closest: \"/system/bin/surfaceflinger\""), std::string::npos) << out;
  EXPECT_EQ(Memfleet({"--server", target, "trend", kQcomDevice, "--process", "-service"}, &out), 2) << out;
  EXPECT_NE(out.find("\"-service\" is the end of 2 processes in the latest report of sim-qcom-101: "
                     "\"/vendor/bin/hw/android.hardware.graphics.composer3-service\", "
                     "\"/vendor/bin/hw/vendor.qti.hardware.display.allocator-service\"; give the full name"),
            std::string::npos)
      << out;
  EXPECT_EQ(Memfleet({"--server", target, "trend", kQcomDevice, "--process", "surfaceflinga"}, &out), 4) << out;
  EXPECT_NE(out.find("no process named \"surfaceflinga\" in the stored captures of device \"sim-qcom-101\"; "
                     "closest names in its latest report: "
                     "\"/system/bin/surfaceflinger\""),
            std::string::npos)
      << out;
}

// regressions resolves the name on the server, among the compared reports' names.
TEST_F(CliTest, RegressionsResolvesTheProcessNameOnTheServer) {
  const std::string target = server_->target();
  std::string out;
  // One build only: nothing to check (4), not a server failure (1); the message names the process it
  // resolved to.
  EXPECT_EQ(Memfleet({"--server", target, "regressions", "--process", "surfaceflinger"}, &out), 4) << out;
  EXPECT_NE(out.find("the devices with \"/system/bin/surfaceflinger\" are all on one build"), std::string::npos) << out;
  EXPECT_EQ(Memfleet({"--server", target, "regressions", "--process", "surfaceflinga"}, &out), 4) << out;
  EXPECT_NE(out.find("has a process named \"surfaceflinga\"; closest names: \"/system/bin/surfaceflinger\""),
            std::string::npos)
      << out;
  EXPECT_EQ(Memfleet({"--server", target, "regressions", "--process", "-service"}, &out), 2) << out;
  EXPECT_NE(out.find("\"-service\" is the end of 2 processes in the compared reports"), std::string::npos) << out;
}

// `fleet --process` takes the names `process` takes, and answers with the same figure.
TEST_F(CliTest, FleetResolvesTheProcessNameAsProcessDoes) {
  const std::string target = server_->target();
  std::string out;
  ASSERT_EQ(Memfleet({"--server", target, "--json", "process", kQcomDevice, "surfaceflinger"}, &out), 0) << out;
  const json process = json::parse(out.substr(out.find('{')));
  ASSERT_EQ(Memfleet({"--server", target, "--json", "fleet", "--metric", "process.total_kb", "--process",
                      "surfaceflinger", "--rows"},
                     &out),
            0)
      << out;
  const json fleet = json::parse(out);
  EXPECT_EQ(fleet["process"], "/system/bin/surfaceflinger");
  ASSERT_EQ(fleet["rows"].size(), 1u) << out;
  EXPECT_FALSE(fleet["rows"][0]["value_kb"].is_null()) << out;
  EXPECT_EQ(fleet["rows"][0]["value_kb"], process["processes"][0]["total_kb"]) << process.dump();
  EXPECT_EQ(Memfleet({"--server", target, "fleet", "--metric", "process.total_kb", "--process", "-service"}, &out), 2)
      << out;
  EXPECT_NE(out.find("\"-service\" is the end of 2 processes"), std::string::npos) << out;
}

// `trend DEVICE` without --process charts the device's own figures: the report's device total.
TEST_F(CliTest, TrendWithoutAProcessChartsTheDevice) {
  const std::string target = server_->target();
  std::string out;
  ASSERT_EQ(Memfleet({"--server", target, "--json", "report", kQcomDevice}, &out), 0) << out;
  const int64_t total = json::parse(out)["device"]["total_kb"].get<int64_t>();
  ASSERT_EQ(Memfleet({"--server", target, "--json", "trend", kQcomDevice}, &out), 0) << out;
  const json trend = json::parse(out);
  EXPECT_TRUE(trend["process"].is_null());
  EXPECT_EQ(trend["metric"], "device.total_kb");
  ASSERT_EQ(trend["points"].size(), 1u) << out;
  EXPECT_EQ(trend["points"][0]["value_kb"], total);
  ASSERT_EQ(Memfleet({"--server", target, "--json", "trend", kQcomDevice, "--metric", "device.kernel_kb"}, &out), 0)
      << out;
  EXPECT_EQ(Memfleet({"--server", target, "trend", kQcomDevice, "--metric", "gl_kb"}, &out), 2) << out;
}

// One selector: a label term no capture carries selects no device (as the dashboard's ?where= does).
TEST_F(CliTest, ALabelTermNoCaptureCarriesSelectsNoDevice) {
  std::string out;
  EXPECT_EQ(Memfleet({"--server", server_->target(), "devices", "--where", "label.run=NOSUCH"}, &out), 0) << out;
  EXPECT_EQ(out.find(kQcomDevice), std::string::npos) << out;
  EXPECT_NE(out.find("no device matches the --where terms"), std::string::npos) << out;
  EXPECT_EQ(Memfleet({"--server", server_->target(), "devices", "--where", "platform=qualcomm"}, &out), 2) << out;
}

// Every binary: one build-stamped version string, exit 0; a flag it does not take is a usage error (2),
// never the flag parser's own code.
TEST(VersionTest, EveryBinaryAnswersTheSameVersionAndUsageErrorsExit2) {
  const std::string dir = testing::MakeTempDir("memfleet-version-");
  std::string version;
  for (const char* bin : {"memfleet", "memfleet-server", "memfleet-agent"}) {
    const std::string log = dir + "/" + bin + ".log";
    testing::Subprocess p({testing::Bin(bin), "--version"}, log);
    ASSERT_EQ(p.WaitExit(std::chrono::seconds(30)), 0) << bin;
    std::string line = testing::ReadFileForTest(log);
    ASSERT_EQ(line.rfind(std::string(bin) + " ", 0), 0u) << line;
    line = line.substr(std::string(bin).size() + 1);
    line = line.substr(0, line.find('\n'));
    EXPECT_EQ(line.rfind("0.1.0", 0), 0u) << line;
    if (version.empty()) version = line;
    EXPECT_EQ(line, version) << bin;
    testing::Subprocess bad({testing::Bin(bin), "--no-such-flag"}, dir + "/" + bin + "-bad.log");
    EXPECT_EQ(bad.WaitExit(std::chrono::seconds(30)), 2) << bin;
  }
  EXPECT_NE(version, "dev");
}

}  // namespace
}  // namespace cli_scenario
}  // namespace memfleet
