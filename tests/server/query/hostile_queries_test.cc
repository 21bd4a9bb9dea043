// Hostile query inputs (docs/security.md, "Inputs"): what a user or a script could put in
// --where, a metric, a device id, a process name or a time reaches a real LabServer's QueryService; each
// is refused with INVALID_ARGUMENT (or matches nothing) and the database is intact afterwards.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "memfleet/v1/query_service.grpc.pb.h"
#include "storage/store.h"
#include "tests/support/test_server.h"

namespace memfleet {
namespace {

using namespace std::string_literals;
using testing::TestServer;

class HostileQueriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    storage::DeviceRecord d;
    d.device_id = "sim-qcom-101";
    d.model = "Xiaomi 12";
    d.last_seen_at = "2026-11-30T08:00:00Z";
    ASSERT_TRUE(server_->store().UpsertDevice(d).ok());
    stub_ = v1::QueryService::NewStub(grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  }

  std::unique_ptr<grpc::ClientContext> Context() {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    return c;
  }

  grpc::Status ListWhere(const std::vector<std::string>& where, v1::ListDevicesResponse* out = nullptr) {
    v1::ListDevicesRequest request;
    for (const std::string& w : where) request.mutable_selector()->add_where(w);
    v1::ListDevicesResponse response;
    grpc::Status s = stub_->ListDevices(Context().get(), request, &response);
    if (out != nullptr) *out = response;
    return s;
  }

  // The store still answers and still holds the one device.
  void ExpectIntact() {
    v1::ListDevicesResponse all;
    ASSERT_TRUE(ListWhere({}, &all).ok());
    ASSERT_EQ(all.devices_size(), 1);
    EXPECT_EQ(all.devices(0).device_id(), "sim-qcom-101");
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<v1::QueryService::Stub> stub_;
};

TEST_F(HostileQueriesTest, HostileWhereTermsAreRefusedOrMatchNothing) {
  for (const std::string& bad :
       {"model"s, "=x"s, "model=="s + "", "colour=red"s, "model="s, "model=x\ny"s, "model=Xiaomi 12\r"s, "model=\0x"s,
        "model=x\x1b[2J"s, "MODEL=x"s, "model=" + std::string(600, 'a'), "device_id=..\n/etc"s}) {
    grpc::Status s = ListWhere({bad});
    if (bad == "model==") {
      // "model" = "=": a legal value that matches nothing.
      EXPECT_TRUE(s.ok()) << s.error_message();
      continue;
    }
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad;
    EXPECT_LT(s.error_message().size(), 400u) << bad;  // echoed shortened, never whole
    EXPECT_EQ(s.error_message().find('\n'), std::string::npos) << bad;
  }
  // SQL in a value is only ever a value: it matches nothing and drops nothing.
  for (const std::string& sql :
       {"model='; DROP TABLE devices; --"s, "model=x' OR '1'='1"s, "device_id=%"s, "model=*' OR 1=1 --"s}) {
    v1::ListDevicesResponse r;
    ASSERT_TRUE(ListWhere({sql}, &r).ok()) << sql;
    EXPECT_EQ(r.devices_size(), 0) << sql;
  }
  std::vector<std::string> many(33, "model=Xiaomi 12");  // kMaxTerms is 32
  EXPECT_EQ(ListWhere(many).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  ExpectIntact();
}

TEST_F(HostileQueriesTest, HostileIdsMetricsNamesAndTimesAreInvalidArgument) {
  for (const std::string& id : {"../../etc/shadow"s, "/etc/passwd"s, "a b"s, "x\n"s, "x\0y"s, std::string(200, 'a'),
                                "sim-qcom-101' OR '1'='1"s}) {
    v1::GetReportRequest request;
    request.set_device_id(id);
    v1::GetReportResponse response;
    EXPECT_EQ(stub_->GetReport(Context().get(), request, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << id;
  }
  for (const std::string& at :
       {"yesterday"s, "2026-13-01T00:00:00Z"s, "2026-11-30T08:00:00Z; DROP TABLE x"s, std::string(100, '9')}) {
    v1::GetReportRequest request;
    request.set_device_id("sim-qcom-101");
    request.set_at(at);
    v1::GetReportResponse response;
    EXPECT_EQ(stub_->GetReport(Context().get(), request, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << at;
  }
  for (const std::string& metric : {"total_kb; DROP TABLE process_reports"s, "name"s, "*"s, "pss_kb)"s, ""s + "\0"s}) {
    v1::ProcessHistoryRequest request;
    request.set_device_id("sim-qcom-101");
    request.set_process_name("system_server");
    request.set_metric(metric);
    v1::ProcessHistoryResponse response;
    EXPECT_EQ(stub_->GetProcessHistory(Context().get(), request, &response).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT)
        << metric;
  }
  for (const std::string& name : {"system\nserver"s, "a\0b"s, std::string(2000, 'p')}) {
    v1::ProcessHistoryRequest request;
    request.set_device_id("sim-qcom-101");
    request.set_process_name(name);
    v1::ProcessHistoryResponse response;
    EXPECT_EQ(stub_->GetProcessHistory(Context().get(), request, &response).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT)
        << name.size();
  }
  for (const std::string& metric : {"device.total_kb; --"s, "process.name"s, "device."s, "sql.x"s}) {
    v1::FleetRequest request;
    request.set_metric(metric);
    v1::FleetResponse response;
    EXPECT_EQ(stub_->GetFleet(Context().get(), request, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << metric;
  }
  v1::FleetRequest group;
  group.set_group_by("model; DROP TABLE devices");
  v1::FleetResponse fleet;
  EXPECT_EQ(stub_->GetFleet(Context().get(), group, &fleet).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  v1::ReaccountRequest reaccount;
  reaccount.set_device_id("../x");
  v1::ReaccountResponse reaccounted;
  EXPECT_EQ(stub_->Reaccount(Context().get(), reaccount, &reaccounted).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  ExpectIntact();
}

}  // namespace
}  // namespace memfleet
