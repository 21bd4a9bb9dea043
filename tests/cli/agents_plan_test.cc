#include "cli/commands/agents_plan.h"

#include <gtest/gtest.h>

#include <map>

#include <cstdio>
#include <string>

namespace memfleet::cli {
namespace {

TEST(AgentBinaryForAbi, EachBuiltAbiTakesItsStaticAgent) {
  AgentBinaries binaries = AgentBinariesIn("/opt/memfleet");
  EXPECT_EQ(*AgentBinaryForAbi("arm64-v8a", binaries), "/opt/memfleet/build-agent-arm64/bin/memfleet-agent");
  EXPECT_EQ(*AgentBinaryForAbi("x86_64", binaries), "/opt/memfleet/build-agent-x86_64/bin/memfleet-agent");
}

TEST(AgentBinaryForAbi, AnAbiWithoutAnAgentIsAClearError) {
  AgentBinaries binaries = AgentBinariesIn(".");
  for (const char* abi : {"armeabi-v7a", "x86", "riscv64", ""}) {
    absl::StatusOr<std::string> binary = AgentBinaryForAbi(abi, binaries);
    ASSERT_FALSE(binary.ok()) << abi;
    EXPECT_NE(binary.status().message().find("has no memfleet agent (built: arm64-v8a, x86_64)"), std::string::npos)
        << binary.status().message();
  }
  binaries.x86_64.clear();
  EXPECT_NE(AgentBinaryForAbi("x86_64", binaries).status().message().find("--x86_64-agent"), std::string::npos);
}

// Installed from the packages, memfleet is /usr/bin/memfleet and the agents are under /usr/share; a phone
// ABI without a packaged agent falls back to scripts/build-agent's under the current folder.
TEST(DefaultAgentBinaries, ThePackagedAgentWhenItIsThereElseTheBuiltOne) {
  const auto only = [](std::string present) { return [present](const std::string& path) { return path == present; }; };
  AgentBinaries packaged_arm =
      DefaultAgentBinaries("/usr/bin", only("/usr/bin/../share/memfleet/agents/arm64-v8a/memfleet-agent"));
  EXPECT_EQ(packaged_arm.arm64, "/usr/bin/../share/memfleet/agents/arm64-v8a/memfleet-agent");
  EXPECT_EQ(packaged_arm.x86_64, "./build-agent-x86_64/bin/memfleet-agent");
  AgentBinaries none = DefaultAgentBinaries("/home/lab/memfleet/build/bin", only(""));
  EXPECT_EQ(none.arm64, "./build-agent-arm64/bin/memfleet-agent");
  EXPECT_EQ(none.x86_64, "./build-agent-x86_64/bin/memfleet-agent");
}

TEST(DeviceIdForSerial, KeepsWhatTheServerAcceptsAndReplacesTheRest) {
  EXPECT_EQ(DeviceIdForSerial("R58M123ABC"), "R58M123ABC");
  EXPECT_EQ(DeviceIdForSerial("emulator-5554"), "emulator-5554");
  EXPECT_EQ(DeviceIdForSerial("192.168.1.20:5555"), "192.168.1.20:5555");
  EXPECT_EQ(DeviceIdForSerial("adb-R58M123-x._adb-tls-connect._tcp"), "adb-R58M123-x._adb-tls-connect._tcp");
  EXPECT_EQ(DeviceIdForSerial("usb 1/2\t'x'"), "usb_1_2__x_");
  EXPECT_EQ(DeviceIdForSerial(""), "_");
  EXPECT_EQ(DeviceIdForSerial(std::string(200, 'a')), std::string(128, 'a'));
}

TEST(PhoneAgentConfig, RoundTripsThroughItsFile) {
  PhoneAgentConfig config{"192.168.1.20:5555", 7070, 120, AccessLevel::kSu, true, false, "", {}};
  absl::StatusOr<PhoneAgentConfig> back = ParsePhoneAgentConfig(RenderPhoneAgentConfig(config));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->device_id, "192.168.1.20:5555");
  EXPECT_EQ(back->server_port, 7070);
  EXPECT_EQ(back->interval_s, 120u);
  EXPECT_EQ(back->access, AccessLevel::kSu);
  EXPECT_TRUE(back->token);
  EXPECT_FALSE(back->ca_cert);
}

TEST(PhoneAgentConfig, ABadOrMissingLineIsRefused) {
  EXPECT_FALSE(ParsePhoneAgentConfig("device_id=a\n").ok());                      // no port
  EXPECT_FALSE(ParsePhoneAgentConfig("device_id=a\nserver_port=70000\n").ok());   // not a port
  EXPECT_FALSE(ParsePhoneAgentConfig("device_id=a b\nserver_port=7070\n").ok());  // not a device id
  EXPECT_FALSE(ParsePhoneAgentConfig("device_id=a\nserver_port=7070\naccess=god\n").ok());
  EXPECT_TRUE(ParsePhoneAgentConfig("device_id=a\nserver_port=7070\nlater_key=1\n").ok());
}

// What a POSIX shell makes of the quoted word: the text back, byte for byte.
std::string ThroughSh(const std::string& word) {
  std::string command = "printf %s " + ShellQuote(word);
  FILE* sh = popen(command.c_str(), "r");
  std::string out;
  char buf[256];
  for (size_t n; (n = fread(buf, 1, sizeof buf, sh)) > 0;) out.append(buf, n);
  pclose(sh);
  return out;
}

TEST(ShellQuote, TheShellGivesTheTextBack) {
  for (const std::string& text :
       {std::string("it's $HOME `id` \"x\" \\ ;&|"), std::string("a\nb"), std::string("''"), std::string()}) {
    EXPECT_EQ(ThroughSh(text), text);
  }
}

TEST(WithAccess, SuWrapsTheCommandAsOneWord) {
  EXPECT_EQ(WithAccess(AccessLevel::kSu, "echo 'hi'"), "su -c 'echo '\\''hi'\\'''");
  EXPECT_EQ(WithAccess(AccessLevel::kAdbRoot, "id -u"), "id -u");
  EXPECT_EQ(WithAccess(AccessLevel::kShell, "id -u"), "id -u");
}

TEST(AgentCommandLine, ReachesTheServerOverTheTunnelAndCapturesTheRoot) {
  PhoneAgentConfig config{"R58M123ABC", 7070, 60, AccessLevel::kShell, true, true, "", {}};
  EXPECT_EQ(AgentCommandLine(config),
            "/data/local/tmp/memfleet/memfleet-agent --server '127.0.0.1:7070' --device-id 'R58M123ABC' --root / "
            "--interval 60 --spool /data/local/tmp/memfleet/spool --token-file /data/local/tmp/memfleet/token "
            "--ca-cert /data/local/tmp/memfleet/ca.pem");
  config.token = config.ca_cert = false;
  EXPECT_EQ(AgentCommandLine(config).find("--token-file"), std::string::npos);
  EXPECT_EQ(AgentCommandLine(config).find("--ca-cert"), std::string::npos);
}

TEST(StartAgentCommand, DetachesWithLogAndPidFile) {
  std::string start = StartAgentCommand({"R58M123ABC", 7070, 60, AccessLevel::kShell, false, false, "", {}});
  EXPECT_NE(start.find("setsid nohup /data/local/tmp/memfleet/memfleet-agent "), std::string::npos) << start;
  EXPECT_NE(start.find(" </dev/null >>/data/local/tmp/memfleet/agent.log 2>&1 & echo $! >agent.pid"), std::string::npos)
      << start;
}

TEST(ParseAgentProbe, RunningStoppedDiedAndNotDeployed) {
  absl::StatusOr<AgentProbe> running =
      ParseAgentProbe("running 4242\n---\ndevice_id=R58\nserver_port=7070\naccess=adb-root\n");
  ASSERT_TRUE(running.ok()) << running.status();
  EXPECT_EQ(running->state, AgentProbe::kRunning);
  EXPECT_EQ(running->pid, 4242);
  ASSERT_TRUE(running->config.ok());
  EXPECT_EQ(running->config->access, AccessLevel::kAdbRoot);

  absl::StatusOr<AgentProbe> stopped = ParseAgentProbe("stopped\n---\ndevice_id=R58\nserver_port=7070\n");
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->state, AgentProbe::kStopped);

