// docs/deploy.md's three ways to put the phones of several USB hosts on one lab server, run as the page
// writes them: the test reads the page's command blocks and runs each line, with loopback addresses and
// ports for the page's 10.0.0.5:7070, 0.0.0.0:7070 and each USB host's 7070, a PostgreSQL database of its
// own (tests/support/postgres_server.h) for the page's URI and tests/data/tls/ for the certificate files.
// Everything is real — socat, the two servers on one PostgreSQL (TLS on the lab server), the CLI, the
// static x86-64 agent — except the phones: stand-ins (tests/support/fake_adb/adb), one folder of phones per
// USB host. What the stand-in covers and what it does not: docs/deploy.md.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"
#include "tests/support/load_tree.h"
#include "tests/support/postgres_server.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"
#include "tests/support/wait_for.h"

namespace memfleet {
namespace deploy_topologies_scenario {
namespace {

constexpr std::chrono::seconds kOnline{120};

// The ```sh blocks of a markdown page, by the comment on their first line ("# (a) on each USB host: ..."),
// each as its command lines: comments dropped, "\" continuations joined.
std::map<std::string, std::vector<std::string>> ShellBlocks(const std::string& markdown) {
  std::map<std::string, std::vector<std::string>> blocks;
  std::istringstream in(markdown);
  bool opened = false;                        // inside a ```sh block
  std::vector<std::string>* block = nullptr;  // and past its title line
  std::string pending;
  for (std::string line; std::getline(in, line);) {
    if (!opened) {
      opened = line == "```sh";
      continue;
    }
    if (line == "```") {
      opened = false;
      block = nullptr;
      continue;
    }
    if (block == nullptr) {
      block = &blocks[std::string(absl::StripPrefix(line, "# "))];
      continue;
    }
    const size_t comment = line.find(" #");
    std::string command(absl::StripAsciiWhitespace(comment == std::string::npos ? line : line.substr(0, comment)));
    if (command.empty() || command[0] == '#') continue;
    if (absl::EndsWith(command, "\\")) {
      pending += command.substr(0, command.size() - 1);
      continue;
    }
    block->push_back(pending + command);
    pending.clear();
  }
  return blocks;
}

// The block whose title starts with `prefix`; an empty one (and a test failure) when the page has none.
std::vector<std::string> Block(const std::map<std::string, std::vector<std::string>>& blocks,
                               const std::string& prefix) {
  for (const auto& [title, lines] : blocks) {
    if (absl::StartsWith(title, prefix)) return lines;
  }
  ADD_FAILURE() << "docs/deploy.md has no ```sh block starting \"# " << prefix << "\"";
  return {};
}

// The server holding the device's agent, as `devices --json` says it ("" when none or not listed).
std::string ServerOf(const nlohmann::json& device) {
  auto it = device.find("server");
  return it != device.end() && it->is_string() ? it->get<std::string>() : "";
}

// Stops a forking socat as `systemctl stop memfleet-relay` does (the whole unit): the listener and the
// child each connection has, which a signal to the listener alone leaves running with its connection open.
void StopRelay(testing::Subprocess& socat) {
  kill(socat.pid(), SIGSTOP);  // no new child while its children are found
  std::vector<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    int64_t pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    // "PID (COMM) STATE PPID ...": the parent is the second field after the last ')'.
    const std::string stat = testing::ReadFileForTest(entry.path().string() + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 1));
    std::string state;
    int64_t ppid = 0;
    if (fields >> state >> ppid && ppid == socat.pid()) children.push_back(static_cast<pid_t>(pid));
  }
  for (pid_t child : children) kill(child, SIGKILL);
  socat.Kill(SIGKILL);
}

bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  if (fd >= 0) close(fd);
  return ok;
}

class DeployTopologiesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(MEMFLEET_X86_64_AGENT_BINARY).empty()) {
      GTEST_SKIP() << "no static x86-64 agent: configure with "
                      "-DMEMFLEET_X86_64_STATIC_AGENT=build-agent-x86_64/bin/memfleet-agent";
    }
    ASSERT_FALSE(dir_.path().empty());
    {
      testing::Subprocess which({"/bin/sh", "-c", "command -v socat"}, dir_.path() + "/which-socat.log");
      if (which.WaitExit(std::chrono::seconds(30)) != 0) {
        GTEST_SKIP() << "no socat on PATH (Debian's socat; scripts/setup-deps installs it)";
      }
    }
    blocks_ = ShellBlocks(testing::ReadFileForTest(testing::TestData("../../docs/deploy.md")));
    db_ = testing::NewPostgresDatabase();
    ASSERT_FALSE(db_.empty());
    // Where the commands run: a folder with the agent scripts/build-agent would have made there.
    work_ = dir_.path() + "/work";
    std::filesystem::create_directories(work_ + "/build-agent-x86_64/bin");
    std::filesystem::copy_file(MEMFLEET_X86_64_AGENT_BINARY, work_ + "/build-agent-x86_64/bin/memfleet-agent");
    const std::string bin = std::filesystem::path(testing::Bin("memfleet")).parent_path().string();
    setenv("PATH", (bin + ":" + getenv("PATH")).c_str(), 1);
    setenv("ADB", testing::TestData("../support/fake_adb/adb").c_str(), 1);
    for (const char* name : {"MEMFLEET_SERVER", "MEMFLEET_TOKEN", "MEMFLEET_CA_CERT"}) unsetenv(name);
  }

  void TearDown() override {
    for (const auto& [serial, phones] : phone_folders_) {
      int64_t pid = 0;
      const std::string pid_file = phones + "/" + serial + "/data/local/tmp/memfleet/agent.pid";
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(testing::ReadFileForTest(pid_file)), &pid) && pid > 0 &&
          absl::StrContains(testing::ReadFileForTest(absl::StrCat("/proc/", pid, "/cmdline")), "memfleet-agent")) {
        kill(static_cast<pid_t>(pid), SIGKILL);
      }
    }
    background_.clear();  // SIGKILL each
  }

  // A USB host with one stand-in x86_64 phone; `adb` sees only its phones from now on.
  void UsbHost(const std::string& host, const std::string& serial) {
    const std::string phones = dir_.path() + "/" + host;
    dir_.Write(host + "/" + serial + "/props", "ro.product.cpu.abi=x86_64\nro.debuggable=1\n");
    setenv("MEMFLEET_FAKE_ADB_PHONES", phones.c_str(), 1);
    phone_folders_[serial] = phones;
  }

  std::string PhoneFile(const std::string& serial, const std::string& name) {
    return phone_folders_[serial] + "/" + serial + "/" + name;
  }

  // The page's line with the test's addresses: `local_port` stands for this USB host's 7070.
  std::string Substituted(const std::string& line, int local_port) {
    // What is put for the page's names goes in behind markers, so that no "7070" inside it (a port of the
    // database, a folder's name) is taken for the USB host's.
    const std::string marked = absl::StrReplaceAll(line, {{"10.0.0.5:7070", "@LAB@"},
                                                          {"0.0.0.0:7070", "@LAB@"},
                                                          {"postgresql://memfleet@db.lab:5432/memfleet", "@DB@"},
                                                          {"server.pem", "@CERT@"},
                                                          {"server.key", "@KEY@"},
                                                          {"ca.pem", "@CA@"}});
    return absl::StrReplaceAll(absl::StrReplaceAll(marked, {{"7070", std::to_string(local_port)}}),
                               {{"@LAB@", lab_port_.address()},
                                {"@DB@", db_},
                                {"@CERT@", testing::TestData("tls/server.pem")},
                                {"@KEY@", testing::TestData("tls/server.key")},
                                {"@CA@", testing::TestData("tls/ca.pem")}});
  }

  // Runs one of the page's lines as written: "export NAME=$(CMD)" sets NAME for the lines after it, "CMD &"
  // runs in the background until the test ends (and the test waits until `local_port` or the lab's port,
  // whichever the line listens on, accepts connections), anything else runs to its end and must exit 0.
  // Returns the output of a line that ran to its end; background() is the last line run in the background.
  std::string Run(const std::string& page_line, int local_port) {
    const std::string line = Substituted(page_line, local_port);
    const std::string log = absl::StrCat(dir_.path(), "/line-", ++lines_, ".log");
    if (absl::StartsWith(line, "export ")) {
      const size_t eq = line.find("=$(");
      EXPECT_TRUE(eq != std::string::npos && absl::EndsWith(line, ")")) << line;
      const std::string name = line.substr(7, eq - 7);
      const std::string command = line.substr(eq + 3, line.size() - eq - 4);
      testing::Subprocess p({"/bin/sh", "-c", "cd '" + work_ + "' && " + command + " 2>/dev/null"}, log);
      EXPECT_EQ(p.WaitExit(std::chrono::seconds(120)), 0) << line << "\n" << p.Log();
      setenv(name.c_str(), std::string(absl::StripAsciiWhitespace(p.Log())).c_str(), 1);
      return "";
    }
    if (absl::EndsWith(line, "&")) {
      const std::string command(absl::StripTrailingAsciiWhitespace(line.substr(0, line.size() - 1)));
      background_.push_back(std::make_unique<testing::Subprocess>(
          std::vector<std::string>{"/bin/sh", "-c", "cd '" + work_ + "' && exec " + command}, log));
      const int port = absl::StrContains(page_line, "7070,") || absl::StrContains(page_line, "127.0.0.1:7070")
                           ? local_port
                           : lab_port_.port();
      EXPECT_TRUE(
          testing::WaitFor([&] { return Accepts(port) || background_.back()->Exited(); }, std::chrono::seconds(60)) &&
          !background_.back()->Exited())
          << line << "\n"
          << background_.back()->Log();
      return "";
    }
    testing::Subprocess p({"/bin/sh", "-c", "cd '" + work_ + "' && " + line}, log);
    const int code = p.WaitExit(std::chrono::seconds(300));
    EXPECT_EQ(code, 0) << line << "\n" << p.Log() << Logs();
    return p.Log();
  }

  testing::Subprocess& background() { return *background_.back(); }

  // The lab server's view of the device: the page's `devices` line, with --json.
  nlohmann::json LabDevice(const std::string& device_id) {
    return DeviceIn(Run("memfleet --server 10.0.0.5:7070 --ca-cert ca.pem --json devices", 0), device_id);
  }

  // The device's row in `devices --json` output; an empty object when it is not listed.
  static nlohmann::json DeviceIn(const std::string& json_out, const std::string& device_id) {
    nlohmann::json devices = nlohmann::json::parse(json_out, nullptr, false);
    if (devices.is_array()) {
      for (const nlohmann::json& d : devices) {
        if (d.value("device_id", "") == device_id) return d;
      }
    }
    return nlohmann::json::object();
  }

  bool WaitOnline(const std::string& device_id, bool online) {
    return testing::WaitFor(
        [&] {
          nlohmann::json d = LabDevice(device_id);
          return d.value("online", false) == online && (!online || d.value("capture_count", 0) >= 1);
        },
        kOnline);
  }

  std::string Logs() {
    std::string logs;
    for (const auto& p : background_) absl::StrAppend(&logs, "\n--- background ---\n", p->Log());
    for (const auto& [serial, phones] : phone_folders_) {
      absl::StrAppend(&logs, "\n--- ", serial, " agent.log ---\n",
                      testing::ReadFileForTest(PhoneFile(serial, "data/local/tmp/memfleet/agent.log")));
    }
    return logs;
  }

  testing::TempDir dir_{"deploy_topologies"};
  std::map<std::string, std::vector<std::string>> blocks_;
  std::string db_;
  std::string work_;
  testing::LoopbackPortReservation lab_port_;         // the lab server's 10.0.0.5:7070
  std::map<std::string, std::string> phone_folders_;  // serial -> its USB host's folder of phones
  std::vector<std::unique_ptr<testing::Subprocess>> background_;
  int lines_ = 0;
};

