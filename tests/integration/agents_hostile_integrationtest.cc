// `memfleet agents` against hostile or careless phones and servers, end to end: the real memfleet CLI runs
// the stand-in adb (tests/support/fake_adb/adb) on phones that are folders of this machine, against a real
// memfleet-server on 127.0.0.1. No agent binary runs here: each case is refused or decided before one would
// (what the stand-in covers and what it does not: docs/deploy.md).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tests/support/agent_ledger.h"
#include "tests/support/load_tree.h"
#include "tests/support/memfleet_cli.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace memfleet {
namespace agents_hostile_scenario {
namespace {

using testing::ProcessRun;

class AgentsHostileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    phones_ = dir_.path() + "/phones";
    std::filesystem::create_directories(phones_);
    for (const char* name : {"MEMFLEET_SERVER", "MEMFLEET_TOKEN", "MEMFLEET_CA_CERT"}) unsetenv(name);
    setenv("ADB", testing::TestData("../support/fake_adb/adb").c_str(), 1);
    setenv("MEMFLEET_FAKE_ADB_PHONES", phones_.c_str(), 1);
  }

  // A stand-in phone: an x86_64 user build unless `props` says otherwise.
  void AddPhone(const std::string& serial, const std::string& props = "ro.product.cpu.abi=x86_64\n") {
    dir_.Write("phones/" + serial + "/props", props);
  }
  std::string PhoneFile(const std::string& serial, const std::string& name) {
    return phones_ + "/" + serial + "/data/local/tmp/memfleet/" + name;
  }
  // As `agents deploy` leaves a phone whose agent runs as the shell user.
  void Deployed(const std::string& serial, const std::string& pid_file) {
    dir_.Write("phones/" + serial + "/data/local/tmp/memfleet/agent.conf",
               "device_id=" + serial + "\nserver_port=7070\ninterval_s=300\naccess=shell\ntoken=0\nca_cert=0\n");
    dir_.Write("phones/" + serial + "/data/local/tmp/memfleet/agent.pid", pid_file);
  }

  // bin/memfleet with `args`, in the folder `cwd` (the test's folder when empty).
  ProcessRun Memfleet(const std::vector<std::string>& args, const std::string& cwd = "") {
    return cli_.Run(args, cwd.empty() ? dir_.path() : cwd);
  }

  testing::TempDir dir_{"agents_hostile"};
  std::string phones_;
  testing::MemfleetCli cli_{dir_.path(), {}, std::chrono::seconds(300)};
};

// The line of `out` that starts with `serial` ("" when none).
std::string RowOf(const std::string& out, const std::string& serial) {
  size_t at = 0;
  while ((at = out.find(serial, at)) != std::string::npos) {
    if (at == 0 || out[at - 1] == '\n') return out.substr(at, out.find('\n', at) - at);
    ++at;
  }
  return "";
}

// A server that answers without a token answers every app on the phones too, once adb reverse puts its
// port on their 127.0.0.1: deploy refuses it, says why, and pushes nothing.
TEST_F(AgentsHostileTest, DeployRefusesAServerThatTakesCallsWithoutAToken) {
  AddPhone("R58M1");
  testing::ServerProcess server(dir_.path());
  const std::string port = server.address().substr(server.address().rfind(':') + 1);
  const std::vector<std::string> deploy = {
      "agents", "deploy", "--all", "--server-port", port, "--x86_64-agent", "/bin/true", "--confirm-timeout", "1"};
  ProcessRun run = Memfleet(deploy);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, "answers calls without a token")) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, "--insecure-no-tokens")) << run.output;
  EXPECT_FALSE(std::filesystem::exists(PhoneFile("R58M1", "memfleet-agent"))) << "nothing is pushed";

  // Told so, it deploys (the stand-in's "agent" is /bin/true, which never comes online).
  std::vector<std::string> insecure = deploy;
  insecure.push_back("--insecure-no-tokens");
  run = Memfleet(insecure);
  EXPECT_TRUE(std::filesystem::exists(PhoneFile("R58M1", "memfleet-agent"))) << run.output;

  // Once the server has a token it refuses calls without one, and deploy goes on.
  std::filesystem::remove(PhoneFile("R58M1", "memfleet-agent"));
  const std::string read_token = testing::AddServerToken(dir_.path(), "read", "farm-cli");
  run = Memfleet({"agents", "deploy", "--all", "--server-port", port, "--x86_64-agent", "/bin/true",
                  "--confirm-timeout", "1", "--token", read_token});
  EXPECT_FALSE(absl::StrContains(run.output, "refused")) << run.output;
  EXPECT_TRUE(std::filesystem::exists(PhoneFile("R58M1", "memfleet-agent"))) << run.output;
}

TEST_F(AgentsHostileTest, DeployRefusesWhenNoServerCanBeAskedWhetherItNeedsTokens) {
  AddPhone("R58M1");
  testing::LoopbackPortReservation nobody;  // bound, never listening: connections are refused
  ProcessRun run = Memfleet(
      {"agents", "deploy", "--all", "--server-port", std::to_string(nobody.port()), "--x86_64-agent", "/bin/true"});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_TRUE(absl::StrContains(run.output, "cannot tell whether the server at 127.0.0.1:")) << run.output;
  EXPECT_FALSE(std::filesystem::exists(PhoneFile("R58M1", "memfleet-agent")));
}

