// BuildAgentConfig: the agent's flags checked and made into the scheduler's and the transport's options,
// with the errors naming the flag a person has to fix; and the flags' --help, which shows their defaults.
#include "agent/agent_config.h"

#include <chrono>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "agent/spool.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace memfleet::agent {
namespace {

class AgentConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    tree_ = dir_.path() + "/tree";
    dir_.Write("tree/capture.json",
               R"({"format": 1, "device_id": "bench-3", "captured_at": "2026-11-30T08:00:00Z", "page_size": 16384,
                   "model": "Pixel 8", "soc": "Tensor G3"})");
    flags_.server = "127.0.0.1:7070";
    flags_.root = tree_;
    flags_.device_id = "bench-3";
    flags_.spool_dir = dir_.path() + "/spool";
  }

  // The message of the error, or a failure when there is none.
  std::string ErrorOf(const AgentFlags& flags) {
    absl::StatusOr<AgentConfig> config = BuildAgentConfig(flags);
    EXPECT_FALSE(config.ok());
    return config.ok() ? "" : std::string(config.status().message());
  }

  testing::TempDir dir_;
  std::string tree_;
  AgentFlags flags_;
};

TEST_F(AgentConfigTest, ACaptureTreeGivesTheDeviceItsCaptureJsonDescribes) {
  flags_.interval_s = 90;
  flags_.max_capture_mb = 3;
  flags_.max_node_mb = 2;
  flags_.spool_max_mb = 5;
  absl::StatusOr<AgentConfig> config = BuildAgentConfig(flags_);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->capture_tree);
  EXPECT_EQ(config->transport.device.device_id(), "bench-3");
  EXPECT_EQ(config->transport.device.model(), "Pixel 8");
  EXPECT_EQ(config->transport.device.soc(), "Tensor G3");
  EXPECT_EQ(config->transport.device.page_size(), 16384u);
  EXPECT_EQ(config->transport.servers, std::vector<std::string>{"ipv4:127.0.0.1:7070"});
  EXPECT_EQ(config->scheduler.interval, std::chrono::seconds(90));
  EXPECT_EQ(config->scheduler.max_capture_bytes, uint64_t{3} << 20);
  EXPECT_EQ(config->scheduler.max_node_bytes, uint64_t{2} << 20);
  EXPECT_EQ(config->spool.dir, flags_.spool_dir);
  EXPECT_EQ(config->spool.max_bytes, uint64_t{5} << 20);
  // A capture tree carries its own header: none is written from live facts.
  EXPECT_TRUE(config->scheduler.header_facts.empty());
  EXPECT_EQ(config->scheduler.capture_instance.size(), 8u);
}

// An agent that is not root reads as shell: other processes' smaps are denied to it, so its figures are of
// the dumpsys tier (docs/accounting.md section 9). It says so in its Hello and in its start-up line, and
// runs dumpsys meminfo in every capture, whatever --dumpsys-every says; as root it keeps the flag.
TEST_F(AgentConfigTest, AShellAgentRunsDumpsysEveryCaptureAndSaysItsTier) {
  dir_.Write("live/proc/meminfo", "MemTotal: 1000 kB\n");
  flags_.root = dir_.path() + "/live";
  flags_.live_root = true;
  flags_.dumpsys_every = 12;
  AgentHost shell;
  shell.euid = 2000;
  shell.euid_set = true;
  absl::StatusOr<AgentConfig> config = BuildAgentConfig(flags_, shell);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->capture_tree);
  EXPECT_EQ(config->transport.device.access(), "shell");
  EXPECT_EQ(config->transport.device.tier(), "dumpsys");
  EXPECT_EQ(config->scheduler.dumpsys_every, 1u);
  absl::StatusOr<std::unique_ptr<Spool>> spool = Spool::Open(config->spool);
  ASSERT_TRUE(spool.ok()) << spool.status();
  EXPECT_THAT(DescribeAgentStart(flags_, *config, **spool),
              ::testing::HasSubstr(", shell, selinux none, dumpsys tier: dumpsys meminfo every capture)"));

  AgentHost root;
  root.euid = 0;
  root.euid_set = true;
  config = BuildAgentConfig(flags_, root);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->transport.device.access(), "root");
  EXPECT_EQ(config->transport.device.tier(), "kernel");
  EXPECT_EQ(config->scheduler.dumpsys_every, 12u);
}

TEST_F(AgentConfigTest, ModelAndSocFlagsWinOverTheCaptureJson) {
  flags_.model = "bench phone";
  flags_.soc = "sm8450";
  absl::StatusOr<AgentConfig> config = BuildAgentConfig(flags_);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->transport.device.model(), "bench phone");
  EXPECT_EQ(config->transport.device.soc(), "sm8450");
}

