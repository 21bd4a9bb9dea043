// A device putting its captures into another team's sweep, against a real LabServer on loopback with two
// hand-driven agents (tests/support/raw_agent.h): sim-a, which the sweep asked, and the rogue sim-b,
// which names sim-a's sweep in its CaptureBegin and writes the run's label into its own header. Only
// sim-a's one answer keeps the sweep's id, labels and queue priority; sim-b's capture and sim-a's second
// one are stored as periodic captures, and every query of the run (`--where label.run=`, `report
// --label`, `baseline check --sweep`) says which captures it matches (docs/labels.md, docs/security.md).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/capture.h"
#include "capture/node_path.h"
#include "memfleet/v1/baseline_service.grpc.pb.h"
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

constexpr char kAsked[] = "sim-a";
constexpr char kRogue[] = "sim-b";

// The qcom-sm8450 sample as `device` sends it, its header carrying `labels` (none when null).
capture::Capture Sample(const std::string& device, const json& labels) {
  capture::Capture c = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree"));
  json header = json::parse(*c.FileContent(capture::kHeaderNode));
  header["device_id"] = device;
  if (!labels.is_null()) header["labels"] = labels;
  c.AddFile(capture::kHeaderNode, header.dump());
  return c;
}

class SweepTrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<testing::TestServer>> s = testing::TestServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    auto channel = grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials());
    query_ = v1::QueryService::NewStub(channel);
    baselines_ = v1::BaselineService::NewStub(channel);
    asked_ = std::make_unique<testing::RawAgent>(server_->target());
    ASSERT_TRUE(asked_->Hello(kAsked));
    rogue_ = std::make_unique<testing::RawAgent>(server_->target());
    ASSERT_TRUE(rogue_->Hello(kRogue));
  }

  // Sweeps sim-a alone, labelled run=R1; returns its id once sim-a has its command.
  std::string SweepTheAskedDevice() {
    absl::StatusOr<selector::Selector> only_a = selector::Selector::Parse({std::string("device_id=") + kAsked});
    EXPECT_TRUE(only_a.ok());
    absl::StatusOr<std::string> sweep =
        server_->server().sweeps().StartSweep(*only_a, std::chrono::seconds(60), {{"run", "R1"}});
    EXPECT_TRUE(sweep.ok()) << sweep.status();
    std::optional<v1::ServerMessage> command = asked_->Read();
    EXPECT_TRUE(command.has_value() && command->has_capture_now()) << (command ? command->DebugString() : "ended");
    return sweep.ok() ? *sweep : "";
  }

  static void ExpectAck(const std::optional<v1::ServerMessage>& answer) {
    EXPECT_TRUE(answer.has_value() && answer->has_ack()) << (answer ? answer->DebugString() : "the stream ended");
  }

  std::vector<std::string> DevicesWhere(const std::string& term) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListDevicesRequest request;
    request.mutable_selector()->add_where(term);
    v1::ListDevicesResponse response;
    grpc::Status s = query_->ListDevices(&ctx, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::vector<std::string> ids;
    for (const v1::DeviceSummary& d : response.devices()) ids.push_back(d.device_id());
    return ids;
  }

  // `device`'s latest capture carrying run=R1 from its sweep (`agent` false) or its agent; "" when none.
  std::string ReportCarryingRun(const std::string& device, bool agent) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::GetReportRequest request;
    request.set_device_id(device);
    v1::Label* label = agent ? request.add_agent_labels() : request.add_labels();
    label->set_key("run");
    label->set_value("R1");
    v1::GetReportResponse response;
    grpc::Status s = query_->GetReport(&ctx, request, &response);
    EXPECT_TRUE(s.ok() || s.error_code() == grpc::StatusCode::NOT_FOUND) << s.error_message();
    return s.ok() ? response.capture_id() : "";
  }

  std::unique_ptr<testing::TestServer> server_;
  std::unique_ptr<v1::QueryService::Stub> query_;
  std::unique_ptr<v1::BaselineService::Stub> baselines_;
  std::unique_ptr<testing::RawAgent> asked_;
  std::unique_ptr<testing::RawAgent> rogue_;
};

