// Labels through a real LabServer (docs/labels.md): an agent's header labels and a sweep's labels stored
// on the capture apart by source (the sweep's win on a clash), a hostile agent's bad labels refused with
// its capture, and GetReport / GetFleet / ListDevices scoped by labels from either source. Figures are the
// sample trees' expected.json values.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "capture/capture.h"
#include "capture/node_path.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "selector/selector.h"
#include "tests/support/load_tree.h"
#include "tests/support/raw_agent.h"
#include "tests/support/sample_capture.h"
#include "tests/support/test_paths.h"
#include "tests/support/test_server.h"

namespace memfleet {
namespace {

using nlohmann::json;

constexpr char kDevice[] = "sim-qcom-101";  // the qcom-sm8450 tree's device id
constexpr char kCapturedAt[] = "2026-11-30T08:00:00Z";

int64_t ExpectedTotalKb(const std::string& capture) {
  json expected = json::parse(testing::ReadFileForTest(testing::TestData("captures/" + capture + "/expected.json")));
  return expected["device"]["total_kb"].get<int64_t>();
}

// The capture of a sample tree as `kDevice` sends it, its header's "labels" set to `labels` (any JSON:
// a hostile agent sends what it likes).
capture::Capture Tree(const std::string& capture, const json& labels) {
  capture::Capture c = testing::LoadCapture(testing::TestData("captures/" + capture + "/tree"));
  json header = json::parse(*c.FileContent(capture::kHeaderNode));
  header["device_id"] = kDevice;
  if (!labels.is_null()) header["labels"] = labels;
  c.AddFile(capture::kHeaderNode, header.dump());
  return c;
}

class LabelsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<testing::TestServer>> s = testing::TestServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    query_ = v1::QueryService::NewStub(grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
    agent_ = std::make_unique<testing::RawAgent>(server_->target());
    ASSERT_TRUE(agent_->Hello(kDevice));
  }

  std::optional<v1::ServerMessage> Send(const capture::Capture& c, int seq, const std::string& sweep_id = "") {
    return agent_->SendCapture(c, testing::CaptureId(kDevice, seq), kCapturedAt, sweep_id);
  }

  // The device's latest report carrying `labels` from a sweep and `agent_labels` from its agent.
  grpc::Status Report(const storage::Labels& labels, v1::GetReportResponse* response,
                      const storage::Labels& agent_labels = {}) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::GetReportRequest request;
    request.set_device_id(kDevice);
    for (const auto& [key, value] : labels) {
      v1::Label* l = request.add_labels();
      l->set_key(key);
      l->set_value(value);
    }
    for (const auto& [key, value] : agent_labels) {
      v1::Label* l = request.add_agent_labels();
      l->set_key(key);
      l->set_value(value);
    }
    return query_->GetReport(&ctx, request, response);
  }

  std::unique_ptr<testing::TestServer> server_;
  std::unique_ptr<v1::QueryService::Stub> query_;
  std::unique_ptr<testing::RawAgent> agent_;
};

TEST_F(LabelsServerTest, SweepLabelsJoinTheAgentsAndWinOnAClash) {
  absl::StatusOr<selector::Selector> every = selector::Selector::Parse({});
  ASSERT_TRUE(every.ok());
  absl::StatusOr<std::string> sweep =
      server_->server().sweeps().StartSweep(*every, std::chrono::seconds(60), {{"run", "1234"}, {"suite", "camera"}});
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  std::optional<v1::ServerMessage> command = agent_->Read();
  ASSERT_TRUE(command.has_value() && command->has_capture_now()) << (command ? command->DebugString() : "ended");
  ASSERT_EQ(command->capture_now().sweep_id(), *sweep);

  std::optional<v1::ServerMessage> answer =
      Send(Tree("qcom-sm8450", {{"rack", "7"}, {"run", "agent-says"}}), 1, *sweep);
  ASSERT_TRUE(answer.has_value() && answer->has_ack()) << (answer ? answer->DebugString() : "ended");
  absl::StatusOr<storage::LabelSet> stored = server_->store().CaptureLabels(testing::CaptureId(kDevice, 1));
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->sweep, (storage::Labels{{"run", "1234"}, {"suite", "camera"}}));
  EXPECT_EQ(stored->agent, (storage::Labels{{"rack", "7"}}));

  // The same sweep id on a capture of a device the sweep did not select gets none of its labels.
  EXPECT_TRUE(server_->server().sweeps().LabelsFor(*sweep, "another-device").empty());
}