// --ddr-size-kb gives a live root's DDR size, which its captures then carry (a Linux host has no other
// source); a capture tree's capture.json already says its own, so the flag is refused there, naming itself.
TEST_F(AgentConfigTest, ALiveRootsDdrSizeComesFromItsFlagAndATreeRefusesIt) {
  dir_.Write("live/proc/meminfo", "MemTotal: 1000 kB\n");
  flags_.root = dir_.path() + "/live";
  flags_.live_root = true;
  flags_.ddr_size_kb = 16777216;
  absl::StatusOr<AgentConfig> config = BuildAgentConfig(flags_);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->scheduler.ddr_size_kb, 16777216u);

  flags_.ddr_size_kb = 0;
  config = BuildAgentConfig(flags_);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->scheduler.ddr_size_kb.has_value());

  AgentFlags tree = flags_;
  tree.root = tree_;
  tree.live_root = false;
  tree.ddr_size_kb = 16777216;
  EXPECT_THAT(ErrorOf(tree), ::testing::HasSubstr("--ddr-size-kb is for a live root"));
}

// A refusal for now (the server's database down, its disk full) is answered by a resend after the flag's
// seconds, and the ack deadline keeps its own flag.
TEST_F(AgentConfigTest, RefusedCapturesAreResentAfterTheirFlagsSeconds) {
  flags_.resend_refused_after_s = 4;
  flags_.ack_timeout_s = 9;
  absl::StatusOr<AgentConfig> config = BuildAgentConfig(flags_);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->transport.rejected_retry_delay, std::chrono::seconds(4));
  EXPECT_EQ(config->transport.ack_timeout, std::chrono::seconds(9));
}

TEST_F(AgentConfigTest, SeveralServersAreTriedInTheOrderGiven) {
  flags_.server = "127.0.0.1:7070,[::1]:7071";
  absl::StatusOr<AgentConfig> config = BuildAgentConfig(flags_);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->transport.servers, (std::vector<std::string>{"ipv4:127.0.0.1:7070", "ipv6:[::1]:7071"}));
}

TEST_F(AgentConfigTest, ABadDeviceIdOrLabelNamesItsFlag) {
  AgentFlags bad_id = flags_;
  bad_id.device_id = "bench 3\n";
  EXPECT_EQ(ErrorOf(bad_id).rfind("--device-id: ", 0), 0u) << ErrorOf(bad_id);
  AgentFlags bad_label = flags_;
  bad_label.labels = {"Rack=7"};
  EXPECT_EQ(ErrorOf(bad_label).rfind("--label: ", 0), 0u) << ErrorOf(bad_label);
}

TEST_F(AgentConfigTest, ARootThatIsNeitherATreeNorAFolderNamesRoot) {
  flags_.root = dir_.path() + "/missing";
  EXPECT_EQ(ErrorOf(flags_).rfind("--root ", 0), 0u) << ErrorOf(flags_);
  dir_.Write("broken/capture.json", "{not json");
  flags_.root = dir_.path() + "/broken";
  EXPECT_NE(ErrorOf(flags_).find("its capture.json is not usable"), std::string::npos) << ErrorOf(flags_);
}

TEST_F(AgentConfigTest, ClientCertificatesComeInPairsAndNeedTheServersCa) {
  flags_.tls_cert_file = dir_.Write("c.pem", "CERT");
  EXPECT_EQ(ErrorOf(flags_), "--tls-cert and --tls-key go together");
  flags_.tls_key_file = dir_.Write("c.key", "KEY");
  EXPECT_EQ(ErrorOf(flags_), "--tls-cert needs --ca-cert (mutual TLS is TLS)");
  flags_.ca_cert_file = dir_.Write("ca.pem", "CA");
  absl::StatusOr<AgentConfig> config = BuildAgentConfig(flags_);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->transport.tls.ca_cert_pem, "CA");
  EXPECT_EQ(config->transport.tls.client_cert_pem, "CERT");
  EXPECT_EQ(config->transport.tls.client_key_pem, "KEY");
}

TEST_F(AgentConfigTest, TheTokenFileLosesItsTrailingNewlineAndAnUnreadableOneNamesTheFlag) {
  flags_.token_file = dir_.Write("token", "s3cret-token \r\n");
  absl::StatusOr<AgentConfig> config = BuildAgentConfig(flags_);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->transport.token, "s3cret-token");
  flags_.token_file = dir_.path() + "/no-such-token";
  EXPECT_EQ(ErrorOf(flags_), "--token-file: cannot read " + flags_.token_file);
}

