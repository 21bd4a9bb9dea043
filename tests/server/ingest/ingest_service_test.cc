// The lab server over real gRPC: a LabServer on 127.0.0.1:0 with a temporary SQLite file, and raw agent /
// CLI stubs written here that speak the protocol of agent_service.proto and query_service.proto.
//
// Golden values come from the fixtures' expected.json (tests/data/captures, copied from the lab's
// shared fixtures):
//   qcom-sm8450: device.total_kb 3567646; com.tencent.mm pid 13560 total_kb 215236, pss_kb 117116.
//   mtk-mt6989:  device.total_kb 4125309; com.tencent.mm pid 18509 total_kb 287802.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/collector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memfleet/v1/agent_service.grpc.pb.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "proto/capture_codec.h"
#include "report/report_json.h"
#include "server/security/token_admin.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/failing_store.h"
#include "tests/support/manual_clock.h"
#include "tests/support/raw_agent.h"
#include "tests/support/test_paths.h"
#include "tests/support/test_server.h"
#include "tests/support/sample_capture.h"

namespace memfleet::server {
namespace ingest_service_test {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using testing::RawAgent;
using testing::TestServer;

std::string QcomTree() { return testing::TestData("captures/qcom-sm8450/tree"); }
constexpr char kQcomDevice[] = "sim-qcom-101";  // its capture.json's device_id
constexpr int64_t kQcomTotalKb = 3567646;
std::string MtkTree() { return testing::TestData("captures/mtk-mt6989/tree"); }
constexpr char kMtkDevice[] = "sim-mtk-202";
constexpr int64_t kMtkTotalKb = 4125309;
constexpr char kCapturedAt[] = "2026-11-30T08:00:00Z";    // both trees' capture.json
constexpr char kStoredAt[] = "2026-11-30T08:00:00.000Z";  // kCapturedAt as the store keeps it

using memfleet::testing::CaptureId;
using memfleet::testing::LoadCapture;

using memfleet::testing::FailingStore;

class IngestServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
  }

  std::unique_ptr<v1::QueryService::Stub> QueryStub() {
    return v1::QueryService::NewStub(grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  }

  uint64_t StoredCaptures() {
    absl::StatusOr<storage::Store::Stats> stats = server_->store().GetStats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? stats->captures : 0;
  }

  bool Stored(const std::string& capture_id) {
    absl::StatusOr<bool> has = server_->store().HasCapture(capture_id);
    EXPECT_TRUE(has.ok()) << has.status();
    return has.ok() && *has;
  }

  std::unique_ptr<TestServer> server_;
};

std::optional<int64_t> TotalKbOf(const std::string& report_json) {
  absl::StatusOr<report::Report> r = report::ReportFromJson(report_json);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->device.total_kb : std::nullopt;
}

TEST_F(IngestServiceTest, StoresACaptureAcksItAndDeduplicatesAResend) {
  capture::Capture capture = LoadCapture(QcomTree());
  ASSERT_GT(wire::ChunkCapture(capture, "x", 64 * 1024).size(), 2u);  // really several chunks
  RawAgent agent(server_->target());
  ASSERT_TRUE(agent.Hello(kQcomDevice));
  const std::string id = CaptureId(kQcomDevice, 1);

  std::optional<v1::ServerMessage> answer = agent.SendCapture(capture, id, kCapturedAt);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_ack()) << answer->DebugString();
  EXPECT_EQ(answer->ack().capture_id(), id);
  EXPECT_FALSE(answer->ack().duplicate());

  // Acked means committed: the report is in the store now, with the engine's figures.
  absl::StatusOr<std::optional<storage::StoredReport>> report = server_->store().GetReport(kQcomDevice, "");
  ASSERT_TRUE(report.ok() && report->has_value());
  EXPECT_EQ((*report)->capture_id, id);
  EXPECT_EQ((*report)->captured_at, kStoredAt);
  EXPECT_EQ(TotalKbOf((*report)->report_json), kQcomTotalKb);

  // The raw capture is kept (compressed) and decodes back to what the agent sent.
  int raw_seen = 0;
  ASSERT_TRUE(server_->store()
                  .ForEachRawCapture(kQcomDevice,
                                     [&](const storage::Store::RawCapture& raw) {
                                       ++raw_seen;
                                       absl::StatusOr<capture::Capture> back =
                                           wire::DecodeStoredCapture(raw.raw_codec, raw.raw_blob);
                                       ASSERT_TRUE(back.ok()) << back.status();
                                       EXPECT_EQ(back->size(), capture.size());
                                       EXPECT_EQ(back->ContentBytes(), capture.ContentBytes());
                                       EXPECT_LT(raw.raw_blob.size(), capture.ContentBytes());
                                     })
                  .ok());
  EXPECT_EQ(raw_seen, 1);

