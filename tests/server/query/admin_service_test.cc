// AdminService/RetireDevice on a real LabServer: refused while the device's agent is connected — to this
// server, or to another server of the same PostgreSQL database — and for an unknown device; once retired
// the device leaves ListDevices (unless asked for the retired ones) and GetFleet, its report is still read
// by id, and its agent's next Hello makes it active again. Purging deletes it.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "memfleet/v1/query_service.grpc.pb.h"
#include "report/report_json.h"
#include "server/lab_server.h"
#include "server/security/token_admin.h"
#include "storage/backends/open_store.h"
#include "storage/store.h"
#include "tests/support/agent_ledger.h"
#include "tests/support/postgres_server.h"
#include "tests/support/raw_agent.h"
#include "tests/support/test_server.h"

namespace memfleet {
namespace {

using testing::TestServer;

std::unique_ptr<grpc::ClientContext> Context() {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  return c;
}

storage::CaptureRecord CaptureOf(const std::string& device_id, int64_t total_kb) {
  storage::CaptureRecord c;
  c.device_id = device_id;
  c.capture_id = device_id + "-20261130T080000Z-1";
  c.captured_at = "2026-11-30T08:00:00Z";
  c.raw_codec = "zstd+proto";
  c.raw_blob = "raw";
  c.report.platform = report::Platform::kQcom;
  c.report.device_id = device_id;
  c.report.captured_at = c.captured_at;
  c.report.device.total_kb = total_kb;
  c.report_json = report::ReportToJson(c.report, -1);
  return c;
}

class RetireDeviceTest : public ::testing::Test {
 protected:
  void Start(server::LabServerOptions options = {}) {
    absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start(options);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    auto channel = grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials());
    admin_ = v1::AdminService::NewStub(channel);
    query_ = v1::QueryService::NewStub(channel);
    for (const auto& [id, total] : {std::pair{"gone-1", 3'000'000}, std::pair{"stays-1", 4'000'000}}) {
      storage::DeviceRecord d;
      d.device_id = id;
      d.model = "Pixel 8";
      d.last_seen_at = "2026-11-30T08:00:00Z";
      ASSERT_TRUE(server_->store().UpsertDevice(d).ok());
      absl::StatusOr<bool> stored = server_->store().PutCapture(CaptureOf(id, total));
      ASSERT_TRUE(stored.ok() && *stored) << stored.status();
    }
  }

  grpc::Status Retire(const std::string& device_id, bool purge, v1::RetireDeviceResponse* response) {
    v1::RetireDeviceRequest request;
    request.set_device_id(device_id);
    request.set_purge(purge);
    return admin_->RetireDevice(Context().get(), request, response);
  }