TEST_F(LabelsServerTest, BadHeaderLabelsRefuseTheCaptureWithTheReason) {
  const json bad[] = {json{{"Run", "1"}}, json{{"run", "a\nb"}}, json{{"run", 1234}}, json::array({"run", "1"}),
                      json{{"run", std::string(129, 'v')}}};
  int seq = 0;
  for (const json& labels : bad) {
    std::optional<v1::ServerMessage> answer = Send(Tree("qcom-sm8450", labels), ++seq);
    ASSERT_TRUE(answer.has_value() && answer->has_rejected())
        << labels.dump() << ": " << (answer ? answer->DebugString() : "ended");
    EXPECT_EQ(answer->rejected().code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT)) << labels.dump();
    EXPECT_FALSE(answer->rejected().retry()) << labels.dump();
    EXPECT_NE(answer->rejected().message().find("\"labels\""), std::string::npos) << answer->rejected().message();
    absl::StatusOr<bool> stored = server_->store().HasCapture(testing::CaptureId(kDevice, seq));
    ASSERT_TRUE(stored.ok());
    EXPECT_FALSE(*stored) << labels.dump();
  }
  // The stream lives on: a good capture after them is stored.
  std::optional<v1::ServerMessage> good = Send(Tree("qcom-sm8450", {{"rack", "7"}}), ++seq);
  ASSERT_TRUE(good.has_value() && good->has_ack()) << (good ? good->DebugString() : "ended");
}

TEST_F(LabelsServerTest, ReportAndFleetTakeTheLatestCaptureCarryingTheLabel) {
  // The agent's run 1234 on the sm8450 tree, then an unlabelled capture of the edge tree: the device's latest.
  ASSERT_TRUE(Send(Tree("qcom-sm8450", {{"run", "1234"}}), 1)->has_ack());
  ASSERT_TRUE(Send(Tree("qcom-edge", nullptr), 2)->has_ack());

  v1::GetReportResponse run;
  ASSERT_TRUE(Report({}, &run, {{"run", "1234"}}).ok());
  EXPECT_EQ(run.capture_id(), testing::CaptureId(kDevice, 1));
  EXPECT_EQ(json::parse(run.report_json())["device"]["total_kb"], ExpectedTotalKb("qcom-sm8450"));
  EXPECT_EQ(run.labels_size(), 0);
  ASSERT_EQ(run.agent_labels_size(), 1);
  EXPECT_EQ(run.agent_labels(0).key(), "run");
  EXPECT_EQ(run.agent_labels(0).value(), "1234");
  // No sweep gave it: a run's query (--label, label.run=) does not take it.
  v1::GetReportResponse not_a_run;
  EXPECT_EQ(Report({{"run", "1234"}}, &not_a_run).error_code(), grpc::StatusCode::NOT_FOUND);

  v1::GetReportResponse latest;
  ASSERT_TRUE(Report({}, &latest).ok());
  EXPECT_EQ(json::parse(latest.report_json())["device"]["total_kb"], ExpectedTotalKb("qcom-edge"));
  EXPECT_EQ(latest.labels_size(), 0);
  EXPECT_EQ(latest.agent_labels_size(), 0);

  v1::GetReportResponse none;
  grpc::Status missing = Report({}, &none, {{"run", "9999"}});
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(missing.error_message().find("carrying agent label run=9999"), std::string::npos)
      << missing.error_message();
  EXPECT_EQ(Report({{"run", "a\x1b"}}, &none).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Report({}, &none, {{"run", "a\x1b"}}).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  // Fleet: the labelled capture's figure, not the latest's.
  grpc::ClientContext ctx;
  v1::FleetRequest fleet;
  fleet.mutable_selector()->add_where("agentlabel.run=1234");
  v1::FleetResponse rows;
  ASSERT_TRUE(query_->GetFleet(&ctx, fleet, &rows).ok());
  ASSERT_EQ(rows.rows_size(), 1);
  EXPECT_EQ(rows.rows(0).value_kb(), ExpectedTotalKb("qcom-sm8450"));
  EXPECT_TRUE(rows.rows(0).value_known());

  grpc::ClientContext ctx2;
  fleet.mutable_selector()->set_where(0, "label.run=1234");
  v1::FleetResponse nothing;
  ASSERT_TRUE(query_->GetFleet(&ctx2, fleet, &nothing).ok());
  EXPECT_EQ(nothing.rows_size(), 0);

  grpc::ClientContext ctx3;
  v1::ListDevicesRequest devices;
  devices.mutable_selector()->add_where("agentlabel.run=1235");
  v1::ListDevicesResponse listed;
  ASSERT_TRUE(query_->ListDevices(&ctx3, devices, &listed).ok());
  EXPECT_EQ(listed.devices_size(), 0);
  grpc::ClientContext ctx4;
  devices.mutable_selector()->set_where(0, "agentlabel.run=1234");
  ASSERT_TRUE(query_->ListDevices(&ctx4, devices, &listed).ok());
  EXPECT_EQ(listed.devices_size(), 1);

  grpc::ClientContext ctx5;
  devices.mutable_selector()->set_where(0, "label.Run=1234");
  EXPECT_EQ(query_->ListDevices(&ctx5, devices, &listed).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  grpc::ClientContext ctx6;
  devices.mutable_selector()->set_where(0, "agentlabel.run=1\x1b");
  EXPECT_EQ(query_->ListDevices(&ctx6, devices, &listed).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace memfleet