TEST_F(DeployTopologiesTest, RelayOwnServerAndDirectDialBringEveryPhoneToTheLabServer) {
  for (const std::string& line : Block(blocks_, "the lab server")) Run(line, 0);
  ASSERT_TRUE(absl::StartsWith(getenv("MEMFLEET_TOKEN") ? getenv("MEMFLEET_TOKEN") : "", "mft_"));

  // (a) a relay on the USB host: the agent dials the relay's port, TLS through to the lab server.
  testing::LoopbackPortReservation relay;
  UsbHost("host-a", "HOSTA-0001");
  const std::vector<std::string> a = Block(blocks_, "(a)");
  ASSERT_EQ(a.size(), 2u);
  Run(a[0], relay.port());
  testing::Subprocess& socat = background();
  const std::string deployed = Run(a[1], relay.port());
  EXPECT_TRUE(absl::StrContains(deployed, "1 of 1 phones running an agent")) << deployed;
  ASSERT_TRUE(WaitOnline("HOSTA-0001", true)) << Logs();
  EXPECT_EQ(testing::ReadFileForTest(PhoneFile("HOSTA-0001", "reverse")), absl::StrCat("tcp:", relay.port(), "\n"));
  const std::string conf = testing::ReadFileForTest(PhoneFile("HOSTA-0001", "data/local/tmp/memfleet/agent.conf"));
  EXPECT_TRUE(absl::StrContains(conf, absl::StrCat("server_port=", relay.port(), "\n"))) << conf;
  // TLS end to end: the agent checks the lab server's certificate with the lab's CA, through the relay.
  EXPECT_TRUE(absl::StrContains(conf, "ca_cert=1\n")) << conf;
  EXPECT_EQ(testing::ReadFileForTest(PhoneFile("HOSTA-0001", "data/local/tmp/memfleet/ca.pem")),
            testing::ReadFileForTest(testing::TestData("tls/ca.pem")));
  EXPECT_FALSE(absl::StrContains(conf, "server=")) << conf;
  ASSERT_NE(relay.port(), lab_port_.port());
  // The relay carries the agent's stream: without it the agent is cut off, with it again it is back.
  StopRelay(socat);
  ASSERT_TRUE(WaitOnline("HOSTA-0001", false)) << Logs();
  Run(a[0], relay.port());
  EXPECT_TRUE(WaitOnline("HOSTA-0001", true)) << Logs();

  // (b) the USB host's own server on the lab's database.
  testing::LoopbackPortReservation usb_server;
  UsbHost("host-b", "HOSTB-0001");
  for (const std::string& line : Block(blocks_, "(b)")) Run(line, usb_server.port());
  ASSERT_TRUE(WaitOnline("HOSTB-0001", true)) << Logs();
  // Each server holds its own agents, and each lists both.
  EXPECT_EQ(ServerOf(LabDevice("HOSTB-0001")), "usb-host-3");
  EXPECT_EQ(ServerOf(LabDevice("HOSTA-0001")), "lab");
  const std::string at_usb_host = Run("memfleet --server 127.0.0.1:7070 --json devices", usb_server.port());
  EXPECT_EQ(ServerOf(DeviceIn(at_usb_host, "HOSTA-0001")), "lab") << at_usb_host;
  EXPECT_EQ(ServerOf(DeviceIn(at_usb_host, "HOSTB-0001")), "usb-host-3") << at_usb_host;
  EXPECT_TRUE(DeviceIn(at_usb_host, "HOSTA-0001").value("online", false)) << at_usb_host;
  EXPECT_EQ(testing::ReadFileForTest(PhoneFile("HOSTB-0001", "reverse")),
            absl::StrCat("tcp:", usb_server.port(), "\n"));

  // (c) the phone dials the lab server itself: no tunnel.
  UsbHost("host-c", "LAN-0001");
  for (const std::string& line : Block(blocks_, "(c)")) Run(line, 0);
  ASSERT_TRUE(WaitOnline("LAN-0001", true)) << Logs();
  EXPECT_EQ(testing::ReadFileForTest(PhoneFile("LAN-0001", "reverse")), "");
  EXPECT_TRUE(absl::StrContains(testing::ReadFileForTest(PhoneFile("LAN-0001", "data/local/tmp/memfleet/agent.conf")),
                                "server=" + lab_port_.address() + "\n"));
  EXPECT_EQ(ServerOf(LabDevice("LAN-0001")), "lab");

  // The whole farm from the lab server and from the USB host's own server, as the page's last block
  // prints it.
  const std::vector<std::string> farm = Block(blocks_, "the whole farm");
  ASSERT_EQ(farm.size(), 2u);
  for (const std::string& table : {Run(farm[0], 0), Run(farm[1], usb_server.port())}) {
    for (const char* phone : {"HOSTA-0001", "HOSTB-0001", "LAN-0001"}) {
      EXPECT_TRUE(absl::StrContains(table, phone)) << table;
    }
    EXPECT_TRUE(absl::StrContains(table, "3 devices, 3 online")) << table;
  }
}

}  // namespace
}  // namespace deploy_topologies_scenario
}  // namespace memfleet
