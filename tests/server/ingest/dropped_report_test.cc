// DroppedReport on an open agent stream, against the real LabServer on loopback: the drops are added to
// the device's count at once (not only at the agent's next Hello) and confirmed with DroppedRecorded.
#include <memory>
#include <optional>

#include "gtest/gtest.h"
#include "memfleet/v1/agent_service.grpc.pb.h"
#include "tests/support/raw_agent.h"
#include "tests/support/test_server.h"

namespace memfleet::server {
namespace {

TEST(DroppedReportTest, DropsReportedWhileConnectedAreRecordedAndConfirmed) {
  absl::StatusOr<std::unique_ptr<testing::TestServer>> server = testing::TestServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  testing::RawAgent agent((*server)->target());
  ASSERT_TRUE(agent.Hello("sim-qcom-101"));  // Hello says 0 dropped

  for (uint64_t n : {3u, 2u}) {
    v1::AgentMessage report;
    report.mutable_dropped()->set_dropped_captures(n);
    ASSERT_TRUE(agent.Write(report));
    std::optional<v1::ServerMessage> answer = agent.Read();
    ASSERT_TRUE(answer.has_value());
    ASSERT_TRUE(answer->has_dropped_recorded()) << answer->DebugString();
    EXPECT_EQ(answer->dropped_recorded().dropped_captures(), n);
  }
  absl::StatusOr<std::vector<storage::DeviceSummaryRow>> devices = (*server)->store().ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].device.dropped_captures, 5u);
  EXPECT_TRUE(agent.Close().ok());
}

}  // namespace
}  // namespace memfleet::server
