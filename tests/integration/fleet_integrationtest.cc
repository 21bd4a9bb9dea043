// End to end, several servers as one fleet: two memfleet-server processes on one database of a real
// PostgreSQL (tests/support/postgres_server.h), real memfleet-agent processes on the sample capture trees
// split between them (each told both servers, its own first). `memfleet devices` on either server lists
// every agent online with the server holding it; a sweep started through either server reaches every
// agent, and each report it stored equals its tree's expected.json. When one server dies (SIGKILL), its
// agents fail over to the other, which then holds them all and sweeps them all.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/support/expected_report.h"
#include "tests/support/memfleet_cli.h"
#include "tests/support/postgres_server.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"
#include "tests/support/wait_for.h"

namespace memfleet {
namespace fleet_scenario {
namespace {

using nlohmann::json;
using testing::Bin;
using testing::ServerProcess;
using testing::Subprocess;

// Sample trees (tests/data/captures) and the server each agent prefers.
const std::map<std::string, std::string> kPreferredServer = {
    {"qcom-sm8450", "lab-a"}, {"mtk-mt6989", "lab-a"}, {"qcom-edge", "lab-b"}, {"xring-o1", "lab-b"}};

struct SweepResult {
  std::map<std::string, v1::SweepProgress::State> states;
  std::map<std::string, std::string> capture_ids;  // of the stored ones
  bool finished = false;
};

class FleetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    uri_ = testing::NewPostgresDatabase();
    ASSERT_FALSE(uri_.empty());
    for (const char* name : {"a", "b"}) ASSERT_TRUE(std::filesystem::create_directory(dir_.path() + "/" + name));
    // A heartbeat a second, so a session is stale after 3 s: the test outlives that many times over, and
    // the agents stay online only because their servers keep refreshing them.
    servers_["lab-a"] = std::make_unique<ServerProcess>(
        dir_.path() + "/a", std::vector<std::string>{"--server-id", "lab-a", "--heartbeat-s", "1"}, uri_);
    servers_["lab-b"] = std::make_unique<ServerProcess>(
        dir_.path() + "/b", std::vector<std::string>{"--server-id", "lab-b", "--heartbeat-s", "1"}, uri_);
    for (const auto& [name, server] : servers_) ASSERT_FALSE(server->address().empty()) << name;
    for (const auto& [capture, preferred] : kPreferredServer) {
      const std::string other = preferred == "lab-a" ? "lab-b" : "lab-a";
      agents_.push_back(std::make_unique<Subprocess>(
          std::vector<std::string>{Bin("memfleet-agent"), "--server",
                                   servers_[preferred]->address() + "," + servers_[other]->address(), "--root",
                                   testing::TestData("captures/" + capture + "/tree"), "--device-id", capture,
                                   "--interval", "3600", "--spool", dir_.path() + "/spool-" + capture},
          dir_.path() + "/agent-" + capture + ".log"));
    }
  }

  // `memfleet devices --json` through `server`: device id -> its entry.
  std::map<std::string, json> DevicesCommand(ServerProcess& server) {
    testing::MemfleetCli cli(dir_.path(), {"--server", server.address()}, std::chrono::seconds(60));
    std::map<std::string, json> devices;
    for (const json& d : cli.Json({"devices", "--json"})) devices[d["device_id"].get<std::string>()] = d;
    return devices;
  }

  // Device id -> server id of the online devices, through the query RPC.
  std::map<std::string, std::string> Online(ServerProcess& server) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListDevicesResponse resp;
    grpc::Status s = server.query().ListDevices(&ctx, v1::ListDevicesRequest(), &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::map<std::string, std::string> online;
    for (const v1::DeviceSummary& d : resp.devices()) {
      if (d.online()) online[d.device_id()] = d.server_id();
    }
    return online;
  }

  // Polls until `server` shows exactly `expected` online (device -> server), or two minutes passed.
  bool WaitForOnline(ServerProcess& server, const std::map<std::string, std::string>& expected) {
    return testing::WaitFor([&] { return Online(server) == expected; }, std::chrono::seconds(120),
                            std::chrono::milliseconds(200));
  }

