// The command sequence of `memfleet agents deploy|stop` against a scripted Adb that answers as phones do.
// The real sequence on the stand-in phones, with real agents and a real server, is
// tests/integration/agents_deploy_integrationtest.cc.
#include "cli/commands/agents_command.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "grpcpp/grpcpp.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/support/temp_dir.h"

namespace memfleet::cli {
namespace {

// Answers each call by the last rule whose text the joined command line contains; records every call.
class ScriptedAdb : public Adb {
 public:
  void Answer(const std::string& contains, int exit_code, const std::string& output) {
    rules_.push_back({contains, {exit_code, output}});
  }
  absl::StatusOr<AdbResult> Run(const std::vector<std::string>& args) override {
    std::string line = absl::StrJoin(args, " ");
    calls.push_back(line);
    for (auto rule = rules_.rbegin(); rule != rules_.rend(); ++rule) {
      if (absl::StrContains(line, rule->first)) return rule->second;
    }
    return AdbResult{0, ""};
  }
  std::vector<std::string> calls;

 private:
  std::vector<std::pair<std::string, AdbResult>> rules_;
};

// Index of the first call containing `text` (calls.size() when none).
size_t CallIndex(const ScriptedAdb& adb, const std::string& text) {
  for (size_t i = 0; i < adb.calls.size(); ++i) {
    if (absl::StrContains(adb.calls[i], text)) return i;
  }
  return adb.calls.size();
}

class AgentsCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    dir_.Write("build-agent-arm64/bin/memfleet-agent", "elf", true);
    args_.agent_dir = dir_.path();
    args_.server_port = 7070;
    args_.confirm_timeout_s = 1;
    args_.query.server = "127.0.0.1:1";  // nothing listens: the server cannot be asked
    args_.insecure_no_tokens = true;     // so nobody can tell whether it needs tokens
    args_.query.env_token = "";
    args_.query.env_ca_cert = "";
    adb_.Answer("devices", 0,
                "List of devices attached\nARM1\tdevice\nLOCKED\tunauthorized\nOLD32\tdevice\nGONE\toffline\n");
    adb_.Answer("ARM1 shell getprop ro.product.cpu.abi", 0, "arm64-v8a\n");
    adb_.Answer("OLD32 shell getprop ro.product.cpu.abi", 0, "armeabi-v7a\n");
    adb_.Answer("not deployed", 0, "not deployed\n");  // the probe
    adb_.Answer("shell id -u", 0, "2000\n");
    adb_.Answer("ARM1 root", 1, "adbd cannot run as root in production builds\n");
    adb_.Answer("su -c 'id -u'", 0, "0\n");
    adb_.Answer("setsid nohup", 0, "started 4242\n");
  }

  testing::TempDir dir_{"agents_command_test"};
  AgentsDeployArgs args_;
  ScriptedAdb adb_;
  std::ostringstream out_, err_;
};

TEST_F(AgentsCommandTest, DeployPushesTunnelsAndStartsWithTheAccessThePhoneGives) {
  args_.target.serials = {"ARM1"};
  EXPECT_EQ(RunAgentsDeploy(args_, adb_, out_, err_), kExitOk) << out_.str() << err_.str();
  // The order a phone needs: the binary is in place before it starts; root is asked for before the
  // tunnel (adb root restarts adbd, which drops it); the tunnel is up before the agent dials it.
  size_t push = CallIndex(adb_, "-s ARM1 push " + dir_.path() +
                                    "/build-agent-arm64/bin/memfleet-agent "
                                    "/data/local/tmp/memfleet/memfleet-agent");
  size_t chmod = CallIndex(adb_, "chmod 755 /data/local/tmp/memfleet/memfleet-agent");
  size_t root = CallIndex(adb_, "-s ARM1 root");
  size_t su = CallIndex(adb_, "su -c 'id -u'");
  size_t reverse = CallIndex(adb_, "-s ARM1 reverse tcp:7070 tcp:7070");
  size_t start = CallIndex(adb_, "setsid nohup");
  ASSERT_LT(start, adb_.calls.size()) << absl::StrJoin(adb_.calls, "\n");
  EXPECT_LT(push, chmod);
  EXPECT_LT(chmod, root);
  EXPECT_LT(root, su);
  EXPECT_LT(su, reverse);
  EXPECT_LT(reverse, start);
  // su answered uid 0: the agent starts through su, and agent.conf says so for stop and supervise.
  EXPECT_TRUE(absl::StartsWith(adb_.calls[start], "-s ARM1 shell su -c 'cd /data/local/tmp/memfleet"))
      << adb_.calls[start];
  EXPECT_TRUE(absl::StrContains(adb_.calls[CallIndex(adb_, ">/data/local/tmp/memfleet/agent.conf")], "access=su"))
      << absl::StrJoin(adb_.calls, "\n");
  EXPECT_TRUE(absl::StrContains(out_.str(), "4242")) << out_.str();
  EXPECT_TRUE(absl::StrContains(out_.str(), "not confirmed, the server could not be asked")) << out_.str();
}

