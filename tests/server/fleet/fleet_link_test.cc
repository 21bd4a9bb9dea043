// FleetLink on a real PostgreSQL (tests/support/postgres_server.h): two "servers" — each a store, an
// AgentRegistry, a FleetLink and a SweepCoordinator, as LabServer wires them — on one database. Session
// rows make each server's agents visible to the other until their heartbeats go stale; a sweep started on
// one reaches the agents of the other, whose progress (stored with its capture id and labels, failed on a
// disconnect) comes back to the sweep.
#include "server/fleet/fleet_link.h"

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/fleet/agent_registry.h"
#include "selector/selector.h"
#include "server/fleet/sweep_coordinator.h"
#include "storage/postgres/pg_store.h"
#include "tests/support/manual_clock.h"
#include "tests/support/postgres_server.h"

namespace memfleet::server {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// The CaptureNow sweep ids an agent's stream received.
class SweepIdSink : public MessageSink {
 public:
  explicit SweepIdSink(std::shared_ptr<std::vector<std::string>> ids, std::shared_ptr<std::mutex> mu)
      : ids_(std::move(ids)), mu_(std::move(mu)) {}
  bool Write(const v1::ServerMessage& m) override {
    std::lock_guard<std::mutex> lock(*mu_);
    if (m.has_capture_now()) {
      ids_->push_back(m.capture_now().sweep_id() + (m.capture_now().full_smaps() ? ":full-smaps" : ""));
    }
    return true;
  }
  void Cancel() override {}

 private:
  std::shared_ptr<std::vector<std::string>> ids_;
  std::shared_ptr<std::mutex> mu_;
};

// One server of the fleet.
struct Server {
  Server(const std::string& uri, const std::string& id, FleetLinkOptions options) {
    absl::StatusOr<std::unique_ptr<storage::SqlStore>> opened = storage::OpenPgStore(uri);
    EXPECT_TRUE(opened.ok()) << opened.status();
    if (!opened.ok()) return;
    store = *std::move(opened);
    options.server_id = id;
    fleet = std::make_unique<FleetLink>(*store, registry, options);
    registry.AddListener(fleet.get());
    SweepCoordinator::Options sweep_options;
    sweep_options.relayer = fleet.get();
    sweeps = std::make_unique<SweepCoordinator>(*store, registry, sweep_options);
    registry.AddListener(sweeps.get());
    fleet->Start(*sweeps);
  }
  ~Server() {
    if (fleet != nullptr) fleet->Stop();
    if (sweeps != nullptr) sweeps->Shutdown();
  }

  // An agent connects; the sweep ids its stream receives go to `received`.
  std::shared_ptr<AgentSession> Connect(const std::string& device_id, const std::string& model) {
    v1::DeviceInfo info;
    info.set_device_id(device_id);
    info.set_model(model);
    auto session = std::make_shared<AgentSession>(info, "2026-12-04T10:00:00Z",
                                                  std::make_unique<SweepIdSink>(received[device_id], received_mu));
    EXPECT_TRUE(registry.Register(session).ok());
    return session;
  }

  std::vector<std::string> Received(const std::string& device_id) {
    std::lock_guard<std::mutex> lock(*received_mu);
    return *received[device_id];
  }

  std::unique_ptr<storage::SqlStore> store;
  AgentRegistry registry;
  std::unique_ptr<FleetLink> fleet;
  std::unique_ptr<SweepCoordinator> sweeps;
  std::shared_ptr<std::mutex> received_mu = std::make_shared<std::mutex>();
  std::map<std::string, std::shared_ptr<std::vector<std::string>>> received = {
      {"dev-1", std::make_shared<std::vector<std::string>>()}, {"dev-2", std::make_shared<std::vector<std::string>>()}};
};

std::map<std::string, std::string> Online(Server& server) {
  absl::StatusOr<std::map<std::string, std::string>> online = server.fleet->OnlineServers();
  EXPECT_TRUE(online.ok()) << online.status();
  return online.ok() ? *online : std::map<std::string, std::string>();
}

TEST(FleetLinkTest, EachServerSeesTheOthersAgentsUntilTheirHeartbeatsGoStale) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  testing::ManualSteadyClock clock;  // heartbeat periods pass only when the test says
  std::atomic<int64_t> wall_ms{1'800'000'000'000};
  FleetLinkOptions options;
  options.clock = &clock;
  options.wall_now_ms = [&wall_ms] { return wall_ms.load(); };
  options.heartbeat_period = 10s;
  options.session_timeout = 30s;
  Server a(uri, "lab-a", options);
  Server b(uri, "lab-b", options);
  ASSERT_NE(a.fleet, nullptr);
  ASSERT_NE(b.fleet, nullptr);
  std::shared_ptr<AgentSession> one = a.Connect("dev-1", "Pixel 8");
  b.Connect("dev-2", "Xiaomi 12");
  EXPECT_THAT(Online(a), ElementsAre(Pair("dev-1", "lab-a"), Pair("dev-2", "lab-b")));
  EXPECT_THAT(Online(b), ElementsAre(Pair("dev-1", "lab-a"), Pair("dev-2", "lab-b")));

