// The tiers of the figures (docs/accounting.md section 9) in a real LabServer's QueryService over its
// SQLite store: GetFleet counts a group's devices by the tier of their latest capture, so a group whose
// figures mix the two tiers can say so. The reports are the fixtures' expected.json: shield-shell's is of
// the dumpsys tier, qcom-sm8450's (written before tiers, read as the kernel tier) the kernel's.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "memfleet/v1/query_service.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "report/report_json.h"
#include "storage/store.h"
#include "tests/support/test_data.h"
#include "tests/support/test_server.h"

namespace memfleet {
namespace {

using nlohmann::json;
using testing::TestServer;

constexpr char kShellReport[] = "captures-shell/shield-shell/expected.json";
constexpr char kRootReport[] = "captures/qcom-sm8450/expected.json";
constexpr char kModel[] = "SHIELD Android TV";

json Expected(const std::string& path) { return json::parse(testing::ReadTestData(path)); }

class FleetTiersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    stub_ = v1::QueryService::NewStub(grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  }

  // A device of `model` whose agent said `agent_tier` in its Hello, with the fixture's report stored as
  // its one capture when `report` is not empty.
  void AddDevice(const std::string& device_id, const std::string& model, const std::string& agent_tier,
                 const std::string& report) {
    storage::DeviceRecord d;
    d.device_id = device_id;
    d.model = model;
    d.last_seen_at = "2026-12-05T09:00:00.000Z";
    d.agent_tier = agent_tier;
    ASSERT_TRUE(server_->store().UpsertDevice(d).ok());
    if (report.empty()) return;
    absl::StatusOr<report::Report> parsed = report::ReportFromJson(testing::ReadTestData(report));
    ASSERT_TRUE(parsed.ok()) << report << ": " << parsed.status();
    storage::CaptureRecord c;
    c.device_id = device_id;
    c.capture_id = device_id + "-1";
    c.captured_at = "2026-12-05T10:00:00.000Z";
    c.raw_codec = "zstd+proto";
    c.raw_blob = "raw";
    c.raw_bytes = 3;
    c.report = *std::move(parsed);
    c.report.device_id = device_id;
    c.report.captured_at = c.captured_at;
    c.report_json = report::ReportToJson(c.report, -1);
    absl::StatusOr<bool> stored = server_->store().PutCapture(c);
    ASSERT_TRUE(stored.ok() && *stored) << stored.status();
  }

  std::unique_ptr<grpc::ClientContext> Context() {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    return c;
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<v1::QueryService::Stub> stub_;
};

TEST_F(FleetTiersTest, AGroupCountsItsDevicesByTheTierOfTheirFigures) {
  ASSERT_EQ(Expected(kShellReport)["device"]["tier"], "dumpsys");
  ASSERT_FALSE(Expected(kRootReport)["device"].contains("tier"));  // before tiers: the kernel tier
  // One model, a phone read as shell and one rooted; another model, rooted only.
  AddDevice("shield-shell", kModel, "dumpsys", kShellReport);
  AddDevice("shield-rooted", kModel, "kernel", kRootReport);
  AddDevice("sm8450", "SM8450 HDK", "kernel", kRootReport);

  v1::FleetRequest request;
  request.set_metric("device.total_kb");
  request.set_group_by("model");
  v1::FleetResponse response;
  grpc::Status s = stub_->GetFleet(Context().get(), request, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  std::map<std::string, v1::FleetGroup> groups;
  for (const v1::FleetGroup& g : response.groups()) groups[g.key()] = g;
  ASSERT_EQ(groups.size(), 2u);

  const v1::FleetGroup& mixed = groups[kModel];
  EXPECT_EQ(mixed.devices(), 2u);
  EXPECT_EQ(mixed.min_kb(), Expected(kShellReport)["device"]["total_kb"].get<int64_t>());
  EXPECT_EQ(mixed.max_kb(), Expected(kRootReport)["device"]["total_kb"].get<int64_t>());
  EXPECT_EQ((std::map<std::string, uint32_t>(mixed.tier_devices().begin(), mixed.tier_devices().end())),
            (std::map<std::string, uint32_t>{{"dumpsys", 1}, {"kernel", 1}}));
  const v1::FleetGroup& rooted = groups["SM8450 HDK"];
  EXPECT_EQ((std::map<std::string, uint32_t>(rooted.tier_devices().begin(), rooted.tier_devices().end())),
            (std::map<std::string, uint32_t>{{"kernel", 1}}));

  // Split by tier, the model's group is of one tier and holds the shell phone's figure alone.
  request.mutable_selector()->add_where("tier=dumpsys");
  v1::FleetResponse split;
  s = stub_->GetFleet(Context().get(), request, &split);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(split.groups_size(), 1);
  EXPECT_EQ(split.groups(0).key(), kModel);
  EXPECT_EQ(split.groups(0).devices(), 1u);
  EXPECT_EQ(split.groups(0).max_kb(), Expected(kShellReport)["device"]["total_kb"].get<int64_t>());
  EXPECT_EQ(split.groups(0).tier_devices().at("dumpsys"), 1u);
}

// A phone online with no capture yet has no stored tier: --where tier= takes the tier its agent said in
// its Hello (selector/selector.h), so a first sweep of the shell phones reaches it; a stored tier wins.
TEST_F(FleetTiersTest, WhereTierTakesTheAgentsTierWhileNothingIsStored) {
  AddDevice("new-shell", kModel, "dumpsys", "");
  AddDevice("new-rooted", kModel, "kernel", "");
  AddDevice("old-agent", kModel, "", "");
  AddDevice("rooted-since", kModel, "dumpsys", kRootReport);  // its agent's Hello is older than its capture
  const auto listed = [&](const std::string& where) {
    v1::ListDevicesRequest request;
    request.mutable_selector()->add_where(where);
    v1::ListDevicesResponse response;
    grpc::Status s = stub_->ListDevices(Context().get(), request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::string ids;
    for (const v1::DeviceSummary& d : response.devices()) ids += d.device_id() + " ";
    return ids;
  };
  EXPECT_EQ(listed("tier=dumpsys"), "new-shell ");
  EXPECT_EQ(listed("tier=kernel"), "new-rooted rooted-since ");
}

}  // namespace
}  // namespace memfleet