TEST_F(AgentsCommandTest, AnAbiWithoutAnAgentFailsThatPhoneOnlyAndUnusablePhonesAreSkipped) {
  args_.target.all = true;
  EXPECT_EQ(RunAgentsDeploy(args_, adb_, out_, err_), kExitPartial);
  EXPECT_TRUE(absl::StrContains(out_.str(), "ABI \"armeabi-v7a\" has no memfleet agent")) << out_.str();
  EXPECT_EQ(CallIndex(adb_, "-s OLD32 push"), adb_.calls.size()) << "nothing is pushed to a phone without an agent";
  EXPECT_LT(CallIndex(adb_, "-s ARM1 shell su -c 'cd"), adb_.calls.size());
  // Every phone is in the table, the ones adb cannot use with their state.
  EXPECT_TRUE(absl::StrContains(out_.str(), "unauthorized: accept the USB debugging prompt")) << out_.str();
  EXPECT_TRUE(absl::StrContains(out_.str(), "offline: reconnect it")) << out_.str();
  EXPECT_EQ(CallIndex(adb_, "-s LOCKED"), adb_.calls.size());
  EXPECT_EQ(CallIndex(adb_, "-s GONE"), adb_.calls.size());
  EXPECT_TRUE(absl::StrContains(out_.str(), "1 of 4 phones running an agent")) << out_.str();
}

TEST_F(AgentsCommandTest, AMissingBinarySaysHowToBuildIt) {
  dir_.Write("other/keep", "");
  args_.agent_dir = dir_.path() + "/other";
  args_.target.serials = {"ARM1"};
  EXPECT_EQ(RunAgentsDeploy(args_, adb_, out_, err_), kExitFailed);
  EXPECT_TRUE(absl::StrContains(out_.str(), "(install the memfleet-agents package, or run scripts/build-agent arm64)"))
      << out_.str();
}

TEST_F(AgentsCommandTest, DeployRefusesWhenNobodyCanTellWhetherTheServerNeedsTokens) {
  args_.target.serials = {"ARM1"};
  args_.insecure_no_tokens = false;
  EXPECT_EQ(RunAgentsDeploy(args_, adb_, out_, err_), 1) << out_.str() << err_.str();
  EXPECT_TRUE(absl::StrContains(err_.str(), "cannot tell whether the server at 127.0.0.1:1 requires agent tokens"))
      << err_.str();
  EXPECT_TRUE(adb_.calls.empty()) << absl::StrJoin(adb_.calls, "\n");
}

TEST_F(AgentsCommandTest, DeployNeedsToBeToldWhichPhones) {
  EXPECT_EQ(RunAgentsDeploy(args_, adb_, out_, err_), kExitUsage);
  EXPECT_TRUE(absl::StrContains(err_.str(), "--serial S (repeatable) or --all")) << err_.str();
}

TEST_F(AgentsCommandTest, AnUnlistedSerialIsReportedAndFails) {
  args_.target.serials = {"NOPE"};
  EXPECT_EQ(RunAgentsDeploy(args_, adb_, out_, err_), kExitFailed);
  EXPECT_TRUE(absl::StrContains(out_.str(), "not listed by adb devices")) << out_.str();
}