  std::vector<std::string> Listed(bool retired) {
    v1::ListDevicesRequest request;
    request.set_retired(retired);
    v1::ListDevicesResponse response;
    grpc::Status s = query_->ListDevices(Context().get(), request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::vector<std::string> ids;
    for (const v1::DeviceSummary& d : response.devices()) ids.push_back(d.device_id());
    return ids;
  }

  std::vector<std::string> FleetRows() {
    v1::FleetRequest request;
    v1::FleetResponse response;
    grpc::Status s = query_->GetFleet(Context().get(), request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::vector<std::string> ids;
    for (const v1::FleetRow& r : response.rows()) ids.push_back(r.device_id());
    return ids;
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<v1::AdminService::Stub> admin_;
  std::unique_ptr<v1::QueryService::Stub> query_;
};

TEST_F(RetireDeviceTest, LeavesTheListsWhileItsHistoryStaysAndItsAgentBringsItBack) {
  Start();
  v1::RetireDeviceResponse retired;
  {
    testing::RawAgent agent(server_->target());
    ASSERT_TRUE(agent.Hello("gone-1"));
    grpc::Status online = Retire("gone-1", false, &retired);
    EXPECT_EQ(online.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << online.error_message();
    EXPECT_NE(online.error_message().find("stop its agent first"), std::string::npos) << online.error_message();
  }
  ASSERT_TRUE(
      testing::WaitFor([&] { return !server_->server().registry().IsOnline("gone-1"); }, std::chrono::seconds(30)));
  grpc::Status s = Retire("gone-1", false, &retired);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(retired.retired_at().empty());
  EXPECT_FALSE(retired.purged());
  EXPECT_EQ(Retire("no-such-phone", false, &retired).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Retire("bad id with spaces", false, &retired).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  EXPECT_EQ(Listed(false), std::vector<std::string>{"stays-1"});
  EXPECT_EQ(Listed(true), std::vector<std::string>{"gone-1"});
  EXPECT_EQ(FleetRows(), std::vector<std::string>{"stays-1"});
  v1::GetReportRequest by_id;
  by_id.set_device_id("gone-1");
  v1::GetReportResponse report;
  s = query_->GetReport(Context().get(), by_id, &report);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(report.capture_id(), "gone-1-20261130T080000Z-1");

  testing::RawAgent back(server_->target());
  ASSERT_TRUE(back.Hello("gone-1"));
  EXPECT_EQ(Listed(false), (std::vector<std::string>{"gone-1", "stays-1"}));
  EXPECT_TRUE(Listed(true).empty());
  EXPECT_EQ(FleetRows(), (std::vector<std::string>{"stays-1", "gone-1"}));  // largest total first
}

TEST_F(RetireDeviceTest, PurgeDeletesTheDeviceAndItsHistory) {
  Start();
  v1::RetireDeviceResponse purged;
  grpc::Status s = Retire("gone-1", true, &purged);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(purged.purged());
  EXPECT_EQ(purged.captures_deleted(), 1u);
  EXPECT_TRUE(Listed(true).empty());
  EXPECT_EQ(Listed(false), std::vector<std::string>{"stays-1"});
  v1::GetReportRequest by_id;
  by_id.set_device_id("gone-1");
  v1::GetReportResponse report;
  EXPECT_EQ(query_->GetReport(Context().get(), by_id, &report).error_code(), grpc::StatusCode::NOT_FOUND);
}

// A retired phone may not stream again on the token it holds: every valid agent token bound to the device is
// revoked, and no other device's, read or admin token is.
TEST_F(RetireDeviceTest, RevokesTheDevicesAgentTokensAndNoOthers) {
  Start();
  storage::Store& store = server_->store();
  const std::string now = "2026-11-30T09:00:00Z";
  absl::StatusOr<std::string> admin = security::AddToken(store, {"farm-admin", security::TokenKind::kAdmin, ""}, now);
  absl::StatusOr<std::string> reader = security::AddToken(store, {"reader", security::TokenKind::kRead, ""}, now);
  absl::StatusOr<std::string> gone =
      security::AddToken(store, {"agent-gone-1", security::TokenKind::kAgent, "gone-1"}, now);
  absl::StatusOr<std::string> spare =
      security::AddToken(store, {"bench-gone", security::TokenKind::kAgent, "gone-1"}, now);
  absl::StatusOr<std::string> old =
      security::AddToken(store, {"agent-gone-1-old", security::TokenKind::kAgent, "gone-1"}, now);
  absl::StatusOr<std::string> stays =
      security::AddToken(store, {"agent-stays-1", security::TokenKind::kAgent, "stays-1"}, now);
  for (const auto* t : {&admin, &reader, &gone, &spare, &old, &stays}) ASSERT_TRUE(t->ok()) << t->status();
  ASSERT_TRUE(security::RevokeToken(store, "agent-gone-1-old", now).ok());
  {
    // Before: its token streams.
    testing::RawAgent agent(server_->target(), grpc::InsecureChannelCredentials(), *gone);
    ASSERT_TRUE(agent.Hello("gone-1"));
  }
  ASSERT_TRUE(
      testing::WaitFor([&] { return !server_->server().registry().IsOnline("gone-1"); }, std::chrono::seconds(30)));

  v1::RetireDeviceRequest request;
  request.set_device_id("gone-1");
  v1::RetireDeviceResponse retired;
  grpc::ClientContext as_admin;
  as_admin.AddMetadata("authorization", "Bearer " + *admin);
  grpc::Status s = admin_->RetireDevice(&as_admin, request, &retired);
  ASSERT_TRUE(s.ok()) << s.error_message();
  // The already revoked one is not revoked again; names in name order.
  EXPECT_EQ(std::vector<std::string>(retired.revoked_token_names().begin(), retired.revoked_token_names().end()),
            (std::vector<std::string>{"agent-gone-1", "bench-gone"}));

  absl::StatusOr<std::vector<storage::TokenRecord>> tokens = store.ListTokens();
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  std::vector<std::string> valid;
  for (const storage::TokenRecord& t : *tokens) {
    if (t.revoked_at.empty()) valid.push_back(t.name);
    if (t.name == "agent-gone-1-old") {
      EXPECT_EQ(t.revoked_at.substr(0, 10), "2026-11-30") << "kept its first revocation";
    }
  }
  EXPECT_EQ(valid, (std::vector<std::string>{"agent-stays-1", "farm-admin", "reader"}));
  for (const std::string* secret : {&*gone, &*spare}) {
    testing::RawAgent refused(server_->target(), grpc::InsecureChannelCredentials(), *secret);
    EXPECT_FALSE(refused.Hello("gone-1"));
    EXPECT_EQ(refused.Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  testing::RawAgent other(server_->target(), grpc::InsecureChannelCredentials(), *stays);
  EXPECT_TRUE(other.Hello("stays-1"));
}

// Servers sharing a PostgreSQL database: a device whose agent another server holds (its session row, with
// a fresh heartbeat) is online for this one too.
TEST_F(RetireDeviceTest, AnAgentHeldByAnotherServerOfTheDatabaseBlocksIt) {
  const std::string db = testing::NewPostgresDatabase();
  ASSERT_FALSE(db.empty());
  absl::StatusOr<std::unique_ptr<storage::Store>> other = storage::OpenStore(db);
  ASSERT_TRUE(other.ok()) << other.status();
  server::LabServerOptions options;
  options.fleet.server_id = "lab-a:7070";
  absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::StartWithStore(std::move(*other), options);
  ASSERT_TRUE(s.ok()) << s.status();
  server_ = std::move(*s);
  admin_ = v1::AdminService::NewStub(grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  storage::DeviceRecord d;
  d.device_id = "far-1";
  d.last_seen_at = "2026-11-30T08:00:00Z";
  ASSERT_TRUE(server_->store().UpsertDevice(d).ok());
  absl::StatusOr<std::unique_ptr<storage::Store>> lab_b = storage::OpenStore(db);
  ASSERT_TRUE(lab_b.ok() && (*lab_b)->fleet() != nullptr);
  storage::SessionRecord session;
  session.device_id = "far-1";
  session.server_id = "lab-b:7070";
  session.connected_at = "2026-11-30T08:00:00Z";
  session.heartbeat_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  ASSERT_TRUE((*lab_b)->fleet()->PutSession(session).ok());

  v1::RetireDeviceResponse retired;
  grpc::Status refused = Retire("far-1", false, &retired);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << refused.error_message();
  EXPECT_NE(refused.error_message().find("lab-b:7070"), std::string::npos) << refused.error_message();

  ASSERT_TRUE((*lab_b)->fleet()->DeleteSession("far-1", "lab-b:7070").ok());
  grpc::Status ok = Retire("far-1", false, &retired);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
}

}  // namespace
}  // namespace memfleet