  absl::StatusOr<AgentProbe> died = ParseAgentProbe("died\n---\ndevice_id=R58\nserver_port=7070\n");
  ASSERT_TRUE(died.ok());
  EXPECT_EQ(died->state, AgentProbe::kDied);

  absl::StatusOr<AgentProbe> none = ParseAgentProbe("not deployed\n");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->state, AgentProbe::kNotDeployed);
  EXPECT_FALSE(none->config.ok());

  EXPECT_FALSE(ParseAgentProbe("/system/bin/sh: cd: permission denied\n").ok());
  EXPECT_FALSE(ParseAgentProbe("running -3\n---\n").ok());
}

TEST(ParseStartedPid, StartedOrAlreadyRunning) {
  EXPECT_EQ(*ParseStartedPid("started 731\n"), 731);
  EXPECT_EQ(*ParseStartedPid("running 12\n"), 12);
  absl::StatusOr<int64_t> failed = ParseStartedPid("setsid: not found\n");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("setsid: not found"), std::string::npos);
}

TEST(ParseNameMap, SerialsWithSpacesCommentsAndEveryRefusal) {
  absl::StatusOr<std::map<std::string, std::string>> names =
      ParseNameMap("# lab A\nR58M123ABC lab-a-rack3-07\n\nsp ace\tlab-a-rack3-08\n");
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names,
            (std::map<std::string, std::string>{{"R58M123ABC", "lab-a-rack3-07"}, {"sp ace", "lab-a-rack3-08"}}));
  EXPECT_NE(ParseNameMap("A lab-1\nB lab-1\n").status().message().find("line 2: name \"lab-1\" is given to \"A\""),
            std::string::npos);
  EXPECT_NE(ParseNameMap("A lab-1\nA lab-2\n").status().message().find("serial \"A\" is named twice"),
            std::string::npos);
  EXPECT_NE(ParseNameMap("A lab/1\n").status().message().find("is not a device id"), std::string::npos);
  EXPECT_NE(ParseNameMap("lonely\n").status().message().find("line 1: not \"SERIAL NAME\""), std::string::npos);
}