  // 31 s without a heartbeat: each server's own agent stays (its registry says so), the other's is stale.
  wall_ms += 31'000;
  EXPECT_THAT(Online(a), ElementsAre(Pair("dev-1", "lab-a")));
  EXPECT_THAT(Online(b), ElementsAre(Pair("dev-2", "lab-b")));
  // A heartbeat period later each server has refreshed its sessions at the new time (Advance returns once
  // the heartbeats have run).
  clock.Advance(10s - 1ms);
  EXPECT_THAT(Online(a), ElementsAre(Pair("dev-1", "lab-a")));
  clock.Advance(1ms);
  EXPECT_THAT(Online(a), ElementsAre(Pair("dev-1", "lab-a"), Pair("dev-2", "lab-b")));
  EXPECT_THAT(Online(b), ElementsAre(Pair("dev-1", "lab-a"), Pair("dev-2", "lab-b")));

  // A disconnect removes the row at once, with no timeout to wait for.
  a.registry.Unregister(one);
  EXPECT_THAT(Online(b), ElementsAre(Pair("dev-2", "lab-b")));
}

TEST(FleetLinkTest, ASweepReachesTheOtherServersAgentsAndTheirProgressComesBack) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  testing::ManualSteadyClock clock;  // each relay poll runs when the test moves it
  FleetLinkOptions options;
  options.clock = &clock;
  options.relay_poll_period = 500ms;
  Server a(uri, "lab-a", options);
  Server b(uri, "lab-b", options);
  ASSERT_NE(a.fleet, nullptr);
  ASSERT_NE(b.fleet, nullptr);
  b.Connect("dev-1", "Pixel 8");
  std::shared_ptr<AgentSession> two = b.Connect("dev-2", "Pixel 8");

  absl::StatusOr<selector::Selector> all = selector::Selector::Parse({"model=Pixel 8"});
  ASSERT_TRUE(all.ok());
  absl::StatusOr<std::string> id = a.sweeps->StartSweep(*all, 60s, {{"run", "42"}}, /*full_smaps=*/true);
  ASSERT_TRUE(id.ok()) << id.status();
  // lab-b's next poll takes the relays and sends the command down its agents' streams.
  clock.Advance(500ms);
  // The relayed command keeps the sweep's --full-smaps.
  EXPECT_THAT(b.Received("dev-1"), ElementsAre(*id + ":full-smaps"));
  EXPECT_THAT(b.Received("dev-2"), ElementsAre(*id + ":full-smaps"));
  // The captures the command brings carry the sweep's labels on the server that stores them.
  EXPECT_THAT(b.sweeps->LabelsFor(*id, "dev-1"), ElementsAre(Pair("run", "42")));
  // Only the first capture of a device the relayed command reached answers it on the server storing it.
  EXPECT_TRUE(b.sweeps->ClaimAnswer(*id, "dev-1", "cap-1"));
  EXPECT_FALSE(b.sweeps->ClaimAnswer(*id, "dev-1", "cap-2"));
  EXPECT_FALSE(b.sweeps->IsAnswer(*id, "dev-3", "cap-3"));
  EXPECT_FALSE(a.sweeps->ClaimAnswer(*id, "dev-3", "cap-3"));  // the starting server's sweep did not ask it
  b.sweeps->OnCapturing(*id, "dev-1", "cap-1");
  b.sweeps->OnStored(*id, "dev-1", "cap-1");
  b.registry.Unregister(two);  // dev-2's agent goes away before capturing

  // lab-a's next poll reads their progress back, which ends the sweep.
  clock.Advance(500ms);
  absl::StatusOr<SweepUpdate> u = a.sweeps->WaitForProgress(*id, 0, 0ms);
  ASSERT_TRUE(u.ok()) << u.status();
  ASSERT_TRUE(u->finished);
  std::map<std::string, SweepEvent> last;
  for (const SweepEvent& e : u->events) last[e.device_id] = e;
  EXPECT_EQ(last["dev-1"].state, SweepState::kStored);
  EXPECT_EQ(last["dev-1"].capture_id, "cap-1");
  EXPECT_EQ(last["dev-2"].state, SweepState::kFailed);
  EXPECT_THAT(last["dev-2"].message, HasSubstr("agent disconnected"));
  absl::StatusOr<std::optional<storage::SweepRecord>> record = a.store->GetSweep(*id);
  ASSERT_TRUE(record.ok() && record->has_value()) << record.status();
  EXPECT_THAT((*record)->states, ElementsAre(Pair("dev-1", "stored"), Pair("dev-2", "failed")));
}

}  // namespace
}  // namespace memfleet::server