  // A sweep of every device through `server`; `on_progress` sees each progress message as it arrives.
  // Polls until both servers list all four agents online, agree on which server holds each, and each
  // server holds at least one, or two minutes passed; `held_` is then that device -> server map. An agent
  // normally sits on the server it lists first, but under a sanitizer's slowness one may give up on it
  // and settle on its second: what the tests need is agents on both servers and one view of them.
  bool WaitUntilEveryAgentIsOnline() {
    return testing::WaitFor(
        [&] {
          const std::map<std::string, std::string> a = Online(*servers_["lab-a"]);
          std::set<std::string> holders;
          for (const auto& [device, server] : a) holders.insert(server);
          if (a.size() != kPreferredServer.size() || holders.size() != 2 || a != Online(*servers_["lab-b"])) {
            return false;
          }
          held_ = a;
          return true;
        },
        std::chrono::seconds(120), std::chrono::milliseconds(200));
  }

  SweepResult Sweep(ServerProcess& server, uint32_t deadline_s = 90,
                    const std::function<void(const v1::SweepProgress&)>& on_progress = nullptr) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(deadline_s + 30));
    v1::SweepRequest req;
    req.set_deadline_s(deadline_s);
    std::unique_ptr<grpc::ClientReader<v1::SweepProgress>> reader = server.query().StartSweep(&ctx, req);
    SweepResult result;
    v1::SweepProgress p;
    while (reader->Read(&p)) {
      if (on_progress) on_progress(p);
      if (!p.device_id().empty()) result.states[p.device_id()] = p.state();
      if (p.state() == v1::SweepProgress::STORED) result.capture_ids[p.device_id()] = p.capture_id();
      if (p.finished()) result.finished = true;
    }
    grpc::Status s = reader->Finish();
    EXPECT_TRUE(s.ok()) << s.error_message();
    return result;
  }

  // Every device of `kPreferredServer` stored a capture for the sweep whose report equals its expected one,
  // read through `reader`.
  void ExpectSweptEverything(const SweepResult& sweep, ServerProcess& reader) {
    EXPECT_TRUE(sweep.finished);
    for (const auto& [capture, preferred] : kPreferredServer) {
      EXPECT_EQ(sweep.states.count(capture) != 0 ? sweep.states.at(capture) : v1::SweepProgress::STATE_UNSPECIFIED,
                v1::SweepProgress::STORED)
          << capture << "\n--- lab-a ---\n"
          << servers_["lab-a"]->Log() << "\n--- lab-b ---\n"
          << servers_["lab-b"]->Log();
      auto id = sweep.capture_ids.find(capture);
      ASSERT_NE(id, sweep.capture_ids.end()) << capture;
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      v1::GetReportRequest req;
      req.set_capture_id(id->second);
      v1::GetReportResponse resp;
      grpc::Status s = reader.query().GetReport(&ctx, req, &resp);
      ASSERT_TRUE(s.ok()) << capture << ": " << s.error_message();
      EXPECT_EQ(resp.device_id(), capture);
      testing::ExpectReportMatchesExpected(json::parse(resp.report_json()), capture);
    }
  }

  testing::TempDir dir_{"memfleet_fleet_e2e"};
  std::string uri_;
  std::map<std::string, std::unique_ptr<ServerProcess>> servers_;
  std::vector<std::unique_ptr<Subprocess>> agents_;
  std::map<std::string, std::string> held_;  // device -> the server holding it, once all are online
};

TEST_F(FleetTest, DevicesOnEitherServerListEveryAgentWithTheServerHoldingIt) {
  ASSERT_TRUE(WaitUntilEveryAgentIsOnline()) << servers_["lab-a"]->Log() << "\n" << servers_["lab-b"]->Log();
  for (const auto& [name, server] : servers_) {
    std::map<std::string, json> devices = DevicesCommand(*server);
    ASSERT_EQ(devices.size(), kPreferredServer.size()) << name;
    for (const auto& [capture, holder] : held_) {
      EXPECT_EQ(devices[capture]["online"], true) << name << " " << capture;
      EXPECT_EQ(devices[capture]["server"], holder) << name << " " << capture;
    }
    // The table: a SERVER column, each device's row naming its server after "online".
    Subprocess table({Bin("memfleet"), "--server", server->address(), "devices"}, dir_.path() + "/devices.txt");
    ASSERT_EQ(table.WaitExit(std::chrono::seconds(60)), 0) << table.Log();
    const std::string out = table.Log();
    EXPECT_NE(out.find(" SERVER "), std::string::npos) << out;
    for (const auto& [capture, holder] : held_) {
      const size_t row = out.find("\n" + capture + " ");
      ASSERT_NE(row, std::string::npos) << out;
      const std::string line = out.substr(row + 1, out.find('\n', row + 1) - row - 1);
      EXPECT_NE(line.find(" online  " + holder + " "), std::string::npos) << line;
    }
  }
}