TEST_F(AgentsCommandTest, StopUsesTheAccessTheAgentWasStartedWith) {
  adb_.Answer("agent.conf", 0, "running 4242\n---\ndevice_id=ARM1\nserver_port=7070\naccess=su\n");
  adb_.Answer("kill \"$p\"", 0, "stopped 4242\n");
  AgentsTarget target;
  target.serials = {"ARM1"};
  EXPECT_EQ(RunAgentsStop(target, adb_, out_, err_), kExitOk) << out_.str() << err_.str();
  size_t stop = CallIndex(adb_, "kill \"$p\"");
  ASSERT_LT(stop, adb_.calls.size());
  EXPECT_TRUE(absl::StartsWith(adb_.calls[stop], "-s ARM1 shell su -c ")) << adb_.calls[stop];
  EXPECT_LT(stop, CallIndex(adb_, "-s ARM1 reverse --remove tcp:7070"));
  EXPECT_TRUE(absl::StrContains(out_.str(), "stopped 4242")) << out_.str();
}

TEST_F(AgentsCommandTest, StatusAsJsonAndCsvNamesEachPhonesAgentWithNullsForWhatIsUnknown) {
  adb_.Answer("agent.conf", 0, "running 4242\n---\ndevice_id=ARM1\nserver_port=7070\naccess=su\n");
  adb_.Answer("OLD32 shell", 0, "not deployed\n");  // getenforce too: no mode
  adb_.Answer("ARM1 shell getenforce", 0, "Permissive\n");
  AgentsStatusArgs status;
  status.target.serials = {"ARM1", "OLD32"};
  status.query = args_.query;  // nothing listens: the server's columns are unknown
  status.query.json = true;
  EXPECT_EQ(RunAgentsStatus(status, adb_, out_, err_), kExitOk) << out_.str() << err_.str();
  nlohmann::json doc = nlohmann::json::parse(out_.str());
  ASSERT_EQ(doc["phones"].size(), 2u) << out_.str();
  const nlohmann::json& arm = doc["phones"][0];
  EXPECT_EQ(arm["serial"], "ARM1");
  EXPECT_EQ(arm["device_id"], "ARM1");
  EXPECT_EQ(arm["agent"], "running");
  EXPECT_EQ(arm["pid"], 4242);
  EXPECT_EQ(arm["access"], "su");
  EXPECT_EQ(arm["selinux"], "permissive");
  EXPECT_TRUE(doc["phones"][1]["selinux"].is_null()) << out_.str();
  EXPECT_TRUE(arm["server"].is_null()) << arm.dump();
  EXPECT_TRUE(arm["last_capture_at"].is_null()) << arm.dump();
  EXPECT_TRUE(arm["tier"].is_null()) << arm.dump();  // what its agent said is the server's to tell
  EXPECT_EQ(doc["phones"][1]["agent"], "not deployed");
  EXPECT_TRUE(doc["phones"][1]["pid"].is_null());
  EXPECT_TRUE(doc["server_unavailable"].is_string()) << out_.str();

  std::ostringstream csv;
  status.query.json = false;
  status.query.csv = true;
  EXPECT_EQ(RunAgentsStatus(status, adb_, csv, err_), kExitOk);
  EXPECT_TRUE(absl::StartsWith(csv.str(),
                               "serial,device_id,agent,pid,problem,access,selinux,tier,agent_version,server,"
                               "last_capture_at\r\nARM1,ARM1,running,4242,,su,permissive,,,,\r\n"))
      << csv.str();

  status.query.json = true;
  std::ostringstream both;
  EXPECT_EQ(RunAgentsStatus(status, adb_, both, err_), 2) << err_.str();
}

// A server that knows ARM1 as online, with the tier its agent said in Hello (the server's side of it:
// tests/integration/tiers_integrationtest.cc).
class TierListingService final : public v1::QueryService::Service {
 public:
  grpc::Status ListDevices(grpc::ServerContext*, const v1::ListDevicesRequest*,
                           v1::ListDevicesResponse* response) override {
    v1::DeviceSummary* d = response->add_devices();
    d->set_device_id("ARM1");
    d->set_online(true);
    d->set_agent_version("1.0");
    d->set_agent_tier("dumpsys");
    d->set_tier("kernel");  // its latest capture's, not what `agents status` shows
    return grpc::Status::OK;
  }
};

