// `memfleet agents deploy|status|supervise|stop|logs` end to end on stand-in phones: the real memfleet CLI
// runs the stand-in adb (tests/support/fake_adb/adb), which plays phones in folders of this machine,
// and the real static agents of scripts/build-agent run there (the arm64 one under qemu-aarch64-static)
// against a real memfleet-server on 127.0.0.1. What the stand-in covers and what it does not:
// docs/deploy.md.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"
#include "tests/support/http_get.h"
#include "tests/support/load_tree.h"
#include "tests/support/memfleet_cli.h"
#include "tests/support/raw_agent.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"
#include "tests/support/wait_for.h"

namespace memfleet {
namespace agents_deploy_scenario {
namespace {

constexpr char kArmPhone[] = "ARM64-R58M1";          // arm64-v8a, userdebug: adb root works
constexpr char kX86Phone[] = "emulator-5554";        // x86_64, rooted: su works
constexpr char kShellPhone[] = "emulator-5556";      // x86_64, a user build: no su, no adb root
constexpr std::chrono::seconds kAgentDeadline{240};  // a first capture of this machine's / under qemu

std::string ReadFile(const std::string& path) { return testing::ReadFileForTest(path); }

class AgentsDeployTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(MEMFLEET_ARM64_AGENT_BINARY).empty()) {
      GTEST_SKIP()
          << "no static arm64 agent: configure with -DMEMFLEET_ARM64_AGENT=build-agent-arm64/bin/memfleet-agent";
    }
    if (std::string(MEMFLEET_X86_64_AGENT_BINARY).empty()) {
      GTEST_SKIP() << "no static x86-64 agent: configure with "
                      "-DMEMFLEET_X86_64_STATIC_AGENT=build-agent-x86_64/bin/memfleet-agent";
    }
    if (std::string(MEMFLEET_QEMU_AARCH64_PROGRAM).empty()) GTEST_SKIP() << "no qemu-aarch64-static (qemu-user-static)";
    ASSERT_FALSE(dir_.path().empty());
    phones_ = dir_.path() + "/phones";
    dir_.Write(std::string("phones/") + kArmPhone + "/props",
               "ro.product.cpu.abi=arm64-v8a\nro.debuggable=1\nro.product.model=Pixel 8\n");
    dir_.Write(std::string("phones/") + kX86Phone + "/props", "ro.product.cpu.abi=x86_64\nro.debuggable=0\n");
    dir_.Write(std::string("phones/") + kX86Phone + "/su", "");
    dir_.Write(std::string("phones/") + kX86Phone + "/selinux", "Permissive\n");  // the other: Enforcing
    for (const char* name : {"MEMFLEET_SERVER", "MEMFLEET_TOKEN", "MEMFLEET_CA_CERT"}) unsetenv(name);
    setenv("ADB", testing::TestData("../support/fake_adb/adb").c_str(), 1);
    setenv("MEMFLEET_FAKE_ADB_PHONES", phones_.c_str(), 1);
    // With /metrics and the dashboard, which a retired device leaves.
    server_ = std::make_unique<testing::ServerProcess>(
        dir_.path(), std::vector<std::string>{"--http-listen", "127.0.0.1:0", "--dashboard"});
    ASSERT_FALSE(server_->address().empty());
    port_ = server_->address().substr(server_->address().rfind(':') + 1);
  }

  // GET `target` on the server's HTTP port with the fixture's token; the body, "" (and a test failure)
  // unless it answers 200.
  std::string HttpBody(const std::string& target) {
    const std::string line = server_->process().WaitForLine("metrics on http://", std::chrono::seconds(10));
    const size_t from = line.find("http://127.0.0.1:");
    int port = 0;
    EXPECT_TRUE(from != std::string::npos &&
                absl::SimpleAtoi(line.substr(from + 17, line.find('/', from + 17) - from - 17), &port))
        << line;
    testing::HttpOptions options;
    options.bearer = token_;
    testing::HttpReply reply = testing::HttpGet("127.0.0.1", port, target, options);
    EXPECT_EQ(reply.status, 200) << target << ": " << reply.error << reply.body;
    return reply.status == 200 ? reply.body : "";
  }

  void TearDown() override {
    // A failed test must not leave agents behind: kill whatever the pid files name.
    for (const char* phone : {kArmPhone, kX86Phone, kShellPhone}) {
      int64_t pid = AgentPid(phone);
      if (pid > 0 && absl::StrContains(ReadFile(absl::StrCat("/proc/", pid, "/cmdline")), "memfleet-agent")) {
        kill(static_cast<pid_t>(pid), SIGKILL);
      }
    }
  }

  // bin/memfleet with `args`; stdout and stderr in *output; the exit code.
  int Memfleet(const std::vector<std::string>& args, std::string* output) {
    testing::ProcessRun run = cli_.Run(args);
    *output = run.output;
    return run.exit_code;
  }

  std::string PhoneFile(const std::string& phone, const std::string& name) {
    return phones_ + "/" + phone + "/data/local/tmp/memfleet/" + name;
  }

