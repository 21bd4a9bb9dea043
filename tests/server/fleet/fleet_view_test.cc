// Two real LabServers on one database of a real PostgreSQL (tests/support/postgres_server.h), as two lab
// servers of one fleet: an agent streams to each, and both servers' `memfleet devices` answer, /metrics
// (over HTTP) and dashboard fleet page show both agents online, and the agent streams either refused are
// counted in both servers' `devices`. A server that starts leaves the sweep another live server runs to it
// (which then finishes it), and closes the sweeps of servers no longer alive.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "selector/selector.h"
#include "server/lab_server.h"
#include "storage/fleet_store.h"
#include "tests/support/http_get.h"
#include "tests/support/postgres_server.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/raw_agent.h"
#include "tests/support/wait_for.h"

namespace memfleet::server {
namespace fleet_view_test {
namespace {

using namespace std::chrono_literals;

constexpr char kDeviceOfA[] = "sim-a-101";
constexpr char kDeviceOfB[] = "sim-b-201";

LabServerOptions ServerOptions(const std::string& uri, const std::string& server_id) {
  LabServerOptions options;
  options.fleet.heartbeat_period = 100ms;  // what a server refused reaches the others' within a tenth of a second
  options.db_path = uri;
  options.listen = "127.0.0.1:0";
  options.http.listen = "127.0.0.1:0";
  options.dashboard = true;
  options.fleet.server_id = server_id;
  return options;
}

std::unique_ptr<LabServer> StartServer(const std::string& uri, const std::string& server_id) {
  absl::StatusOr<std::unique_ptr<LabServer>> s = LabServer::Start(ServerOptions(uri, server_id));
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

std::string Target(const LabServer& server) { return absl::StrCat("127.0.0.1:", server.port()); }

int HttpPort(const LabServer& server) {
  const std::string address = server.http_address();
  return std::atoi(address.substr(address.rfind(':') + 1).c_str());
}

// `memfleet devices` of `server`: device id -> (online, server id).
std::map<std::string, std::pair<bool, std::string>> Devices(const LabServer& server) {
  auto stub = v1::QueryService::NewStub(grpc::CreateChannel(Target(server), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  v1::ListDevicesResponse response;
  grpc::Status s = stub->ListDevices(&ctx, v1::ListDevicesRequest(), &response);
  EXPECT_TRUE(s.ok()) << s.error_message();
  std::map<std::string, std::pair<bool, std::string>> devices;
  for (const v1::DeviceSummary& d : response.devices()) devices[d.device_id()] = {d.online(), d.server_id()};
  return devices;
}

// The device's summary in `memfleet devices` of `server` (empty when it is not listed).
v1::DeviceSummary Summary(const LabServer& server, const std::string& device_id) {
  auto stub = v1::QueryService::NewStub(grpc::CreateChannel(Target(server), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  v1::ListDevicesResponse response;
  grpc::Status s = stub->ListDevices(&ctx, v1::ListDevicesRequest(), &response);
  EXPECT_TRUE(s.ok()) << s.error_message();
  for (const v1::DeviceSummary& d : response.devices()) {
    if (d.device_id() == device_id) return d;
  }
  return v1::DeviceSummary();
}

// memfleet_device_up of the device on `server`'s GET /metrics; nullopt when it has no such sample.
std::optional<double> Up(const LabServer& server, const std::string& device_id) {
  testing::HttpReply reply = testing::HttpGet("127.0.0.1", HttpPort(server), "/metrics");
  EXPECT_EQ(reply.status, 200) << reply.error << reply.body;
  return testing::FindSample(testing::ParsePrometheusText(reply.body), "memfleet_device_up",
                             {{"device_id", device_id}});
}

// The state the dashboard's fleet page (GET /) of `server` shows for the device: "online", "offline", or ""
// when the page has no row for it.
std::string DashboardState(const LabServer& server, const std::string& device_id) {
  testing::HttpReply reply = testing::HttpGet("127.0.0.1", HttpPort(server), "/");
  EXPECT_EQ(reply.status, 200) << reply.error << reply.body;
  const std::string cell = absl::StrCat("\">", device_id, "</a></td><td class=\"");
  const size_t at = reply.body.find(cell);
  if (at == std::string::npos) return "";
  const size_t start = at + cell.size();
  return reply.body.substr(start, reply.body.find('"', start) - start);
}

TEST(FleetViewTest, BothServersShowEveryAgentOnlineInDevicesMetricsAndTheDashboard) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  std::unique_ptr<LabServer> a = StartServer(uri, "lab-a");
  ASSERT_NE(a, nullptr);
  std::unique_ptr<LabServer> b = StartServer(uri, "lab-b");
  ASSERT_NE(b, nullptr);
  testing::RawAgent agent_of_a(Target(*a));
  ASSERT_TRUE(agent_of_a.Hello(kDeviceOfA));
  testing::RawAgent agent_of_b(Target(*b));
  ASSERT_TRUE(agent_of_b.Hello(kDeviceOfB));
  const std::map<std::string, std::pair<bool, std::string>> expected = {{kDeviceOfA, {true, "lab-a"}},
                                                                        {kDeviceOfB, {true, "lab-b"}}};
  // Each Hello is recorded (device row, session row) as its stream registers: both servers then agree.
  ASSERT_TRUE(testing::WaitFor([&] { return Devices(*a) == expected && Devices(*b) == expected; }, 30s));

  for (LabServer* server : {a.get(), b.get()}) {
    SCOPED_TRACE(server == a.get() ? "server lab-a" : "server lab-b");
    EXPECT_EQ(Up(*server, kDeviceOfA), 1.0);
    EXPECT_EQ(Up(*server, kDeviceOfB), 1.0);
    EXPECT_EQ(DashboardState(*server, kDeviceOfA), "online");
    EXPECT_EQ(DashboardState(*server, kDeviceOfB), "online");
  }

  // B's agent leaves: its session row goes at once, and A's views say so as B's do.
  agent_of_b.Close();
  ASSERT_TRUE(testing::WaitFor([&] { return !Devices(*a)[kDeviceOfB].first; }, 30s));
  for (LabServer* server : {a.get(), b.get()}) {
    SCOPED_TRACE(server == a.get() ? "server lab-a" : "server lab-b");
    EXPECT_EQ(Devices(*server)[kDeviceOfB], std::make_pair(false, std::string()));
    EXPECT_EQ(Up(*server, kDeviceOfA), 1.0);
    EXPECT_EQ(Up(*server, kDeviceOfB), 0.0);
    EXPECT_EQ(DashboardState(*server, kDeviceOfA), "online");
    EXPECT_EQ(DashboardState(*server, kDeviceOfB), "offline");
  }
}

TEST(FleetViewTest, TheStreamsOneServerRefusedCountInEveryServersDevices) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  std::unique_ptr<LabServer> a = StartServer(uri, "lab-a");
  ASSERT_NE(a, nullptr);
  std::unique_ptr<LabServer> b = StartServer(uri, "lab-b");
  ASSERT_NE(b, nullptr);
  testing::RawAgent first(Target(*b));
  ASSERT_TRUE(first.Hello(kDeviceOfB, "Pixel 8"));
  // Another phone configured with the same device id: refused by B, twice.
  for (int i = 0; i < 2; ++i) {
    testing::RawAgent second(Target(*b));
    EXPECT_FALSE(second.Hello(kDeviceOfB, "Xiaomi 12"));
  }
  ASSERT_EQ(Summary(*b, kDeviceOfB).refused_streams(), 2u);
  // A counts B's refusals once B's next heartbeat has written them.
  ASSERT_TRUE(testing::WaitFor([&] { return Summary(*a, kDeviceOfB).refused_streams() == 2; }, 30s));
  const v1::DeviceSummary seen_by_a = Summary(*a, kDeviceOfB);
  EXPECT_NE(seen_by_a.refused_stream_facts().find("Xiaomi 12"), std::string::npos) << seen_by_a.refused_stream_facts();

  // And the other way: what A refused, B counts.
  testing::RawAgent on_a(Target(*a));
  ASSERT_TRUE(on_a.Hello(kDeviceOfA, "Pixel 8"));
  testing::RawAgent refused_by_a(Target(*a));
  EXPECT_FALSE(refused_by_a.Hello(kDeviceOfA, "Xiaomi 12"));
  ASSERT_TRUE(testing::WaitFor([&] { return Summary(*b, kDeviceOfA).refused_streams() == 1; }, 30s));
  EXPECT_EQ(Summary(*b, kDeviceOfB).refused_streams(), 2u);
  EXPECT_EQ(Summary(*a, kDeviceOfA).refused_streams(), 1u);
}

TEST(FleetViewTest, AServerThatStartsLeavesALiveServersSweepRunningAndClosesADeadServersOnes) {
  const std::string uri = testing::NewPostgresDatabase();
  ASSERT_FALSE(uri.empty());
  std::unique_ptr<LabServer> a = StartServer(uri, "lab-a");
  ASSERT_NE(a, nullptr);
  // A sweep left by a server that died: it never wrote a heartbeat; one by a server whose heartbeat is
  // long stale.
  storage::FleetStore* fleet = a->store().fleet();
  ASSERT_NE(fleet, nullptr);
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  ASSERT_TRUE(fleet->PutServerHeartbeat("lab-stale", now_ms - 3'600'000).ok());
  for (const char* server_id : {"lab-gone", "lab-stale"}) {
    storage::SweepRecord left;
    left.sweep_id = absl::StrCat("sweep-of-", server_id);
    left.started_at = "2026-12-06T08:00:00Z";
    left.server_id = server_id;
    left.states = {{"sim-x-1", "sent"}, {"sim-x-2", "stored"}};
    ASSERT_TRUE(a->store().PutSweep(left).ok());
  }

  testing::RawAgent agent(Target(*a));
  ASSERT_TRUE(agent.Hello(kDeviceOfA));
  ASSERT_TRUE(testing::WaitFor([&] { return a->registry().IsOnline(kDeviceOfA); }, 30s));
  absl::StatusOr<selector::Selector> all = selector::Selector::Parse({});
  ASSERT_TRUE(all.ok()) << all.status();
  absl::StatusOr<std::string> running = a->sweeps().StartSweep(*all, 30min);
  ASSERT_TRUE(running.ok()) << running.status();
  std::optional<v1::ServerMessage> command = agent.Read();
  while (command.has_value() && !command->has_capture_now()) command = agent.Read();
  ASSERT_TRUE(command.has_value());
  EXPECT_EQ(command->capture_now().sweep_id(), *running);

  std::unique_ptr<LabServer> b = StartServer(uri, "lab-b");
  ASSERT_NE(b, nullptr);
  absl::StatusOr<std::optional<storage::SweepRecord>> of_a = b->store().GetSweep(*running);
  ASSERT_TRUE(of_a.ok() && of_a->has_value()) << of_a.status();
  EXPECT_EQ((*of_a)->server_id, "lab-a");
  EXPECT_EQ((*of_a)->finished_at, "") << "server lab-b closed the sweep server lab-a runs";
  EXPECT_EQ((*of_a)->states[kDeviceOfA], "sent");
  for (const char* server_id : {"lab-gone", "lab-stale"}) {
    SCOPED_TRACE(server_id);
    absl::StatusOr<std::optional<storage::SweepRecord>> left =
        b->store().GetSweep(absl::StrCat("sweep-of-", server_id));
    ASSERT_TRUE(left.ok() && left->has_value()) << left.status();
    EXPECT_NE((*left)->finished_at, "");
    EXPECT_EQ((*left)->states["sim-x-1"], "interrupted");
    EXPECT_EQ((*left)->states["sim-x-2"], "stored");
  }

  // A still runs its sweep: its agent leaving fails the device there, which finishes the sweep.
  agent.Close();
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        absl::StatusOr<std::optional<storage::SweepRecord>> r = b->store().GetSweep(*running);
        return r.ok() && r->has_value() && !(*r)->finished_at.empty();
      },
      30s));
  absl::StatusOr<std::optional<storage::SweepRecord>> finished = b->store().GetSweep(*running);
  ASSERT_TRUE(finished.ok() && finished->has_value());
  EXPECT_EQ((*finished)->states[kDeviceOfA], "failed");
}

}  // namespace
}  // namespace fleet_view_test
}  // namespace memfleet::server