  // The device record now carries the platform of its report.
  absl::StatusOr<std::optional<storage::DeviceRecord>> device = server_->store().GetDevice(kQcomDevice);
  ASSERT_TRUE(device.ok() && device->has_value());
  EXPECT_EQ((*device)->platform, "qcom");
  EXPECT_EQ((*device)->model, "Xiaomi 12");

  // A resend (the agent never saw the ack) is acked as a duplicate and not stored twice.
  answer = agent.SendCapture(capture, id, kCapturedAt);
  ASSERT_TRUE(answer.has_value() && answer->has_ack()) << (answer ? answer->DebugString() : "stream ended");
  EXPECT_TRUE(answer->ack().duplicate());
  EXPECT_EQ(StoredCaptures(), 1u);
  EXPECT_TRUE(agent.Close().ok());
}

TEST_F(IngestServiceTest, AnAgentThatHalfClosesAfterItsCaptureStillGetsTheAck) {
  capture::Capture capture = LoadCapture(QcomTree());
  RawAgent agent(server_->target());
  ASSERT_TRUE(agent.Hello(kQcomDevice));
  ASSERT_TRUE(agent.SendAll(RawAgent::CaptureMessages(capture, CaptureId(kQcomDevice, 7), kCapturedAt)));
  agent.WritesDone();  // like `memfleet-agent --once`
  std::optional<v1::ServerMessage> answer = agent.AwaitAnswer();
  ASSERT_TRUE(answer.has_value() && answer->has_ack());
  EXPECT_TRUE(agent.Finish().ok());
  EXPECT_TRUE(Stored(CaptureId(kQcomDevice, 7)));
}