  int64_t AgentPid(const std::string& phone) {
    int64_t pid = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(PhoneFile(phone, "agent.pid"))), &pid)) return 0;
    return pid;
  }

  // The server's summary of the device (an empty one when it does not know it).
  v1::DeviceSummary Device(const std::string& device_id) {
    grpc::ClientContext ctx;
    if (!token_.empty()) ctx.AddMetadata("authorization", "Bearer " + token_);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListDevicesResponse listed;
    grpc::Status s = server_->query().ListDevices(&ctx, {}, &listed);
    EXPECT_TRUE(s.ok()) << s.error_message();
    for (const v1::DeviceSummary& d : listed.devices()) {
      if (d.device_id() == device_id) return d;
    }
    return {};
  }

  // Polls the server until `holds` is true of the device; false when the deadline passes first.
  bool WaitForDevice(const std::string& device_id, const std::function<bool(const v1::DeviceSummary&)>& holds) {
    return testing::WaitFor([&] { return holds(Device(device_id)); }, kAgentDeadline, std::chrono::milliseconds(200));
  }

  std::string Logs() {
    return absl::StrCat("--- server ---\n", server_->Log(), "\n--- ", kArmPhone, " agent.log ---\n",
                        ReadFile(PhoneFile(kArmPhone, "agent.log")), "\n--- ", kX86Phone, " agent.log ---\n",
                        ReadFile(PhoneFile(kX86Phone, "agent.log")));
  }

  // Deploys to both phones and waits for a stored capture from each.
  void DeployBoth() {
    std::string out;
    // One machine's server without tokens: told so, deploy takes it.
    ASSERT_EQ(Memfleet({"agents", "deploy", "--all", "--server-port", port_, "--insecure-no-tokens", "--interval",
                        "3600", "--confirm-timeout", "240", "--arm64-agent", MEMFLEET_ARM64_AGENT_BINARY,
                        "--x86_64-agent", MEMFLEET_X86_64_AGENT_BINARY},
                       &out),
              0)
        << out << Logs();
    EXPECT_TRUE(absl::StrContains(out, "2 of 2 phones running an agent")) << out;
    for (const char* phone : {kArmPhone, kX86Phone}) {
      ASSERT_TRUE(WaitForDevice(phone, [](const v1::DeviceSummary& d) { return d.online() && d.capture_count() >= 1; }))
          << phone << "\n"
          << out << Logs();
    }
  }

  testing::TempDir dir_{"agents_deploy"};
  std::string phones_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::string port_;
  std::string token_;  // sent with the fixture's own questions to the server, once it has tokens
  testing::MemfleetCli cli_{dir_.path(), {}, std::chrono::seconds(300)};
};

// A line of `out` that starts with `serial` ("" when none).
std::string RowOf(const std::string& out, const std::string& serial) {
  size_t at = 0;
  while ((at = out.find(serial, at)) != std::string::npos) {
    if (at == 0 || out[at - 1] == '\n') return out.substr(at, out.find('\n', at) - at);
    ++at;
  }
  return "";
}