TEST_F(AgentConfigTest, EachStartDrawsANewCaptureInstance) {
  absl::StatusOr<AgentConfig> first = BuildAgentConfig(flags_);
  absl::StatusOr<AgentConfig> second = BuildAgentConfig(flags_);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->scheduler.capture_instance, second->scheduler.capture_instance);
}

// The command line parsed as memfleet-agent parses it, then built.
absl::StatusOr<AgentConfig> ParseAndBuild(std::vector<std::string> args, AgentFlags& flags) {
  CLI::App app("memfleet-agent");
  AddAgentFlags(app, flags);
  args.insert(args.begin(), "memfleet-agent");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return absl::InvalidArgumentError(e.what());
  }
  return BuildAgentConfig(flags);
}

// A DDR size of 0 or above the bound a capture header takes (64 TiB) is refused as the command line is read.
TEST_F(AgentConfigTest, ADdrSizeOutsideWhatAHeaderTakesIsAUsageError) {
  dir_.Write("live/proc/meminfo", "MemTotal: 1000 kB\n");
  const std::vector<std::string> live = {
      "--server",    "127.0.0.1:7070", "--root",  dir_.path() + "/live", "--live-root",
      "--device-id", "bench-3",        "--spool", dir_.path() + "/spool"};
  for (const char* size : {"0", "68719476737", "16GiB"}) {
    std::vector<std::string> args = live;
    args.insert(args.end(), {"--ddr-size-kb", size});
    AgentFlags flags;
    absl::StatusOr<AgentConfig> config = ParseAndBuild(args, flags);
    ASSERT_FALSE(config.ok()) << size;
    EXPECT_THAT(std::string(config.status().message()), ::testing::HasSubstr("--ddr-size-kb")) << size;
  }
  std::vector<std::string> args = live;
  args.insert(args.end(), {"--ddr-size-kb", "68719476736"});
  AgentFlags flags;
  absl::StatusOr<AgentConfig> config = ParseAndBuild(args, flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->scheduler.ddr_size_kb, uint64_t{68719476736});
}

// Without --interval the agent captures every 300 s, and that figure is what the scheduler runs on, what
// the transport names in its connected line, and what the start-up line says.
TEST_F(AgentConfigTest, WithoutIntervalTheDefaultIsTheIntervalUsedAndLogged) {
  AgentFlags flags;
  absl::StatusOr<AgentConfig> config = ParseAndBuild(
      {"--server", "127.0.0.1:7070", "--root", tree_, "--device-id", "bench-3", "--spool", dir_.path() + "/spool"},
      flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->scheduler.interval, std::chrono::seconds(300));
  EXPECT_EQ(config->transport.interval, std::chrono::seconds(300));
  absl::StatusOr<std::unique_ptr<Spool>> spool = Spool::Open(config->spool);
  ASSERT_TRUE(spool.ok()) << spool.status();
  EXPECT_THAT(DescribeAgentStart(flags, *config, **spool), ::testing::EndsWith(", every 300 s"));

  config = ParseAndBuild({"--server", "127.0.0.1:7070", "--root", tree_, "--device-id", "bench-3", "--spool",
                          dir_.path() + "/spool", "--interval", "30"},
                         flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->scheduler.interval, std::chrono::seconds(30));
  EXPECT_EQ(config->transport.interval, std::chrono::seconds(30));
}

// The line of `help` that describes `option` ("  --interval UINT:... =300  seconds between ..."), or "".
std::string HelpLineOf(const std::string& help, const std::string& option) {
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == option || first.rfind(option + ",", 0) == 0) return line;
  }
  return "";
}

// Every option that has a default shows it in --help ("=300"), with the value the agent takes when the
// option is not given: those README.md and docs/capture-format.md quote.
TEST(AgentFlagsHelpTest, EveryOptionWithADefaultShowsIt) {
  CLI::App app("memfleet-agent");
  AgentFlags flags;
  AddAgentFlags(app, flags);
  const std::string help = app.help();
  const std::vector<std::pair<std::string, std::string>> defaults = {
      {"--interval", "300"},
      {"--once-timeout", "60"},
      {"--ack-timeout", "30"},
      {"--resend-refused-after", "30"},
      {"--spool-max-mb", "64"},
      {"--max-capture-mb", "256"},
      {"--max-node-mb", "64"},
      {"--dumpsys-every", "12"},
      {"--heap-dumps-per-capture", "2"},
      {"--heap-dump-timeout-ms", "5000"},
      {"--smaps", "gpu"},
  };
  for (const auto& [option, value] : defaults) {
    const std::string line = HelpLineOf(help, option);
    ASSERT_FALSE(line.empty()) << option << " is not in --help:\n" << help;
    EXPECT_THAT(line + " ", ::testing::HasSubstr("=" + value + " ")) << option;
  }
}

}  // namespace
}  // namespace memfleet::agent
