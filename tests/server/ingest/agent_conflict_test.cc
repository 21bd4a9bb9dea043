// Two agents started with the same device id on two different phones, against the real LabServer on
// loopback: the second live stream is refused with a status naming the device id (they used to replace
// each other's stream and mix two phones in one history), no capture of either is lost, ids of the
// same second and sequence do not collide, and `devices` counts the refusals. The same phone's agent
// restarting still replaces its older stream.
#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "proto/capture_id.h"
#include "tests/support/raw_agent.h"
#include "tests/support/sample_capture.h"
#include "tests/support/test_paths.h"
#include "tests/support/test_server.h"

namespace memfleet::server {
namespace {

using testing::RawAgent;
using testing::TestServer;

std::string Tree() { return testing::TestData("captures/qcom-sm8450/tree"); }
constexpr char kDevice[] = "sim-qcom-101";  // the tree's capture.json names it
constexpr char kCapturedAt[] = "2026-11-30T08:00:00Z";

class AgentConflictTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    capture_ = testing::LoadCapture(Tree());
  }

  std::optional<std::string> StoredFor(const std::string& capture_id) {
    absl::StatusOr<std::optional<std::string>> owner = server_->store().CaptureDevice(capture_id);
    EXPECT_TRUE(owner.ok()) << owner.status();
    return owner.ok() ? *owner : std::nullopt;
  }

  v1::DeviceSummary Summary() { return testing::OnlyDevice(*server_); }

  // The id each phone's agent writes for its first capture of that second: only the instance differs.
  static std::string IdOf(const std::string& instance) {
    return *wire::MakeCaptureId(kDevice, kCapturedAt, instance, 1);
  }

  std::unique_ptr<TestServer> server_;
  capture::Capture capture_;
};

TEST_F(AgentConflictTest, ASecondLiveStreamFromAnotherDeviceIsRefusedAndNothingIsLost) {
  RawAgent xiaomi(server_->target());
  ASSERT_TRUE(xiaomi.Hello(kDevice, "Xiaomi 12"));

  v1::Hello pixel_hello = RawAgent::DefaultHello(kDevice, "Pixel 8");
  pixel_hello.mutable_device()->set_soc("gs301");
  RawAgent pixel(server_->target());
  EXPECT_FALSE(pixel.SendHello(pixel_hello));
  grpc::Status refused = pixel.Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::ALREADY_EXISTS) << refused.error_message();
  EXPECT_NE(refused.error_message().find(std::string("device id \"") + kDevice + "\" already has a live stream"),
            std::string::npos)
      << refused.error_message();
  EXPECT_NE(refused.error_message().find("model \"Pixel 8\""), std::string::npos) << refused.error_message();

  // The live stream was not replaced: its capture is acked and stored, and the device keeps its facts.
  std::optional<v1::ServerMessage> answer = xiaomi.SendCapture(capture_, IdOf("0000000a"), kCapturedAt);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_ack()) << answer->DebugString();
  EXPECT_FALSE(answer->ack().duplicate());
  v1::DeviceSummary summary = Summary();
  EXPECT_EQ(summary.model(), "Xiaomi 12");
  EXPECT_EQ(summary.soc(), "sm8450");
  EXPECT_EQ(summary.refused_streams(), 1u);
  EXPECT_NE(summary.refused_stream_facts().find("soc \"gs301\""), std::string::npos) << summary.refused_stream_facts();
  ASSERT_TRUE(xiaomi.Close().ok());

  // The refused agent kept its capture spooled and gets in once the other stream is gone. Same device id,
  // second and sequence as the Xiaomi's: only the instance part differs, and that is enough.
  RawAgent pixel_again(server_->target());
  ASSERT_TRUE(pixel_again.SendHello(pixel_hello));
  answer = pixel_again.SendCapture(capture_, IdOf("0000000b"), kCapturedAt);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_ack()) << answer->DebugString();
  EXPECT_FALSE(answer->ack().duplicate());  // not "already stored": it would have been deleted unstored
  ASSERT_TRUE(pixel_again.Close().ok());
  EXPECT_EQ(StoredFor(IdOf("0000000a")), std::optional<std::string>(kDevice));
  EXPECT_EQ(StoredFor(IdOf("0000000b")), std::optional<std::string>(kDevice));
  EXPECT_EQ(Summary().capture_count(), 2u);
}

TEST_F(AgentConflictTest, TheSamePhonesAgentRestartingReplacesItsOlderStream) {
  RawAgent before(server_->target());
  ASSERT_TRUE(before.Hello(kDevice));
  v1::Hello restarted = RawAgent::DefaultHello(kDevice);
  restarted.mutable_device()->set_agent_version("raw-test-agent 2");  // upgraded in place: same phone
  RawAgent after(server_->target());
  ASSERT_TRUE(after.SendHello(restarted));
  EXPECT_EQ(before.Finish().error_code(), grpc::StatusCode::CANCELLED);  // the server cut the older stream
  std::optional<v1::ServerMessage> answer = after.SendCapture(capture_, IdOf("0000000c"), kCapturedAt);
  ASSERT_TRUE(answer.has_value());
  EXPECT_TRUE(answer->has_ack()) << answer->DebugString();
  EXPECT_EQ(Summary().refused_streams(), 0u);
  EXPECT_TRUE(after.Close().ok());
}

}  // namespace
}  // namespace memfleet::server
