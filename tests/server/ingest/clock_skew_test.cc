// Device clocks against the server's: the arithmetic (server/ingest/clock_skew.h), and on loopback against the
// real LabServer a capture dated 9999-12-31T23:59:60Z (a device clock gone wrong) is refused for good with
// a clear reason instead of becoming the device's latest capture forever, while `devices` shows the skew.
#include "server/ingest/clock_skew.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <ctime>
#include <memory>
#include <optional>
#include <string>

#include "common/utc_time.h"
#include "gtest/gtest.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "server/core/clock.h"
#include "tests/support/raw_agent.h"
#include "tests/support/sample_capture.h"
#include "tests/support/test_paths.h"
#include "tests/support/test_server.h"

namespace memfleet::server {
namespace clock_skew_test {
namespace {

using testing::RawAgent;
using testing::TestServer;

std::string Tree() { return testing::TestData("captures/qcom-sm8450/tree"); }
constexpr char kDevice[] = "sim-qcom-101";  // the tree's capture.json names it
constexpr char kLastSecond[] = "9999-12-31T23:59:60Z";

TEST(ClockSkewTest, EpochSecondsOfTheStoresForm) {
  EXPECT_EQ(EpochSeconds("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(EpochSeconds("2026-12-04T00:00:00Z"), 1796342400);
  EXPECT_EQ(EpochSeconds("2024-02-29T12:00:00Z"), 1709208000);  // a leap day
  EXPECT_EQ(EpochSeconds("1969-12-31T23:59:59Z"), -1);
  EXPECT_EQ(EpochSeconds(kLastSecond), 253402300800);  // the leap second counts as the next one
  // The millisecond form the agents and the server write now: whole seconds, rounded down.
  EXPECT_EQ(EpochSeconds("2026-12-04T00:00:00.999Z"), 1796342400);
  EXPECT_EQ(EpochSeconds("1969-12-31T23:59:59.500Z"), -1);
  for (const char* bad : {"", "2026-12-04", "2026-12-04T00:00:00", "2026-13-04T00:00:00Z", "2026-12-04T24:00:00Z",
                          "2026-12-04 00:00:00Z", "+026-12-04T00:00:00Z"}) {
    EXPECT_EQ(EpochSeconds(bad), std::nullopt) << bad;
  }
}

TEST(ClockSkewTest, SkewIsDeviceMinusServer) {
  EXPECT_EQ(ClockSkewSeconds("2026-12-02T16:20:00Z", "2026-12-02T16:15:00Z"), 300);
  EXPECT_EQ(ClockSkewSeconds("2026-12-02T16:15:00Z", "2026-12-02T16:20:00Z"), -300);
  EXPECT_EQ(ClockSkewSeconds("yesterday", "2026-12-02T16:20:00Z"), std::nullopt);
}

TEST(ClockSkewTest, OnlyCapturesTooFarAheadAreRefused) {
  constexpr char kNow[] = "2026-12-02T16:15:00Z";
  EXPECT_TRUE(CheckNotAhead("2026-12-02T16:25:00Z", kNow, std::chrono::minutes(10)).ok());  // exactly the limit
  EXPECT_TRUE(CheckNotAhead("2020-01-01T00:00:00Z", kNow, std::chrono::minutes(10)).ok());  // the past is the device's
  absl::Status ahead = CheckNotAhead("2026-12-02T16:25:01Z", kNow, std::chrono::minutes(10));
  EXPECT_EQ(ahead.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(ahead.message().find("is 601 s ahead of the server clock (2026-12-02T16:15:00Z; at most 600 s"),
            std::string::npos)
      << ahead.message();
  absl::Status far = CheckNotAhead(kLastSecond, kNow, std::chrono::minutes(10));
  EXPECT_EQ(far.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(far.message().find("2912107 days ahead"), std::string::npos) << far.message();
  EXPECT_EQ(CheckNotAhead("soon", kNow, std::chrono::minutes(10)).code(), absl::StatusCode::kInvalidArgument);
}

// The real clock shifted by `offset`, in the store's form.
std::string WallClockPlus(std::chrono::seconds offset) {
  return FormatUtcMillis(std::chrono::system_clock::now() + offset);
}

class FutureCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    capture_ = testing::LoadCapture(Tree());
  }

  v1::DeviceSummary Summary() { return testing::OnlyDevice(*server_); }

  std::unique_ptr<TestServer> server_;
  capture::Capture capture_;
};

TEST_F(FutureCaptureTest, ACaptureFromTheFarFutureIsRefusedForGoodAndDevicesShowTheSkew) {
  // A device whose clock says year 9999 says so in its Hello too.
  v1::Hello hello = RawAgent::DefaultHello(kDevice);
  hello.set_agent_time("9999-12-31T23:59:59Z");
  RawAgent agent(server_->target());
  ASSERT_TRUE(agent.SendHello(hello));
  const std::optional<int64_t> expected_skew_s = ClockSkewSeconds("9999-12-31T23:59:59Z", NowRfc3339());
  ASSERT_TRUE(expected_skew_s.has_value());

  const std::string future_id = testing::CaptureId(kDevice, 1);
  std::optional<v1::ServerMessage> answer = agent.SendCapture(capture_, future_id, kLastSecond);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_rejected()) << answer->DebugString();
  EXPECT_EQ(answer->rejected().code(), static_cast<int>(absl::StatusCode::kOutOfRange));
  EXPECT_FALSE(answer->rejected().retry());  // it never gets less wrong: the agent must not resend it forever
  EXPECT_NE(answer->rejected().message().find("ahead of the server clock"), std::string::npos)
      << answer->rejected().message();
  EXPECT_NE(answer->rejected().message().find("fix the device's clock"), std::string::npos)
      << answer->rejected().message();
  const std::string hour_ahead_id = testing::CaptureId(kDevice, 2);
  answer = agent.SendCapture(capture_, hour_ahead_id, WallClockPlus(std::chrono::hours(1)));
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_rejected()) << answer->DebugString();

  // Within the default skew (10 minutes) a device's own time is kept.
  const std::string near_at = WallClockPlus(std::chrono::minutes(1));
  const std::string near_id = testing::CaptureId(kDevice, 3);
  answer = agent.SendCapture(capture_, near_id, near_at);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_ack()) << answer->DebugString();