TEST(PhoneAgentConfig, ServerAndLabelsGoToTheAgentAndSurviveTheFile) {
  PhoneAgentConfig config{"lab-a-07", 7070, 60, AccessLevel::kSu, true, false, "", {}};
  config.server = "10.0.0.5:7070";
  // A value with a space, and one that starts with a quote, go out as the label parsers read them back.
  config.labels = {{"rack", "3"}, {"owner", "camera team"}, {"note", "\"draft"}};
  absl::StatusOr<PhoneAgentConfig> back = ParsePhoneAgentConfig(RenderPhoneAgentConfig(config));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->server, "10.0.0.5:7070");
  EXPECT_EQ(back->labels, config.labels);
  const std::string line = AgentCommandLine(config);
  EXPECT_NE(line.find("--server '10.0.0.5:7070'"), std::string::npos) << line;
  EXPECT_NE(line.find(" --label 'note=\"\\\"draft\"' --label 'owner=\"camera team\"' --label 'rack=3'"),
            std::string::npos)
      << line;
  EXPECT_FALSE(ParsePhoneAgentConfig("device_id=a\nserver_port=1\nlabel=Bad=1\n").ok());
  EXPECT_FALSE(ParsePhoneAgentConfig("device_id=a\nserver_port=1\nserver=1.2.3.4:1;reboot\n").ok());
}

}  // namespace
}  // namespace memfleet::cli