TEST_F(FleetTest, SweepThroughEitherServerCoversEveryAgent) {
  ASSERT_TRUE(WaitUntilEveryAgentIsOnline()) << servers_["lab-a"]->Log() << "\n" << servers_["lab-b"]->Log();
  for (const auto& [name, server] : servers_) {
    SCOPED_TRACE("sweep started through " + name);
    ExpectSweptEverything(Sweep(*server), *server);
  }
}

TEST_F(FleetTest, AgentsOfAKilledServerFailOverAndTheOtherSweepsThemAll) {
  ASSERT_TRUE(WaitUntilEveryAgentIsOnline()) << servers_["lab-a"]->Log() << "\n" << servers_["lab-b"]->Log();
  // No goodbye: lab-b's session rows stay until their heartbeat goes stale, or its agents' new streams to
  // lab-a take the rows over.
  servers_["lab-b"]->process().Kill(SIGKILL);
  std::map<std::string, std::string> all_on_a;
  for (const auto& [capture, preferred] : kPreferredServer) all_on_a[capture] = "lab-a";
  ASSERT_TRUE(WaitForOnline(*servers_["lab-a"], all_on_a)) << servers_["lab-a"]->Log();
  ExpectSweptEverything(Sweep(*servers_["lab-a"]), *servers_["lab-a"]);
}

// lab-b dies while a sweep through lab-a waits on lab-b's agents. The sweep still ends (by its deadline at
// the latest): lab-a's own agents are stored, and each of lab-b's is either stored (its capture beat the
// kill or went through lab-a after the failover) or reported failed or timed out, never left pending. After
// the failover, the next sweep through lab-a stores all four.
TEST_F(FleetTest, AServerKilledDuringASweepLeavesNoDeviceHangingAndItsAgentsAreSweptAfterFailover) {
  ASSERT_TRUE(WaitUntilEveryAgentIsOnline()) << servers_["lab-a"]->Log() << "\n" << servers_["lab-b"]->Log();
  bool killed = false;
  const SweepResult during = Sweep(*servers_["lab-a"], 20, [&](const v1::SweepProgress& p) {
    // The first word of the sweep about a device lab-b holds: the relay is written, lab-b may or may not
    // have passed it on yet.
    if (!killed && !p.device_id().empty() && held_.at(p.device_id()) == "lab-b") {
      servers_["lab-b"]->process().Kill(SIGKILL);
      killed = true;
    }
  });
  ASSERT_TRUE(killed);
  EXPECT_TRUE(during.finished);
  for (const auto& [capture, holder] : held_) {
    ASSERT_EQ(during.states.count(capture), 1u) << capture;
    const v1::SweepProgress::State state = during.states.at(capture);
    if (holder == "lab-a") {
      EXPECT_EQ(state, v1::SweepProgress::STORED) << capture << "\n" << servers_["lab-a"]->Log();
    } else {
      EXPECT_TRUE(state == v1::SweepProgress::STORED || state == v1::SweepProgress::FAILED ||
                  state == v1::SweepProgress::TIMED_OUT)
          << capture << ": " << v1::SweepProgress::State_Name(state);
    }
  }
  std::map<std::string, std::string> all_on_a;
  for (const auto& [capture, preferred] : kPreferredServer) all_on_a[capture] = "lab-a";
  ASSERT_TRUE(WaitForOnline(*servers_["lab-a"], all_on_a)) << servers_["lab-a"]->Log();
  ExpectSweptEverything(Sweep(*servers_["lab-a"]), *servers_["lab-a"]);
}

}  // namespace
}  // namespace fleet_scenario
}  // namespace memfleet