TEST_F(IngestServiceTest, AChunkOutOfOrderRejectsTheCaptureButNotTheStream) {
  capture::Capture capture = LoadCapture(QcomTree());
  RawAgent agent(server_->target());
  ASSERT_TRUE(agent.Hello(kQcomDevice));
  const std::string id = CaptureId(kQcomDevice, 2);
  std::vector<v1::AgentMessage> messages = RawAgent::CaptureMessages(capture, id, kCapturedAt);
  ASSERT_GE(messages.size(), 4u);       // begin, >= 2 chunks, end
  std::swap(messages[1], messages[2]);  // seq 1 before seq 0
  ASSERT_TRUE(agent.SendAll(messages));
  std::optional<v1::ServerMessage> answer = agent.AwaitAnswer();
  ASSERT_TRUE(answer.has_value() && answer->has_rejected()) << (answer ? answer->DebugString() : "stream ended");
  EXPECT_EQ(answer->rejected().capture_id(), id);
  EXPECT_FALSE(answer->rejected().retry());
  EXPECT_EQ(answer->rejected().code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_THAT(answer->rejected().message(), HasSubstr("out of order"));
  EXPECT_FALSE(Stored(id));
  EXPECT_EQ(StoredCaptures(), 0u);

  // The rest of the bad capture was dropped quietly, and the same stream still takes a good one.
  answer = agent.SendCapture(capture, id, kCapturedAt);
  ASSERT_TRUE(answer.has_value() && answer->has_ack()) << (answer ? answer->DebugString() : "stream ended");
  EXPECT_FALSE(answer->ack().duplicate());
  EXPECT_EQ(StoredCaptures(), 1u);
}

TEST_F(IngestServiceTest, AnEndWhoseChunkCountDoesNotMatchIsRejected) {
  capture::Capture capture = LoadCapture(QcomTree());
  RawAgent agent(server_->target());
  ASSERT_TRUE(agent.Hello(kQcomDevice));
  std::vector<v1::AgentMessage> messages = RawAgent::CaptureMessages(capture, CaptureId(kQcomDevice, 3), kCapturedAt);
  messages.erase(messages.end() - 2);  // lose the last chunk
  ASSERT_TRUE(agent.SendAll(messages));
  std::optional<v1::ServerMessage> answer = agent.AwaitAnswer();
  ASSERT_TRUE(answer.has_value() && answer->has_rejected());
  EXPECT_FALSE(answer->rejected().retry());
  EXPECT_EQ(StoredCaptures(), 0u);
}

TEST_F(IngestServiceTest, ACaptureWhoseHeaderNamesAnotherDeviceIsRejected) {
  capture::Capture capture = LoadCapture(QcomTree());  // capture.json says sim-qcom-101
  RawAgent agent(server_->target());
  ASSERT_TRUE(agent.Hello("sim-other-7"));
  const std::string id = CaptureId("sim-other-7", 1);
  std::optional<v1::ServerMessage> answer = agent.SendCapture(capture, id, kCapturedAt);
  ASSERT_TRUE(answer.has_value() && answer->has_rejected()) << (answer ? answer->DebugString() : "stream ended");
  EXPECT_EQ(answer->rejected().capture_id(), id);
  EXPECT_FALSE(answer->rejected().retry());
  EXPECT_EQ(answer->rejected().code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_THAT(answer->rejected().message(), HasSubstr("sim-qcom-101"));
  EXPECT_FALSE(Stored(id));
  EXPECT_EQ(StoredCaptures(), 0u);
}

TEST_F(IngestServiceTest, EachCaptureKeepsTheBuildItsHeaderNames) {
  // The Hello says the device is now on .../V816 (its current build); a spooled capture taken before the
  // upgrade names the old build in its capture.json, and is stored under that one. A capture whose header
  // names no build is stored without one ("").
  capture::Capture before = LoadCapture(QcomTree());
  before.AddFile("capture.json", R"({"format": 1, "device_id": "sim-qcom-101", "captured_at": "2026-11-30T08:00:00Z",
                                    "page_size": 4096, "build_fingerprint": "Xiaomi/cupid/cupid:14/UKQ1/V815"})");
  capture::Capture unnamed = LoadCapture(QcomTree());  // its capture.json has no build_fingerprint
  RawAgent agent(server_->target());
  ASSERT_TRUE(agent.Hello(kQcomDevice));
  std::optional<v1::ServerMessage> answer = agent.SendCapture(before, CaptureId(kQcomDevice, 1), kCapturedAt);
  ASSERT_TRUE(answer.has_value() && answer->has_ack()) << (answer ? answer->DebugString() : "stream ended");
  answer = agent.SendCapture(unnamed, CaptureId(kQcomDevice, 2), "2026-11-30T09:00:00Z");
  ASSERT_TRUE(answer.has_value() && answer->has_ack()) << (answer ? answer->DebugString() : "stream ended");
  EXPECT_TRUE(agent.Close().ok());

  absl::StatusOr<std::vector<storage::StoredReport>> per_build = server_->store().LatestReportsPerBuild("");
  ASSERT_TRUE(per_build.ok()) << per_build.status();
  ASSERT_EQ(per_build->size(), 2u);  // ordered by build: NULL first
  EXPECT_EQ((*per_build)[0].capture_id, CaptureId(kQcomDevice, 2));
  EXPECT_EQ((*per_build)[0].build_fingerprint, "");
  EXPECT_EQ((*per_build)[1].capture_id, CaptureId(kQcomDevice, 1));
  EXPECT_EQ((*per_build)[1].build_fingerprint, "Xiaomi/cupid/cupid:14/UKQ1/V815");
  absl::StatusOr<std::optional<storage::DeviceRecord>> device = server_->store().GetDevice(kQcomDevice);
  ASSERT_TRUE(device.ok() && device->has_value());
  EXPECT_EQ((*device)->build_fingerprint, "Xiaomi/cupid/cupid:14/UKQ1/V816:user/release-keys");
}

TEST_F(IngestServiceTest, ABadCaptureTimeIsRejected) {
  capture::Capture capture = LoadCapture(QcomTree());
  RawAgent agent(server_->target());
  ASSERT_TRUE(agent.Hello(kQcomDevice));
  ASSERT_TRUE(agent.SendAll(RawAgent::CaptureMessages(capture, CaptureId(kQcomDevice, 4), "yesterday")));
  std::optional<v1::ServerMessage> answer = agent.AwaitAnswer();
  ASSERT_TRUE(answer.has_value() && answer->has_rejected());
  EXPECT_THAT(answer->rejected().message(), HasSubstr("captured_at"));
  EXPECT_EQ(StoredCaptures(), 0u);
}

TEST_F(IngestServiceTest, ProtocolViolationsEndTheStreamWithInvalidArgument) {
  {
    RawAgent agent(server_->target());
    v1::AgentMessage heartbeat;
    heartbeat.mutable_heartbeat();
    agent.Write(heartbeat);  // not a Hello
    grpc::Status s = agent.Close();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("Hello"));
  }
  {
    RawAgent agent(server_->target());
    EXPECT_FALSE(agent.Hello("../etc/passwd"));
    EXPECT_EQ(agent.Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  {
    RawAgent agent(server_->target());
    ASSERT_TRUE(agent.Hello(kQcomDevice));
    v1::AgentMessage chunk;
    chunk.mutable_chunk()->set_capture_id("never-begun");
    agent.Write(chunk);
    grpc::Status s = agent.Close();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("without its CaptureBegin"));
  }
  EXPECT_EQ(StoredCaptures(), 0u);
  EXPECT_FALSE(server_->server().registry().IsOnline(kQcomDevice));  // the ended stream unregistered
}

TEST_F(IngestServiceTest, ASecondStreamOfTheSameDeviceReplacesTheFirst) {
  RawAgent first(server_->target());
  ASSERT_TRUE(first.Hello(kQcomDevice));
  RawAgent second(server_->target());
  ASSERT_TRUE(second.Hello(kQcomDevice));
  EXPECT_FALSE(first.Read().has_value());  // cancelled by the server
  EXPECT_EQ(first.Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(server_->server().registry().IsOnline(kQcomDevice));
  std::optional<v1::ServerMessage> answer =
      second.SendCapture(LoadCapture(QcomTree()), CaptureId(kQcomDevice, 5), kCapturedAt);
  ASSERT_TRUE(answer.has_value() && answer->has_ack());
}

TEST(IngestServiceStoreFailureTest, AStoreFailureIsRejectedWithRetryAndTheResendIsStored) {
  absl::StatusOr<std::unique_ptr<storage::Store>> sqlite = storage::OpenSqliteStore(":memory:");
  ASSERT_TRUE(sqlite.ok());
  auto failing = std::make_unique<FailingStore>(std::move(*sqlite));
  FailingStore* store = failing.get();
  absl::StatusOr<std::unique_ptr<TestServer>> server = TestServer::StartWithStore(std::move(failing));
  ASSERT_TRUE(server.ok()) << server.status();

  capture::Capture capture = LoadCapture(QcomTree());
  RawAgent agent((*server)->target());
  ASSERT_TRUE(agent.Hello(kQcomDevice));
  const std::string id = CaptureId(kQcomDevice, 1);
  store->fail_puts = true;
  std::optional<v1::ServerMessage> answer = agent.SendCapture(capture, id, kCapturedAt);
  ASSERT_TRUE(answer.has_value() && answer->has_rejected()) << (answer ? answer->DebugString() : "stream ended");
  EXPECT_TRUE(answer->rejected().retry());  // keep it spooled
  EXPECT_EQ(answer->rejected().code(), static_cast<int>(grpc::StatusCode::UNAVAILABLE));
  EXPECT_THAT(answer->rejected().message(), HasSubstr("disk is full"));

  store->fail_puts = false;
  answer = agent.SendCapture(capture, id, kCapturedAt);
  ASSERT_TRUE(answer.has_value() && answer->has_ack());
  EXPECT_FALSE(answer->ack().duplicate());  // the failed attempt stored nothing
}

// Over a wrapped store, the tokens of the wrapped one decide: a wrapper cannot lose them (every Store
// method is pure and FailingStore forwards them), so an unauthenticated call is refused on loopback.
TEST(AuthOverAWrappedStoreTest, TokensOfTheWrappedStoreRefuseAnUnauthenticatedCall) {
  absl::StatusOr<std::unique_ptr<storage::Store>> sqlite = storage::OpenSqliteStore(":memory:");
  ASSERT_TRUE(sqlite.ok());
  absl::StatusOr<std::string> secret =
      security::AddToken(**sqlite, {"ci", security::TokenKind::kRead, ""}, kCapturedAt);
  ASSERT_TRUE(secret.ok()) << secret.status();
  absl::StatusOr<std::unique_ptr<TestServer>> server =
      TestServer::StartWithStore(std::make_unique<FailingStore>(std::move(*sqlite)));
  ASSERT_TRUE(server.ok()) << server.status();
  auto q = v1::QueryService::NewStub(grpc::CreateChannel((*server)->target(), grpc::InsecureChannelCredentials()));

  v1::ListDevicesResponse devices;
  grpc::ClientContext anonymous;
  grpc::Status s = q->ListDevices(&anonymous, v1::ListDevicesRequest(), &devices);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("requires a token"));

  grpc::ClientContext with_token;
  with_token.AddMetadata("authorization", "Bearer " + *secret);
  s = q->ListDevices(&with_token, v1::ListDevicesRequest(), &devices);
  EXPECT_TRUE(s.ok()) << s.error_message();

  RawAgent agent((*server)->target());
  EXPECT_FALSE(agent.Hello(kQcomDevice));
  EXPECT_EQ(agent.Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

// A token table the server cannot read refuses every call over real gRPC, agents and queries alike.
TEST(AuthOverAWrappedStoreTest, AnUnreadableTokenTableRefusesEveryCall) {
  absl::StatusOr<std::unique_ptr<storage::Store>> sqlite = storage::OpenSqliteStore(":memory:");
  ASSERT_TRUE(sqlite.ok());
  auto failing = std::make_unique<FailingStore>(std::move(*sqlite));
  failing->fail_token_reads = true;
  absl::StatusOr<std::unique_ptr<TestServer>> server = TestServer::StartWithStore(std::move(failing));
  ASSERT_TRUE(server.ok()) << server.status();
  auto q = v1::QueryService::NewStub(grpc::CreateChannel((*server)->target(), grpc::InsecureChannelCredentials()));

  v1::ListDevicesResponse devices;
  grpc::ClientContext context;
  grpc::Status s = q->ListDevices(&context, v1::ListDevicesRequest(), &devices);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("cannot read its tokens"));

  RawAgent agent((*server)->target());
  EXPECT_FALSE(agent.Hello(kQcomDevice));
  EXPECT_EQ(agent.Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
}

// The tokens of open agent streams are checked again every token_recheck on the injected clock: a
// revoked token's idle stream is cancelled at the next recheck, not at its next capture. The period is
// an hour, so only the test's clock can bring a recheck about.
TEST(TokenRecheckTest, ARevokedTokensIdleStreamIsCancelledAtTheNextRecheckOnTheInjectedClock) {
  testing::ManualSteadyClock clock;
  LabServerOptions options;
  options.token_recheck = 1h;
  options.token_recheck_clock = &clock;
  absl::StatusOr<std::unique_ptr<TestServer>> server = TestServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<std::string> secret =
      security::AddToken((*server)->store(), {"phone", security::TokenKind::kAgent, kQcomDevice}, kCapturedAt);
  ASSERT_TRUE(secret.ok()) << secret.status();
  RawAgent agent((*server)->target(), grpc::InsecureChannelCredentials(), *secret);
  ASSERT_TRUE(agent.Hello(kQcomDevice));
  // A recheck while the token is valid leaves the stream served.
  clock.Advance(1h);
  std::optional<v1::ServerMessage> answer =
      agent.SendCapture(LoadCapture(QcomTree()), CaptureId(kQcomDevice, 1), kCapturedAt);
  ASSERT_TRUE(answer.has_value() && answer->has_ack()) << (answer ? answer->DebugString() : "stream ended");

  ASSERT_TRUE(security::RevokeToken((*server)->store(), "phone", kCapturedAt).ok());
  clock.Advance(1h - 1ms);
  clock.Advance(1ms);  // returns once the recheck has cancelled the stream
  EXPECT_FALSE(agent.Read().has_value());
  // Cancelled by the server, not ended by the stream's own 60 s deadline.
  EXPECT_EQ(agent.Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(IngestServiceTest, QueryServiceRoundTrips) {
  capture::Capture qcom = LoadCapture(QcomTree());
  capture::Capture mtk = LoadCapture(MtkTree());
  RawAgent qcom_agent(server_->target());
  ASSERT_TRUE(qcom_agent.Hello(kQcomDevice, "Xiaomi 12"));
  std::optional<v1::ServerMessage> answer = qcom_agent.SendCapture(qcom, CaptureId(kQcomDevice, 1), kCapturedAt);
  ASSERT_TRUE(answer.has_value() && answer->has_ack());
  {
    RawAgent mtk_agent(server_->target());
    ASSERT_TRUE(mtk_agent.Hello(kMtkDevice, "Redmi K70"));
    answer = mtk_agent.SendCapture(mtk, CaptureId(kMtkDevice, 1), kCapturedAt);
    ASSERT_TRUE(answer.has_value() && answer->has_ack()) << (answer ? answer->DebugString() : "stream ended");
    ASSERT_TRUE(mtk_agent.Close().ok());
  }
  RawAgent idle_agent(server_->target());
  ASSERT_TRUE(idle_agent.Hello("sim-idle-1", "Pixel 8"));  // connected, nothing stored

  std::unique_ptr<v1::QueryService::Stub> q = QueryStub();

  // ListDevices: online from the registry, last capture and total from the store.
  {
    grpc::ClientContext ctx;
    v1::ListDevicesRequest req;
    v1::ListDevicesResponse resp;
    ASSERT_TRUE(q->ListDevices(&ctx, req, &resp).ok());
    std::map<std::string, v1::DeviceSummary> by_id;
    for (const v1::DeviceSummary& d : resp.devices()) by_id[d.device_id()] = d;
    ASSERT_EQ(by_id.size(), 3u);
    const v1::DeviceSummary& d = by_id[kQcomDevice];
    EXPECT_TRUE(d.online());
    EXPECT_EQ(d.model(), "Xiaomi 12");
    EXPECT_EQ(d.platform(), "qcom");
    EXPECT_EQ(d.last_capture_at(), kStoredAt);
    EXPECT_EQ(d.last_total_kb(), kQcomTotalKb);
    EXPECT_EQ(d.capture_count(), 1u);
    EXPECT_FALSE(by_id[kMtkDevice].online());  // its agent closed its stream
    EXPECT_EQ(by_id[kMtkDevice].last_total_kb(), kMtkTotalKb);
    EXPECT_TRUE(by_id["sim-idle-1"].online());
    EXPECT_EQ(by_id["sim-idle-1"].last_total_kb(), -1);  // unknown, not 0
    EXPECT_EQ(by_id["sim-idle-1"].last_capture_at(), "");
  }
  {
    grpc::ClientContext ctx;
    v1::ListDevicesRequest req;
    req.mutable_selector()->add_where("platform=mtk");
    v1::ListDevicesResponse resp;
    ASSERT_TRUE(q->ListDevices(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.devices_size(), 1);
    EXPECT_EQ(resp.devices(0).device_id(), kMtkDevice);
  }
  {
    grpc::ClientContext ctx;
    v1::ListDevicesRequest req;
    req.mutable_selector()->add_where("colour=red");
    v1::ListDevicesResponse resp;
    EXPECT_EQ(q->ListDevices(&ctx, req, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }

  // GetReport: latest, at a time, by capture id, and the clear errors.
  auto get_report = [&](const std::string& device, const std::string& at, const std::string& capture_id,
                        v1::GetReportResponse* resp) {
    grpc::ClientContext ctx;
    v1::GetReportRequest req;
    req.set_device_id(device);
    req.set_at(at);
    req.set_capture_id(capture_id);
    return q->GetReport(&ctx, req, resp);
  };
  {
    v1::GetReportResponse resp;
    ASSERT_TRUE(get_report(kQcomDevice, "", "", &resp).ok());
    EXPECT_EQ(resp.capture_id(), CaptureId(kQcomDevice, 1));
    EXPECT_EQ(resp.device_id(), kQcomDevice);
    EXPECT_EQ(resp.captured_at(), kStoredAt);
    EXPECT_EQ(TotalKbOf(resp.report_json()), kQcomTotalKb);
  }
  {
    v1::GetReportResponse resp;
    ASSERT_TRUE(get_report(kMtkDevice, "2026-12-01T00:00:00Z", "", &resp).ok());
    EXPECT_EQ(TotalKbOf(resp.report_json()), kMtkTotalKb);
    v1::GetReportResponse by_id;
    ASSERT_TRUE(get_report("", "", CaptureId(kMtkDevice, 1), &by_id).ok());
    EXPECT_EQ(by_id.device_id(), kMtkDevice);
  }
  {
    v1::GetReportResponse resp;
    grpc::Status before = get_report(kQcomDevice, "2026-11-29T00:00:00Z", "", &resp);
    EXPECT_EQ(before.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_THAT(before.error_message(), HasSubstr("at or before 2026-11-29T00:00:00.000Z"));
    grpc::Status unknown = get_report("sim-nobody", "", "", &resp);
    EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_THAT(unknown.error_message(), HasSubstr("unknown device \"sim-nobody\""));
    grpc::Status nothing = get_report("sim-idle-1", "", "", &resp);
    EXPECT_EQ(nothing.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_THAT(nothing.error_message(), HasSubstr("no stored capture"));
    EXPECT_EQ(get_report(kQcomDevice, "last tuesday", "", &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(get_report("", "", "", &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(get_report(kQcomDevice, "", CaptureId(kMtkDevice, 1), &resp).error_code(), grpc::StatusCode::NOT_FOUND);
  }

  // GetProcessHistory.
  auto history = [&](const std::string& process, const std::string& metric, v1::ProcessHistoryResponse* resp) {
    grpc::ClientContext ctx;
    v1::ProcessHistoryRequest req;
    req.set_device_id(kQcomDevice);
    req.set_process_name(process);
    req.set_metric(metric);
    return q->GetProcessHistory(&ctx, req, resp);
  };
  {
    v1::ProcessHistoryResponse resp;
    ASSERT_TRUE(history("com.tencent.mm", "", &resp).ok());
    ASSERT_EQ(resp.points_size(), 1);
    EXPECT_EQ(resp.points(0).pid(), 13560);
    EXPECT_TRUE(resp.points(0).value_known());
    EXPECT_EQ(resp.points(0).value_kb(), 215236);  // total_kb by default
    EXPECT_EQ(resp.points(0).captured_at(), kStoredAt);
    v1::ProcessHistoryResponse pss;
    ASSERT_TRUE(history("com.tencent.mm", "pss_kb", &pss).ok());
    ASSERT_EQ(pss.points_size(), 1);
    EXPECT_EQ(pss.points(0).value_kb(), 117116);
    v1::ProcessHistoryResponse bad;
    grpc::Status s = history("com.tencent.mm", "rss_kb; DROP TABLE captures", &bad);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("unknown process metric"));
    EXPECT_EQ(history("com.nobody", "", &bad).error_code(), grpc::StatusCode::NOT_FOUND);
    // No process: the device's own figure, total_kb by default (the fixture's expected.json: 3,567,646 kB).
    v1::ProcessHistoryResponse device_total;
    ASSERT_TRUE(history("", "", &device_total).ok());
    ASSERT_EQ(device_total.points_size(), 1);
    EXPECT_EQ(device_total.points(0).value_kb(), 3567646);
    EXPECT_EQ(history("", "no_such_kb", &bad).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }

  // GetFleet: groups and ranked rows over each device's latest report.
  auto fleet = [&](const std::string& metric, const std::string& group_by, const std::string& process,
                   v1::FleetResponse* resp) {
    grpc::ClientContext ctx;
    v1::FleetRequest req;
    req.set_metric(metric);
    req.set_group_by(group_by);
    req.set_process_name(process);
    return q->GetFleet(&ctx, req, resp);
  };
  {
    v1::FleetResponse resp;
    ASSERT_TRUE(fleet("", "platform", "", &resp).ok());
    ASSERT_GE(resp.rows_size(), 2);
    EXPECT_EQ(resp.rows(0).device_id(), kMtkDevice);  // largest first
    EXPECT_EQ(resp.rows(0).value_kb(), kMtkTotalKb);
    EXPECT_EQ(resp.rows(1).device_id(), kQcomDevice);
    EXPECT_EQ(resp.rows(1).value_kb(), kQcomTotalKb);
    std::map<std::string, v1::FleetGroup> groups;
    for (const v1::FleetGroup& g : resp.groups()) groups[g.key()] = g;
    ASSERT_EQ(groups.count("qcom"), 1u);
    EXPECT_EQ(groups["qcom"].devices(), 1u);
    EXPECT_EQ(groups["qcom"].min_kb(), kQcomTotalKb);
    EXPECT_EQ(groups["qcom"].p90_kb(), kQcomTotalKb);
    EXPECT_EQ(groups["mtk"].max_kb(), kMtkTotalKb);
  }
  {
    v1::FleetResponse resp;
    ASSERT_TRUE(fleet("process.total_kb", "model", "com.tencent.mm", &resp).ok());
    std::vector<std::pair<std::string, int64_t>> known;
    for (const v1::FleetRow& r : resp.rows()) {
      if (r.value_known()) known.emplace_back(r.device_id(), r.value_kb());
    }
    EXPECT_THAT(known, ElementsAre(Pair(kMtkDevice, 287802), Pair(kQcomDevice, 215236)));
    EXPECT_EQ(fleet("process.total_kb", "model", "", &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(fleet("device.rss_kb", "model", "", &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(fleet("", "colour", "", &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }

  // Reaccount: every stored capture recomputed from its raw form; the figures stay the fixtures'.
  {
    grpc::ClientContext ctx;
    v1::ReaccountRequest req;
    v1::ReaccountResponse resp;
    ASSERT_TRUE(q->Reaccount(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.reaccounted(), 2u);
    EXPECT_EQ(resp.failed(), 0u);
    v1::GetReportResponse report;
    ASSERT_TRUE(get_report(kQcomDevice, "", "", &report).ok());
    EXPECT_EQ(TotalKbOf(report.report_json()), kQcomTotalKb);
  }
}

TEST(NearestRankPercentileTest, IsTheSmallestValueWithAtLeastPPercentAtOrBelowIt) {
  std::vector<int64_t> v = {10, 20, 30, 40};
  EXPECT_EQ(NearestRankPercentile(v, 50), 20);  // ceil(0.5 * 4) = 2nd value
  EXPECT_EQ(NearestRankPercentile(v, 90), 40);  // ceil(0.9 * 4) = 4th
  EXPECT_EQ(NearestRankPercentile(v, 0), 10);
  EXPECT_EQ(NearestRankPercentile({7}, 90), 7);
}

TEST_F(IngestServiceTest, ASweepStoresTheAnsweringDeviceAndTimesOutTheSilentOne) {
  capture::Capture capture = LoadCapture(QcomTree());
  RawAgent answering(server_->target());
  ASSERT_TRUE(answering.Hello(kQcomDevice));
  RawAgent silent(server_->target());
  ASSERT_TRUE(silent.Hello(kMtkDevice, "Redmi K70"));

  // The answering agent: capture at once on CaptureNow, with the sweep id, as memfleet-agent does.
  std::string acked_capture;
  std::thread agent_thread([&] {
    for (;;) {
      std::optional<v1::ServerMessage> m = answering.Read();
      if (!m.has_value()) return;
      if (m->has_capture_now()) {
        std::optional<v1::ServerMessage> a =
            answering.SendCapture(capture, CaptureId(kQcomDevice, 9), kCapturedAt, m->capture_now().sweep_id());
        if (a.has_value() && a->has_ack()) acked_capture = a->ack().capture_id();
        return;
      }
    }
  });

  std::unique_ptr<v1::QueryService::Stub> q = QueryStub();
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 30s);
  v1::SweepRequest req;
  req.set_deadline_s(1);
  v1::Label* run = req.add_labels();
  run->set_key("run");
  run->set_value("1234");
  auto started = std::chrono::steady_clock::now();
  std::unique_ptr<grpc::ClientReader<v1::SweepProgress>> reader = q->StartSweep(&ctx, req);
  v1::SweepProgress p;
  std::map<std::string, v1::SweepProgress::State> last_state;
  std::map<std::string, std::string> capture_of;
  std::optional<v1::SweepProgress> final_message;
  while (reader->Read(&p)) {
    if (p.finished()) {
      final_message = p;
      continue;
    }
    last_state[p.device_id()] = p.state();
    if (!p.capture_id().empty()) capture_of[p.device_id()] = p.capture_id();
  }
  ASSERT_TRUE(reader->Finish().ok());
  agent_thread.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);  // the silent agent was not waited on

  ASSERT_TRUE(final_message.has_value());
  EXPECT_EQ(final_message->devices_total(), 2u);
  EXPECT_EQ(final_message->devices_done(), 2u);
  EXPECT_THAT(final_message->message(), HasSubstr("1 stored"));
  EXPECT_THAT(last_state, ElementsAre(Pair(kMtkDevice, v1::SweepProgress::TIMED_OUT),  // maps: by key
                                      Pair(kQcomDevice, v1::SweepProgress::STORED)));
  EXPECT_EQ(capture_of[kQcomDevice], CaptureId(kQcomDevice, 9));
  EXPECT_EQ(acked_capture, CaptureId(kQcomDevice, 9));
  EXPECT_TRUE(Stored(CaptureId(kQcomDevice, 9)));

  absl::StatusOr<std::optional<storage::SweepRecord>> rec = server_->store().GetSweep(final_message->sweep_id());
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_THAT((*rec)->states, ElementsAre(Pair(kMtkDevice, "timed_out"), Pair(kQcomDevice, "stored")));

  // The device's history names the sweep its capture answered and the sweep's labels.
  grpc::ClientContext history_ctx;
  v1::ProcessHistoryRequest history;
  history.set_device_id(kQcomDevice);
  v1::ProcessHistoryResponse points;
  ASSERT_TRUE(q->GetProcessHistory(&history_ctx, history, &points).ok());
  ASSERT_EQ(points.points_size(), 1);
  EXPECT_EQ(points.points(0).capture_id(), CaptureId(kQcomDevice, 9));
  EXPECT_EQ(points.points(0).sweep_id(), final_message->sweep_id());
  ASSERT_EQ(points.points(0).labels_size(), 1);
  EXPECT_EQ(points.points(0).labels(0).key(), "run");
  EXPECT_EQ(points.points(0).labels(0).value(), "1234");
  EXPECT_EQ(points.points(0).agent_labels_size(), 0);
}

}  // namespace
}  // namespace ingest_service_test
}  // namespace memfleet::server