TEST_F(AgentsDeployTest, DeployStatusSuperviseStopAndLogs) {
  DeployBoth();
  // Each phone got its ABI's binary (a wrong one would not execute there), the tunnel to the server's
  // port, and the access its build allows.
  for (const char* phone : {kArmPhone, kX86Phone}) {
    EXPECT_EQ(ReadFile(phones_ + "/" + phone + "/reverse"), "tcp:" + port_ + "\n") << phone;
  }
  EXPECT_TRUE(absl::StrContains(ReadFile(PhoneFile(kArmPhone, "agent.conf")), "access=adb-root\n"));
  EXPECT_TRUE(absl::StrContains(ReadFile(PhoneFile(kX86Phone, "agent.conf")), "access=su\n"));

  std::string out;
  ASSERT_EQ(Memfleet({"agents", "status"}, &out), 0) << out;
  const std::string version = Device(kArmPhone).agent_version();
  ASSERT_FALSE(version.empty());
  for (const auto& [phone, access, selinux] :
       {std::tuple{kArmPhone, "adb-root", "enforcing"}, std::tuple{kX86Phone, "su", "permissive"}}) {
    std::string row = RowOf(out, phone);
    EXPECT_TRUE(absl::StrContains(row, absl::StrCat("running, pid ", AgentPid(phone)))) << out;
    EXPECT_TRUE(absl::StrContains(row, absl::StrCat(access, " ")) && absl::StrContains(row, selinux)) << out;
    EXPECT_TRUE(absl::StrContains(row, version)) << out;
    EXPECT_TRUE(absl::StrContains(row, "online")) << out;
    EXPECT_TRUE(absl::StrContains(row, Device(phone).last_capture_at())) << out;
  }

  // adbd restarting kills what it started (here, the x86-64 phone's agent), drops the reverse tunnels, and
  // after a reboot runs as shell again (the arm64 phone).
  for (const char* phone : {kArmPhone, kX86Phone})
    ASSERT_EQ(std::remove((phones_ + "/" + phone + "/reverse").c_str()), 0);
  ASSERT_EQ(std::remove((phones_ + "/" + kArmPhone + "/adbd-root").c_str()), 0);
  const int64_t killed = AgentPid(kX86Phone);
  ASSERT_GT(killed, 0);
  ASSERT_EQ(kill(static_cast<pid_t>(killed), SIGKILL), 0);
  ASSERT_TRUE(WaitForDevice(kX86Phone, [](const v1::DeviceSummary& d) { return !d.online(); })) << Logs();
  ASSERT_EQ(Memfleet({"agents", "status", "--serial", kX86Phone}, &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(RowOf(out, kX86Phone), "not running: died")) << out;
  EXPECT_TRUE(absl::StrContains(RowOf(out, kX86Phone), "offline")) << out;
  ASSERT_EQ(Memfleet({"agents", "supervise", "--once"}, &out), 0) << out << Logs();
  const int64_t restarted = AgentPid(kX86Phone);
  EXPECT_NE(restarted, killed);
  EXPECT_TRUE(absl::StrContains(RowOf(out, kX86Phone), absl::StrCat("restarted, pid ", restarted))) << out;
  EXPECT_TRUE(absl::StrContains(RowOf(out, kArmPhone), absl::StrCat("running, pid ", AgentPid(kArmPhone)))) << out;
  for (const char* phone : {kArmPhone, kX86Phone}) {
    EXPECT_EQ(ReadFile(phones_ + "/" + phone + "/reverse"), "tcp:" + port_ + "\n") << phone << ": tunnel not restored";
  }
  EXPECT_TRUE(std::ifstream(phones_ + "/" + kArmPhone + "/adbd-root").good()) << "adb root not asked again";
  // The restarted agent reconnects and delivers its first capture.
  EXPECT_TRUE(WaitForDevice(kX86Phone, [](const v1::DeviceSummary& d) { return d.online() && d.capture_count() >= 2; }))
      << Logs();

  const int64_t arm_pid = AgentPid(kArmPhone);
  ASSERT_EQ(Memfleet({"agents", "stop", "--all"}, &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(RowOf(out, kArmPhone), absl::StrCat("stopped ", arm_pid))) << out;
  EXPECT_TRUE(absl::StrContains(RowOf(out, kX86Phone), absl::StrCat("stopped ", restarted))) << out;
  for (int64_t pid : {arm_pid, restarted}) {
    EXPECT_FALSE(absl::StrContains(ReadFile(absl::StrCat("/proc/", pid, "/cmdline")), "memfleet-agent")) << pid;
  }
  EXPECT_EQ(ReadFile(phones_ + "/" + kArmPhone + "/reverse"), "") << "the tunnel goes with the agent";
  ASSERT_EQ(Memfleet({"agents", "status"}, &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(RowOf(out, kArmPhone), "stopped (agents stop)")) << out;
  EXPECT_TRUE(absl::StrContains(RowOf(out, kX86Phone), "stopped (agents stop)")) << out;
  // What `stop` ended, `supervise` leaves alone.
  ASSERT_EQ(Memfleet({"agents", "supervise", "--once"}, &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(RowOf(out, kArmPhone), "stopped (agents stop), left alone")) << out;
  EXPECT_EQ(AgentPid(kArmPhone), 0) << "no pid file: nothing was started";

  ASSERT_EQ(Memfleet({"agents", "logs", kArmPhone, "--lines", "1000"}, &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat("starting: device ", kArmPhone))) << out;
  EXPECT_TRUE(absl::StrContains(out, "shutting down: signal 15 received")) << out;
}

// What README's commands do: one agent token per phone from --token-dir, and a read token for the
// questions the CLI asks; the server checks both (its tokens table is not empty).
TEST_F(AgentsDeployTest, PerPhoneAgentTokensAndAReadTokenForTheServersAnswers) {
  const std::string db = dir_.path() + "/memfleet.db";
  const std::string server = testing::Bin("memfleet-server");
  ASSERT_EQ(std::system((server + " --db " + db + " token add --kind agent --name " + kX86Phone + " --device-id " +
                         kX86Phone + " >" + dir_.path() + "/" + kX86Phone + ".token 2>/dev/null")
                            .c_str()),
            0);
  ASSERT_EQ(std::system((server + " --db " + db + " token add --kind read --name farm-cli >" + dir_.path() +
                         "/read.token 2>/dev/null")
                            .c_str()),
            0);
  const std::string read_token(absl::StripAsciiWhitespace(ReadFile(dir_.path() + "/read.token")));
  ASSERT_TRUE(absl::StartsWith(read_token, "mft_")) << read_token;

  std::string out;
  ASSERT_EQ(
      Memfleet({"agents", "deploy", "--serial", kX86Phone, "--server-port", port_, "--token-dir", dir_.path(),
                "--token", read_token, "--confirm-timeout", "120", "--x86_64-agent", MEMFLEET_X86_64_AGENT_BINARY},
               &out),
      0)
      << out << Logs();
  EXPECT_TRUE(absl::StrContains(RowOf(out, kX86Phone), "connected")) << out;
  EXPECT_EQ(ReadFile(PhoneFile(kX86Phone, "token")), ReadFile(dir_.path() + "/" + kX86Phone + ".token"));
  EXPECT_TRUE(absl::StrContains(ReadFile(PhoneFile(kX86Phone, "agent.conf")), "token=1\n"));

  // Without the read token the server does not answer: status says so instead of guessing.
  ASSERT_EQ(Memfleet({"agents", "status", "--serial", kX86Phone}, &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "server not asked (VERSION, SERVER, LAST CAPTURE unknown)")) << out;
  // Given before the subcommand, as for every other command.
  ASSERT_EQ(Memfleet({"--token", read_token, "agents", "status", "--serial", kX86Phone}, &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(RowOf(out, kX86Phone), "online")) << out;
}

// `memfleet-server token list` on the test's database: one line per token.
std::string TokenList(const std::string& dir) {
  testing::Subprocess list({testing::Bin("memfleet-server"), "--db", dir + "/memfleet.db", "token", "list"},
                           dir + "/token-list.log");
  EXPECT_EQ(list.WaitExit(std::chrono::seconds(60)), 0) << list.Log();
  return list.Log();
}

// The line of `table` that starts with `name`, "" when none.
std::string TokenRow(const std::string& table, const std::string& name) { return RowOf(table, name + " "); }

// A rollout as docs/deploy.md gives it: an admin token, a name per phone, labels for every capture. Each
// phone comes online under its name with its own device-bound token, minted on the server and never
// printed; a second deploy keeps the tokens, --rotate-tokens replaces and revokes them.
TEST_F(AgentsDeployTest, MintedTokensNamesAndLabels) {
  const std::string admin = testing::AddServerToken(dir_.path(), "admin", "farm-admin");
  token_ = admin;
  const std::string names = dir_.Write("names.txt", std::string("# lab A, rack 3\n") + kArmPhone + " lab-a-rack3-07\n" +
                                                        kX86Phone + " lab-a-rack3-08\n");
  const std::vector<std::string> deploy = {"agents",
                                           "deploy",
                                           "--all",
                                           "--server-port",
                                           port_,
                                           "--mint-tokens",
                                           "--name-map",
                                           names,
                                           "--label",
                                           "rack=3",
                                           "--label",
                                           "owner=camera",
                                           "--token",
                                           admin,
                                           "--interval",
                                           "3600",
                                           "--confirm-timeout",
                                           "240",
                                           "--arm64-agent",
                                           MEMFLEET_ARM64_AGENT_BINARY,
                                           "--x86_64-agent",
                                           MEMFLEET_X86_64_AGENT_BINARY};
  std::string out;
  ASSERT_EQ(Memfleet(deploy, &out), 0) << out << Logs();
  EXPECT_TRUE(absl::StrContains(out, "2 of 2 phones running an agent")) << out;
  for (const auto& [phone, name] : {std::pair{kArmPhone, "lab-a-rack3-07"}, std::pair{kX86Phone, "lab-a-rack3-08"}}) {
    EXPECT_TRUE(absl::StrContains(RowOf(out, phone), std::string("agent-") + name + " (new)")) << out;
    ASSERT_TRUE(WaitForDevice(name, [](const v1::DeviceSummary& d) { return d.online() && d.capture_count() >= 1; }))
        << name << "\n"
        << out << Logs();
    // The secret is on the phone, only its owner may read it, and it was never printed.
    const std::string secret = ReadFile(PhoneFile(phone, "token"));
    ASSERT_TRUE(absl::StartsWith(secret, "mft_")) << phone;
    EXPECT_FALSE(absl::StrContains(out, secret));
    struct stat st = {};
    ASSERT_EQ(stat(PhoneFile(phone, "token").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    // Every capture carries the agent's labels, as the agent's (a sweep's are `labels`).
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + admin);
    v1::GetReportRequest request;
    request.set_device_id(name);
    v1::GetReportResponse report;
    ASSERT_TRUE(server_->query().GetReport(&ctx, request, &report).ok());
    std::map<std::string, std::string> labels;
    for (const v1::Label& l : report.agent_labels()) labels[l.key()] = l.value();
    EXPECT_EQ(labels, (std::map<std::string, std::string>{{"owner", "camera"}, {"rack", "3"}})) << name;
    EXPECT_EQ(report.labels_size(), 0) << name;
  }
  EXPECT_EQ(Device(kArmPhone).device_id(), "") << "no device under the raw serial";
  std::string tokens = TokenList(dir_.path());
  EXPECT_TRUE(absl::StrContains(TokenRow(tokens, "agent-lab-a-rack3-07"), "agent lab-a-rack3-07")) << tokens;
  EXPECT_TRUE(absl::StrContains(TokenRow(tokens, "agent-lab-a-rack3-07"), "valid")) << tokens;
  EXPECT_TRUE(absl::StrContains(TokenRow(tokens, "agent-lab-a-rack3-08"), "agent lab-a-rack3-08")) << tokens;

  // Again: each phone keeps its token.
  const std::string kept = ReadFile(PhoneFile(kX86Phone, "token"));
  ASSERT_EQ(Memfleet(deploy, &out), 0) << out << Logs();
  EXPECT_TRUE(absl::StrContains(RowOf(out, kX86Phone), "agent-lab-a-rack3-08 (kept)")) << out;
  EXPECT_EQ(ReadFile(PhoneFile(kX86Phone, "token")), kept);
  EXPECT_EQ(TokenList(dir_.path()), tokens);

  // Rotated: new tokens, the old ones revoked, the phones online on the new ones.
  std::vector<std::string> rotate = deploy;
  rotate.push_back("--rotate-tokens");
  ASSERT_EQ(Memfleet(rotate, &out), 0) << out << Logs();
  EXPECT_TRUE(absl::StrContains(RowOf(out, kX86Phone), "agent-lab-a-rack3-08-2 (rotated)")) << out;
  EXPECT_NE(ReadFile(PhoneFile(kX86Phone, "token")), kept);
  tokens = TokenList(dir_.path());
  EXPECT_TRUE(absl::StrContains(TokenRow(tokens, "agent-lab-a-rack3-08"), "revoked")) << tokens;
  EXPECT_TRUE(absl::StrContains(TokenRow(tokens, "agent-lab-a-rack3-08-2"), "valid")) << tokens;
  EXPECT_TRUE(absl::StrContains(TokenRow(tokens, "agent-lab-a-rack3-07"), "revoked")) << tokens;
  EXPECT_TRUE(WaitForDevice("lab-a-rack3-08", [](const v1::DeviceSummary& d) { return d.online(); })) << Logs();
}

TEST_F(AgentsDeployTest, ANameGivenTwiceIsRefusedBeforeAnythingIsPushed) {
  const std::string admin = testing::AddServerToken(dir_.path(), "admin", "farm-admin");
  const std::string names = dir_.Write("names.txt", std::string(kArmPhone) + " lab-a-07\n" + kX86Phone + " lab-a-07\n");
  std::string out;
  EXPECT_EQ(Memfleet({"agents", "deploy", "--all", "--server-port", port_, "--mint-tokens", "--name-map", names,
                      "--token", admin, "--x86_64-agent", MEMFLEET_X86_64_AGENT_BINARY},
                     &out),
            2)
      << out;
  EXPECT_TRUE(absl::StrContains(out, "name \"lab-a-07\" is given to")) << out;
  EXPECT_FALSE(std::ifstream(PhoneFile(kX86Phone, "memfleet-agent")).good());
  // A name that is another phone's serial: the same refusal, from the phones adb lists.
  dir_.Write("names.txt", std::string(kArmPhone) + " " + kX86Phone + "\n");
  EXPECT_EQ(Memfleet({"agents", "deploy", "--all", "--server-port", port_, "--mint-tokens", "--name-map", names,
                      "--token", admin, "--x86_64-agent", MEMFLEET_X86_64_AGENT_BINARY},
                     &out),
            2)
      << out;
  EXPECT_TRUE(absl::StrContains(out, "would name both")) << out;
  EXPECT_EQ(TokenList(dir_.path()).find("agent-"), std::string::npos) << "no token minted";
}

// A phone that left the farm: `devices retire` takes it out of every view of the fleet while its history
// stays readable by id; its agent coming back makes it active again; `--purge` deletes it for good.
TEST_F(AgentsDeployTest, ARetiredDeviceLeavesEveryViewUntilItsAgentComesBack) {
  const std::string admin = testing::AddServerToken(dir_.path(), "admin", "farm-admin");
  token_ = admin;
  server_->UseToken(admin);
  setenv("MEMFLEET_SERVER", server_->address().c_str(), 1);  // for devices, fleet, report and trend
  const std::string names = dir_.Write("names.txt", std::string(kX86Phone) + " lab-b-01\n");
  const std::vector<std::string> deploy = {"agents",
                                           "deploy",
                                           "--serial",
                                           kX86Phone,
                                           "--server-port",
                                           port_,
                                           "--mint-tokens",
                                           "--name-map",
                                           names,
                                           "--token",
                                           admin,
                                           "--interval",
                                           "3600",
                                           "--confirm-timeout",
                                           "120",
                                           "--x86_64-agent",
                                           MEMFLEET_X86_64_AGENT_BINARY};
  std::string out;
  ASSERT_EQ(Memfleet(deploy, &out), 0) << out << Logs();
  ASSERT_TRUE(WaitForDevice("lab-b-01", [](const v1::DeviceSummary& d) {
    return d.online() && d.capture_count() >= 1;
  })) << Logs();
  // Another device stays in the farm: a sample tree's agent, once, with its own token.
  const std::string agent_token = testing::AddServerToken(dir_.path(), "agent", "sample", "qcom-sm8450");
  dir_.Write("sample.token", agent_token);
  testing::RunAgentOnce(*server_, dir_.path(), "qcom-sm8450", {"--token-file", dir_.path() + "/sample.token"});

  // Online: refused, as its next capture would bring it back at once.
  EXPECT_EQ(Memfleet({"--token", admin, "devices", "retire", "lab-b-01"}, &out), 2) << out;
  EXPECT_TRUE(absl::StrContains(out, "is online")) << out;
  ASSERT_EQ(Memfleet({"agents", "stop", "--serial", kX86Phone}, &out), 0) << out;
  ASSERT_TRUE(WaitForDevice("lab-b-01", [](const v1::DeviceSummary& d) { return !d.online(); })) << Logs();
  // A read token may not retire.
  const std::string reader = testing::AddServerToken(dir_.path(), "read", "farm-reader");
  EXPECT_EQ(Memfleet({"--token", reader, "devices", "retire", "lab-b-01"}, &out), 1) << out;
  const std::string old_secret = ReadFile(PhoneFile(kX86Phone, "token"));
  ASSERT_TRUE(absl::StartsWith(old_secret, "mft_"));
  ASSERT_EQ(Memfleet({"--token", admin, "devices", "retire", "lab-b-01"}, &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "lab-b-01: retired at ")) << out;
  // Its token was revoked with it: the phone's agent may no longer stream; the sample's token stays valid.
  EXPECT_TRUE(absl::StrContains(out, "agent token agent-lab-b-01 revoked")) << out;
  EXPECT_EQ(Memfleet({"--token", admin, "devices", "retire", "no-such-phone"}, &out), 4) << out;
  std::string tokens = TokenList(dir_.path());
  EXPECT_TRUE(absl::StrContains(TokenRow(tokens, "agent-lab-b-01"), "revoked")) << tokens;
  EXPECT_TRUE(absl::StrContains(TokenRow(tokens, "sample"), "valid")) << tokens;
  {
    testing::RawAgent refused(server_->address(), grpc::InsecureChannelCredentials(), old_secret);
    EXPECT_FALSE(refused.Hello("lab-b-01"));
    EXPECT_EQ(refused.Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }

  // Gone from devices, fleet, /metrics and the dashboard; qcom-sm8450 still in each.
  ASSERT_EQ(Memfleet({"--token", admin, "--json", "devices"}, &out), 0) << out;
  nlohmann::json listed = nlohmann::json::parse(out);
  ASSERT_EQ(listed.size(), 1u) << out;
  EXPECT_EQ(listed[0]["device_id"], "qcom-sm8450");
  ASSERT_EQ(Memfleet({"--token", admin, "--json", "devices", "--retired"}, &out), 0) << out;
  listed = nlohmann::json::parse(out);
  ASSERT_EQ(listed.size(), 1u) << out;
  EXPECT_EQ(listed[0]["device_id"], "lab-b-01");
  EXPECT_TRUE(listed[0]["retired_at"].is_string()) << out;
  ASSERT_EQ(Memfleet({"--token", admin, "fleet", "--rows"}, &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "qcom-sm8450")) << out;
  EXPECT_FALSE(absl::StrContains(out, "lab-b-01")) << out;
  std::string metrics = HttpBody("/metrics");
  EXPECT_TRUE(absl::StrContains(metrics, "device_id=\"qcom-sm8450\"")) << metrics;
  EXPECT_FALSE(absl::StrContains(metrics, "lab-b-01")) << metrics;
  std::string fleet_page = HttpBody("/");
  EXPECT_TRUE(absl::StrContains(fleet_page, "qcom-sm8450")) << fleet_page;
  EXPECT_FALSE(absl::StrContains(fleet_page, "lab-b-01")) << fleet_page;

  // Its history, by id: the report and a process's trend.
  ASSERT_EQ(Memfleet({"--token", admin, "--json", "report", "lab-b-01"}, &out), 0) << out;
  const nlohmann::json report = nlohmann::json::parse(out);
  ASSERT_TRUE(report.contains("processes") && !report["processes"].empty()) << out;
  const std::string process = report["processes"].begin().value()["name"];
  ASSERT_EQ(Memfleet({"--token", admin, "trend", "lab-b-01", "--process", process}, &out), 0) << out;

  // The agent comes back, deployed again: on a new token, active again everywhere.
  ASSERT_EQ(Memfleet(deploy, &out), 0) << out << Logs();
  EXPECT_TRUE(absl::StrContains(RowOf(out, kX86Phone), "agent-lab-b-01-2 (new)")) << out;
  EXPECT_NE(ReadFile(PhoneFile(kX86Phone, "token")), old_secret);
  ASSERT_TRUE(WaitForDevice("lab-b-01", [](const v1::DeviceSummary& d) { return d.online(); })) << Logs();
  ASSERT_EQ(Memfleet({"--token", admin, "--json", "devices", "--retired"}, &out), 0) << out;
  EXPECT_EQ(nlohmann::json::parse(out).size(), 0u) << out;
  metrics = HttpBody("/metrics");
  EXPECT_TRUE(absl::StrContains(metrics, "device_id=\"lab-b-01\"")) << metrics;

  // Purged: nothing of it is left.
  ASSERT_EQ(Memfleet({"agents", "stop", "--serial", kX86Phone}, &out), 0) << out;
  ASSERT_TRUE(WaitForDevice("lab-b-01", [](const v1::DeviceSummary& d) { return !d.online(); })) << Logs();
  const uint64_t captures = Device("lab-b-01").capture_count();
  ASSERT_GE(captures, 1u);
  ASSERT_EQ(Memfleet({"--token", admin, "devices", "retire", "lab-b-01", "--purge"}, &out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, absl::StrCat("lab-b-01: retired and purged, ", captures, " captures deleted")))
      << out;
  EXPECT_EQ(Memfleet({"--token", admin, "report", "lab-b-01"}, &out), 4) << out;
  ASSERT_EQ(Memfleet({"--token", admin, "--json", "devices", "--retired"}, &out), 0) << out;
  EXPECT_EQ(nlohmann::json::parse(out).size(), 0u) << out;
  EXPECT_EQ(Device("qcom-sm8450").capture_count(), 1u);
}

// A user build (no su, no adb root): the agent runs as shell. The stand-in phone's "/" is a folder (the fake
// adb's root/) laid out as the shell capture of an NVIDIA Shield in tests/data/captures-shell/shield-shell:
// where that tree recorded EACCES the file is there with mode 000, which the fake adb's shell user
// (`nobody`) may not read, so the kernel itself answers EACCES; its system/bin/dumpsys prints the Shield's
// real text. The agent comes online as shell, says the dumpsys tier, and the server stores reports of that
// tier with the figures expected.json works out from the text (docs/accounting.md section 9).
void LayOutShellPhoneRoot(const std::string& tree, const std::string& root) {
  namespace fs = std::filesystem;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(tree)) {
    if (!entry.is_regular_file()) continue;
    std::string rel = fs::relative(entry.path(), tree).string();
    // A live root has no capture.json (the agent would take it for a capture tree), and its dumpsys text
    // comes from running system/bin/dumpsys.
    if (rel == "capture.json" || absl::StartsWith(rel, "cmd/")) continue;
    if (absl::EndsWith(rel, ".err")) {
      rel.resize(rel.size() - 4);
      ASSERT_EQ(absl::StripAsciiWhitespace(ReadFile(entry.path().string())), "EACCES") << rel;
      const std::string denied = root + "/" + rel;
      fs::create_directories(fs::path(denied).parent_path());
      std::ofstream(denied) << "00400000-00401000 r-xp 00000000 00:00 0\n";
      ASSERT_EQ(chmod(denied.c_str(), 0), 0) << denied;  // as another app's smaps is to the shell user
      continue;
    }
    fs::create_directories((fs::path(root) / rel).parent_path());
    fs::copy_file(entry.path(), fs::path(root) / rel);
  }
}

TEST_F(AgentsDeployTest, AShellPhoneStoresDumpsysTierReports) {
  const std::string shield = testing::TestData("captures-shell/shield-shell");
  const nlohmann::json expected = nlohmann::json::parse(ReadFile(shield + "/expected.json"));
  const std::string phone = phones_ + "/" + kShellPhone;
  dir_.Write(std::string("phones/") + kShellPhone + "/props", "ro.product.cpu.abi=x86_64\nro.debuggable=0\n");
  ASSERT_NO_FATAL_FAILURE(LayOutShellPhoneRoot(shield + "/tree", phone + "/root"));
  dir_.Write(std::string("phones/") + kShellPhone + "/dumpsys_meminfo.txt",
             ReadFile(shield + "/tree/cmd/dumpsys_meminfo"));
  dir_.Write(std::string("phones/") + kShellPhone + "/root/system/bin/dumpsys",
             "#!/bin/sh\n[ \"$1\" = meminfo ] && exec cat \"$(dirname \"$0\")/../../../dumpsys_meminfo.txt\"\n"
             "echo \"Can't find service: $1\" >&2\nexit 1\n",
             /*executable=*/true);
  // The shell user must reach the phone's folders, and the stand-in must really deny it the mode-000
  // files: an agent that could read them would make this test pass on the kernel tier.
  for (const std::string& folder : {dir_.path(), phones_, phone}) ASSERT_EQ(chmod(folder.c_str(), 0755), 0) << folder;
  // The shell user: `nobody` when the tests run as root (the fake adb drops to it), else the tests' user.
  const uid_t shell_uid = geteuid() == 0 ? 65534 : geteuid();
  std::vector<std::string> as_shell = {"/bin/cat", phone + "/root/proc/3703/smaps_rollup"};
  if (geteuid() == 0) {
    as_shell.insert(as_shell.begin(), {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  }
  testing::ProcessRun denied = testing::RunToExit(as_shell, dir_.path() + "/denied.log");
  ASSERT_NE(denied.exit_code, 0) << denied.output;
  EXPECT_TRUE(absl::StrContains(denied.output, "Permission denied")) << denied.output;

  std::string out;
  ASSERT_EQ(Memfleet({"agents", "deploy", "--serial", kShellPhone, "--server-port", port_, "--insecure-no-tokens",
                      "--interval", "3600", "--confirm-timeout", "120", "--x86_64-agent", MEMFLEET_X86_64_AGENT_BINARY},
                     &out),
            0)
      << out << Logs() << ReadFile(PhoneFile(kShellPhone, "agent.log"));
  EXPECT_TRUE(absl::StrContains(ReadFile(PhoneFile(kShellPhone, "agent.conf")), "access=shell\n"));
  ASSERT_TRUE(
      WaitForDevice(kShellPhone, [](const v1::DeviceSummary& d) { return d.online() && d.capture_count() >= 1; }))
      << ReadFile(PhoneFile(kShellPhone, "agent.log")) << Logs();
  // The agent runs as the shell user, not as root, and said so in its start-up line.
  const int64_t pid = AgentPid(kShellPhone);
  EXPECT_TRUE(absl::StrContains(ReadFile(absl::StrCat("/proc/", pid, "/status")),
                                absl::StrCat("\nUid:\t", shell_uid, "\t", shell_uid, "\t", shell_uid, "\t")))
      << ReadFile(absl::StrCat("/proc/", pid, "/status"));
  EXPECT_TRUE(
      absl::StrContains(ReadFile(PhoneFile(kShellPhone, "agent.log")), "dumpsys tier: dumpsys meminfo every capture"))
      << ReadFile(PhoneFile(kShellPhone, "agent.log"));
  // Its Hello said the tier: the server keeps it for the device, and `agents status` shows it.
  EXPECT_EQ(Device(kShellPhone).agent_tier(), "dumpsys");
  ASSERT_EQ(Memfleet({"agents", "status", "--json"}, &out), 0) << out;
  const nlohmann::json status = nlohmann::json::parse(out, nullptr, false);
  bool listed = false;
  for (const nlohmann::json& row :
       status.is_object() ? status.value("phones", nlohmann::json::array()) : nlohmann::json::array()) {
    if (row.value("serial", "") != kShellPhone) continue;
    listed = true;
    EXPECT_EQ(row.value("tier", nlohmann::json()), "dumpsys") << row;
    EXPECT_EQ(row.value("access", nlohmann::json()), "shell") << row;
  }
  EXPECT_TRUE(listed) << out;

  // The stored report: every process of expected.json with its figures (the agent's own process, 9999, the
  // one process the shell user may read, on the kernel tier), and the device's processes_kb and tier. The kernel
  // side differs: this live root has no DDR size, so total_kb is not compared.
  const nlohmann::json report = server_->Report(kShellPhone);
  EXPECT_EQ(report["device"]["tier"], expected["device"]["tier"]) << report["warnings"].dump(1);
  EXPECT_EQ(report["device"]["processes_kb"], expected["device"]["processes_kb"]) << report["warnings"].dump(1);
  EXPECT_EQ(report["processes"].size(), expected["processes"].size()) << report["processes"].dump(1);
  for (const auto& [pid_text, want] : expected["processes"].items()) {
    const nlohmann::json got = report["processes"].value(pid_text, nlohmann::json::object());
    for (const auto& [figure, value] : want.items()) {
      EXPECT_EQ(got.value(figure, nlohmann::json()), value) << "pid " << pid_text << " " << figure;
    }
  }
  // The six processes the kernel denied make one counted warning for their smaps_rollup and one for their
  // maps, not a line each.
  size_t about_denied = 0;
  for (const nlohmann::json& w : report["warnings"]) about_denied += absl::StrContains(w.get<std::string>(), "EACCES");
  EXPECT_EQ(about_denied, 2u) << report["warnings"].dump(1);
  EXPECT_TRUE(absl::StrContains(report["warnings"].dump(),
                                "smaps unreadable for 6 processes (EACCES): their figures come from dumpsys"))
      << report["warnings"].dump(1);
  ASSERT_EQ(Memfleet({"agents", "stop", "--serial", kShellPhone}, &out), 0) << out;
}

TEST_F(AgentsDeployTest, ABinaryForAnotherMachineFailsThatPhoneWithTheAgentsOwnError) {
  std::string out;
  // The x86-64 binary given as the arm64 one: the arm64 phone cannot execute it.
  EXPECT_EQ(Memfleet({"agents", "deploy", "--serial", kArmPhone, "--server-port", port_, "--insecure-no-tokens",
                      "--confirm-timeout", "5", "--arm64-agent", MEMFLEET_X86_64_AGENT_BINARY},
                     &out),
            1)
      << out;
  EXPECT_TRUE(absl::StrContains(out, "not online at 127.0.0.1:" + port_)) << out;
  EXPECT_TRUE(absl::StrContains(ReadFile(PhoneFile(kArmPhone, "agent.log")), "not executable: x86_64 ELF")) << Logs();
}

}  // namespace
}  // namespace agents_deploy_scenario
}  // namespace memfleet