TEST_F(SweepTrustTest, OnlyTheAskedDevicesOneAnswerKeepsTheSweepItsLabelsAndItsPlaceInTheQueue) {
  const std::string sweep = SweepTheAskedDevice();
  ASSERT_FALSE(sweep.empty());
  const std::string rogue_id = testing::CaptureId(kRogue, 1);
  const std::string answer_id = testing::CaptureId(kAsked, 1);
  const std::string second_id = testing::CaptureId(kAsked, 2);
  const uint64_t urgent_before = server_->server().pool().urgent_posted();

  // The rogue names sim-a's sweep, with the run's label in its header: stored, as a periodic capture.
  ExpectAck(rogue_->SendCapture(Sample(kRogue, {{"run", "R1"}}), rogue_id, "2026-11-30T08:00:00Z", sweep));
  EXPECT_EQ(server_->server().pool().urgent_posted(), urgent_before) << "the rogue's upload jumped the queue";
  // sim-a's answer goes ahead of periodic captures; its second capture naming the sweep does not.
  ExpectAck(asked_->SendCapture(Sample(kAsked, nullptr), answer_id, "2026-11-30T08:00:01Z", sweep));
  const uint64_t urgent_after_answer = server_->server().pool().urgent_posted();
  EXPECT_GT(urgent_after_answer, urgent_before);
  ExpectAck(asked_->SendCapture(Sample(kAsked, nullptr), second_id, "2026-11-30T08:00:02Z", sweep));
  EXPECT_EQ(server_->server().pool().urgent_posted(), urgent_after_answer) << "a second answer jumped the queue";

  // What the store keeps: the sweep's labels on sim-a's answer only; the rogue's label as its agent's.
  absl::StatusOr<storage::LabelSet> answer = server_->store().CaptureLabels(answer_id);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer, (storage::LabelSet{{{"run", "R1"}}, {}}));
  absl::StatusOr<storage::LabelSet> second = server_->store().CaptureLabels(second_id);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->empty());
  absl::StatusOr<storage::LabelSet> rogue = server_->store().CaptureLabels(rogue_id);
  ASSERT_TRUE(rogue.ok()) << rogue.status();
  EXPECT_EQ(*rogue, (storage::LabelSet{{}, {{"run", "R1"}}}));

  // The run's queries match the sweep's labels; agentlabel.run= and --agent-label are the agent's.
  EXPECT_EQ(DevicesWhere("label.run=R1"), std::vector<std::string>{kAsked});
  EXPECT_EQ(DevicesWhere("agentlabel.run=R1"), std::vector<std::string>{kRogue});
  EXPECT_EQ(ReportCarryingRun(kAsked, /*agent=*/false), answer_id) << "not the newer second capture";
  EXPECT_EQ(ReportCarryingRun(kRogue, /*agent=*/false), "");
  EXPECT_EQ(ReportCarryingRun(kRogue, /*agent=*/true), rogue_id);

  // The sweep's captures, as `baseline check --sweep` checks them: sim-a's answer alone.
  absl::StatusOr<std::vector<storage::StoredReport>> of_sweep = server_->store().LatestReportsOfSweep(sweep);
  ASSERT_TRUE(of_sweep.ok()) << of_sweep.status();
  ASSERT_EQ(of_sweep->size(), 1u);
  EXPECT_EQ((*of_sweep)[0].capture_id, answer_id);
  {
    grpc::ClientContext ctx;
    v1::ImportBaselineRequest request;
    request.set_file_text(testing::ReadFileForTest(testing::TestData("baselines/sample-lab.json")));
    v1::ImportBaselineResponse response;
    ASSERT_TRUE(baselines_->ImportBaseline(&ctx, request, &response).ok());
  }
  grpc::ClientContext ctx;
  v1::CheckBaselineRequest check;
  check.set_sweep_id(sweep);
  v1::CheckBaselineResponse checked;
  grpc::Status s = baselines_->CheckBaseline(&ctx, check, &checked);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(checked.devices() + checked.devices_not_applicable(), 1u);

  // The sweep itself: sim-a stored with its answer; the rogue is no part of it.
  absl::StatusOr<server::SweepUpdate> progress =
      server_->server().sweeps().WaitForProgress(sweep, 0, std::chrono::seconds(10));
  ASSERT_TRUE(progress.ok()) << progress.status();
  EXPECT_EQ(progress->devices_total, 1u);
  ASSERT_FALSE(progress->events.empty());
  EXPECT_EQ(progress->events.back().device_id, kAsked);
  EXPECT_EQ(progress->events.back().state, server::SweepState::kStored);
  EXPECT_EQ(progress->events.back().capture_id, answer_id);
}

TEST_F(SweepTrustTest, ASweepIdThatNeverWasOrThatAskedAnotherDeviceGainsNothing) {
  const std::string sweep = SweepTheAskedDevice();
  ASSERT_FALSE(sweep.empty());
  const uint64_t urgent_before = server_->server().pool().urgent_posted();
  const std::string never = "sweep-20261130T080000Z-abcdef";
  ExpectAck(rogue_->SendCapture(Sample(kRogue, nullptr), testing::CaptureId(kRogue, 1), "2026-11-30T08:00:00Z", never));
  ExpectAck(rogue_->SendCapture(Sample(kRogue, nullptr), testing::CaptureId(kRogue, 2), "2026-11-30T08:00:01Z", sweep));
  EXPECT_EQ(server_->server().pool().urgent_posted(), urgent_before);
  // Neither keeps the id it named: no sweep's captures include them.
  for (const std::string& id : {never, sweep}) {
    absl::StatusOr<std::vector<storage::StoredReport>> of_sweep = server_->store().LatestReportsOfSweep(id);
    ASSERT_TRUE(of_sweep.ok()) << of_sweep.status();
    EXPECT_TRUE(of_sweep->empty()) << id;
  }
  // And the rogue's naming of the sweep did not take sim-a's answer away.
  ExpectAck(asked_->SendCapture(Sample(kAsked, nullptr), testing::CaptureId(kAsked, 1), "2026-11-30T08:00:02Z", sweep));
  absl::StatusOr<std::vector<storage::StoredReport>> of_sweep = server_->store().LatestReportsOfSweep(sweep);
  ASSERT_TRUE(of_sweep.ok()) << of_sweep.status();
  ASSERT_EQ(of_sweep->size(), 1u);
  EXPECT_EQ((*of_sweep)[0].device_id, kAsked);
}

}  // namespace
}  // namespace memfleet