// A planted pid file names a process whose command line says memfleet-agent: `stop` leaves it alone,
// as it is not the phone's agent binary, and `status` does not call it running.
TEST_F(AgentsHostileTest, StopKillsOnlyTheAgentBinaryNotAProcessThatNamesIt) {
  AddPhone("R58M1");
  testing::Subprocess decoy({"/bin/bash", "-c", "exec -a /data/local/tmp/memfleet/memfleet-agent sleep 600"},
                            dir_.path() + "/decoy.log");
  // Wait until bash has become the decoy (its command line then names the agent).
  const std::string cmdline = "/proc/" + std::to_string(decoy.pid()) + "/cmdline";
  ASSERT_TRUE(testing::WaitFor([&] { return absl::StrContains(testing::ReadFileForTest(cmdline), "memfleet-agent"); },
                               std::chrono::seconds(30)));
  Deployed("R58M1", std::to_string(decoy.pid()) + "\n");

  ProcessRun status = Memfleet({"agents", "status", "--serial", "R58M1"});
  EXPECT_TRUE(absl::StrContains(RowOf(status.output, "R58M1"), "not running: died")) << status.output;
  ProcessRun stop = Memfleet({"agents", "stop", "--serial", "R58M1"});
  EXPECT_EQ(stop.exit_code, 0) << stop.output;
  EXPECT_TRUE(absl::StrContains(RowOf(stop.output, "R58M1"), "not running")) << stop.output;
  EXPECT_FALSE(decoy.Exited()) << "stop killed a process that only named the agent";

  // A pid file that is not a number is not a pid, whatever the shell would make of it.
  Deployed("R58M1", std::to_string(decoy.pid()) + " -9 0\n");
  stop = Memfleet({"agents", "stop", "--serial", "R58M1"});
  EXPECT_TRUE(absl::StrContains(RowOf(stop.output, "R58M1"), "not running")) << stop.output;
  EXPECT_FALSE(decoy.Exited());
}

// A log line of 150 MiB: `logs` shows the log's end and reads a bounded amount.
TEST_F(AgentsHostileTest, LogsReadsABoundedAmountOfAHugeLog) {
  AddPhone("R58M1");
  Deployed("R58M1", "");
  {
    std::ofstream log(PhoneFile("R58M1", "agent.log"), std::ios::binary);
    const std::string mib(1 << 20, 'x');
    for (int i = 0; i < 150; ++i) log << mib;
    log << "\nthe last line\n";
  }
  ProcessRun run = Memfleet({"agents", "logs", "R58M1", "--lines", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.output.substr(0, 2000);
  EXPECT_TRUE(absl::StrContains(run.output, "the last line\n"));
  EXPECT_TRUE(absl::StrContains(run.output, "the last 4 MiB of agent.log only"));
  EXPECT_LT(run.output.size(), 5u << 20);
  // Reading the whole line took ~305 MiB; the CLI, adb and the phone's shell together stay far below.
  EXPECT_LT(run.peak_rss_kb, 64 * 1024) << "peak RSS " << run.peak_rss_kb << " kB";
}

// A phone folder whose name is shell code: the stand-in never runs it (on a real phone the serial is not
// part of any shell command either).
TEST_F(AgentsHostileTest, ASerialThatIsShellCodeIsNeverRun) {
  const std::string serial = "sq$(touch pwned)`touch pwned2`";
  AddPhone(serial);
  const std::string cwd = dir_.path() + "/cwd";
  std::filesystem::create_directories(cwd);
  ProcessRun run = Memfleet({"agents", "status", "--all"}, cwd);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(absl::StrContains(RowOf(run.output, serial), "not deployed")) << run.output;
  EXPECT_FALSE(std::filesystem::exists(cwd + "/pwned")) << run.output;
  EXPECT_FALSE(std::filesystem::exists(cwd + "/pwned2")) << run.output;
}

// `adb devices` ends a serial at the tab: a serial with a space is one phone, and a bidi override in a
// serial is escaped in the table, as every table escapes device text, and exact in JSON.
TEST_F(AgentsHostileTest, SerialsWithSpacesAndBidiControlsAreWholeAndEscaped) {
  const std::string bidi =
      "R58\xe2\x80\xae"
      "1";
  AddPhone("sp ace");
  AddPhone(bidi);
  ProcessRun run = Memfleet({"agents", "status", "--all"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(absl::StrContains(RowOf(run.output, "sp ace"), "not deployed")) << run.output;
  EXPECT_FALSE(absl::StrContains(run.output, "\xe2\x80\xae")) << run.output;
  EXPECT_TRUE(absl::StrContains(RowOf(run.output, "R58\\u202e1"), "R58___1")) << run.output;

  run = Memfleet({"agents", "status", "--all", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  nlohmann::json doc = nlohmann::json::parse(run.output);
  std::vector<std::string> serials;
  for (const nlohmann::json& phone : doc["phones"]) serials.push_back(phone["serial"]);
  std::sort(serials.begin(), serials.end());
  EXPECT_EQ(serials, (std::vector<std::string>{bidi, "sp ace"}));
}

}  // namespace
}  // namespace agents_hostile_scenario
}  // namespace memfleet