TEST_F(AgentsCommandTest, StatusShowsTheTierTheAgentSaidInItsHello) {
  TierListingService service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  adb_.Answer("agent.conf", 0, "running 4242\n---\ndevice_id=ARM1\nserver_port=7070\naccess=shell\n");
  adb_.Answer("ARM1 shell getenforce", 0, "Enforcing\n");
  AgentsStatusArgs status;
  status.target.serials = {"ARM1"};
  status.query = args_.query;
  status.query.server = "127.0.0.1:" + std::to_string(port);
  EXPECT_EQ(RunAgentsStatus(status, adb_, out_, err_), kExitOk) << err_.str();
  const std::string table = out_.str();
  EXPECT_NE(table.find("SELINUX    TIER     VERSION"), std::string::npos) << table;
  EXPECT_NE(table.find("enforcing  dumpsys  1.0"), std::string::npos) << table;

  status.query.json = true;
  std::ostringstream json;
  EXPECT_EQ(RunAgentsStatus(status, adb_, json, err_), kExitOk) << err_.str();
  const nlohmann::json doc = nlohmann::json::parse(json.str());
  EXPECT_EQ(doc["phones"][0]["tier"], "dumpsys") << json.str();
  server->Shutdown();
}

// getenforce's three answers in the words `memfleet devices` uses; anything else (a phone's own text) is no
// mode, never printed.
TEST_F(AgentsCommandTest, StatusShowsEachPhonesSelinuxModeAsGetenforceAnswersIt) {
  adb_.Answer("agent.conf", 0, "running 4242\n---\ndevice_id=ARM1\nserver_port=7070\naccess=shell\n");
  AgentsStatusArgs status;
  status.target.serials = {"ARM1"};
  status.query = args_.query;
  for (const auto& [answer, mode] : {std::pair<std::string, std::string>{"Enforcing\n", "enforcing"},
                                     {"Permissive\r\n", "permissive"},
                                     {"Disabled\n", "none"},
                                     {"Enforcing\x1b[2J\n", ""},
                                     {"enforcing\n", ""},
                                     {"", ""}}) {
    adb_.Answer("ARM1 shell getenforce", 0, answer);
    std::ostringstream table;
    EXPECT_EQ(RunAgentsStatus(status, adb_, table, err_), kExitOk) << err_.str();
    const std::string header = table.str().substr(0, table.str().find('\n'));
    EXPECT_NE(header.find("ACCESS  SELINUX"), std::string::npos) << table.str();
    EXPECT_EQ(table.str().find('\x1b'), std::string::npos) << table.str();
    status.query.json = true;
    std::ostringstream json;
    EXPECT_EQ(RunAgentsStatus(status, adb_, json, err_), kExitOk) << err_.str();
    const nlohmann::json doc = nlohmann::json::parse(json.str());
    const nlohmann::json& arm = doc["phones"][0];
    if (mode.empty()) {
      EXPECT_TRUE(arm["selinux"].is_null()) << answer << ": " << arm.dump();
    } else {
      EXPECT_EQ(arm["selinux"], mode) << answer;
    }
    status.query.json = false;
  }
  // A getenforce that fails (no such command on the phone): no mode, and the phone's row stays.
  adb_.Answer("ARM1 shell getenforce", 127, "/system/bin/sh: getenforce: not found\n");
  status.query.json = true;
  std::ostringstream json;
  EXPECT_EQ(RunAgentsStatus(status, adb_, json, err_), kExitOk) << err_.str();
  const nlohmann::json doc = nlohmann::json::parse(json.str());
  const nlohmann::json& arm = doc["phones"][0];
  EXPECT_TRUE(arm["selinux"].is_null()) << arm.dump();
  EXPECT_EQ(arm["agent"], "running");
}

}  // namespace
}  // namespace memfleet::cli