  for (const std::string& id : {future_id, hour_ahead_id}) {
    absl::StatusOr<bool> stored = server_->store().HasCapture(id);
    ASSERT_TRUE(stored.ok()) << stored.status();
    EXPECT_FALSE(*stored) << id;
  }
  v1::DeviceSummary summary = Summary();
  EXPECT_EQ(summary.last_capture_at(), near_at);  // not 9999-12-31: the latest stays a real one
  EXPECT_EQ(summary.capture_count(), 1u);
  EXPECT_EQ(summary.future_captures_refused(), 2u);
  ASSERT_TRUE(summary.has_clock_skew_s());
  // The Hello's time minus the server's receive time; the test's own reading of the clock may differ by
  // the second it took.
  EXPECT_NEAR(static_cast<double>(summary.clock_skew_s()), static_cast<double>(*expected_skew_s), 2.0);
  EXPECT_TRUE(agent.Close().ok());
}

TEST_F(FutureCaptureTest, AnAgentThatSendsNoTimeHasAnUnknownSkew) {
  RawAgent agent(server_->target());
  ASSERT_TRUE(agent.Hello(kDevice));
  EXPECT_FALSE(Summary().has_clock_skew_s());
  EXPECT_TRUE(agent.Close().ok());
}

TEST_F(FutureCaptureTest, AHelloWithATimeThatIsNotOneIsRefused) {
  v1::Hello hello = RawAgent::DefaultHello(kDevice);
  hello.set_agent_time("tomorrow");
  RawAgent agent(server_->target());
  EXPECT_FALSE(agent.SendHello(hello));
  grpc::Status s = agent.Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("agent_time"), std::string::npos) << s.error_message();
}

}  // namespace
}  // namespace clock_skew_test
}  // namespace memfleet::server
