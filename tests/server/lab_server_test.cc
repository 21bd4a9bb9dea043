// LabServer, the wiring memfleet-server runs: listening (real port for port 0, a port already taken), the
// security exposure it accepts (beyond loopback: TLS and tokens, or insecure), a graceful Stop with
// agents connected and a sweep running, and the heap trims it starts and stops with it.
#include "server/lab_server.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "server/security/token_admin.h"
#include "storage/backends/open_store.h"
#include "tests/support/manual_clock.h"
#include "tests/support/raw_agent.h"
#include "tests/support/sample_capture.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"
#include "tests/support/test_server.h"

namespace memfleet::server {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using testing::RawAgent;
using testing::TestServer;

TEST(LabServerTest, ListensOnTheRealPortForPortZero) {
  absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_GT((*s)->port(), 0);
  EXPECT_EQ((*s)->server().address(), absl::StrCat("127.0.0.1:", (*s)->port()));
  RawAgent agent((*s)->target());
  EXPECT_TRUE(agent.Hello("sim-qcom-101"));
}

TEST(LabServerTest, APortAlreadyTakenIsAnErrorNotASharedPort) {
  absl::StatusOr<std::unique_ptr<TestServer>> first = TestServer::Start();
  ASSERT_TRUE(first.ok()) << first.status();
  LabServerOptions o;
  o.db_path = (*first)->dir() + "/second.db";
  o.listen = (*first)->target();
  absl::StatusOr<std::unique_ptr<LabServer>> second = LabServer::Start(o);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr("cannot listen on " + (*first)->target()));
}

TEST(LabServerTest, BadOptionsAreErrorsForTheUser) {
  absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start();
  ASSERT_TRUE(s.ok());
  LabServerOptions o;
  o.db_path = (*s)->dir() + "/x.db";
  o.listen = "7420";
  EXPECT_EQ(LabServer::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.listen = "127.0.0.1:0";
  o.db_path = (*s)->dir() + "/no/such/folder/x.db";
  absl::StatusOr<std::unique_ptr<LabServer>> bad_db = LabServer::Start(o);
  ASSERT_FALSE(bad_db.ok());
  EXPECT_THAT(bad_db.status().message(), HasSubstr("no/such/folder/x.db"));
  o.db_path = "";
  EXPECT_EQ(LabServer::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
}

std::string TlsFile(const std::string& name) { return memfleet::testing::TestData("tls/" + name); }

// ListDevices over `credentials` with `token` ("" for none): the status the server answers.
grpc::StatusCode ListDevicesAs(const std::string& target, std::shared_ptr<grpc::ChannelCredentials> credentials,
                               const std::string& token) {
  auto stub = v1::QueryService::NewStub(grpc::CreateChannel(target, credentials));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 30s);
  if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
  v1::ListDevicesResponse response;
  return stub->ListDevices(&ctx, v1::ListDevicesRequest(), &response).error_code();
}

std::shared_ptr<grpc::ChannelCredentials> TrustingTheTestCa() {
  grpc::SslCredentialsOptions o;
  std::ifstream in(TlsFile("ca.pem"));
  o.pem_root_certs.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return grpc::SslCredentials(o);
}

TEST(LabServerTest, BeyondLoopbackItRefusesToListenWithoutTlsAndAToken) {
  memfleet::testing::TempDir dir;
  LabServerOptions o;
  o.db_path = dir.path() + "/memfleet.db";
  o.listen = "0.0.0.0:0";
  absl::StatusOr<std::unique_ptr<LabServer>> open = LabServer::Start(o);
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(open.status().message(), HasSubstr("--tls-cert"));
  EXPECT_THAT(open.status().message(), HasSubstr("--insecure"));
  // TLS without a token is not enough.
  o.tls_cert_file = TlsFile("server.pem");
  o.tls_key_file = TlsFile("server.key");
  absl::StatusOr<std::unique_ptr<LabServer>> tls_only = LabServer::Start(o);
  ASSERT_FALSE(tls_only.ok());
  EXPECT_THAT(tls_only.status().message(), HasSubstr("token add"));
  // The HTTP port's address is judged on its own: a loopback gRPC port does not cover it.
  o.tls_cert_file.clear();
  o.tls_key_file.clear();
  o.listen = "127.0.0.1:0";
  o.http.listen = "0.0.0.0:0";
  EXPECT_EQ(LabServer::Start(o).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(LabServerTest, InsecureListensBeyondLoopbackAndAsksForNoToken) {
  memfleet::testing::TempDir dir;
  LabServerOptions o;
  o.db_path = dir.path() + "/memfleet.db";
  o.listen = "0.0.0.0:0";
  o.insecure = true;
  absl::StatusOr<std::unique_ptr<LabServer>> s = LabServer::Start(o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(ListDevicesAs(absl::StrCat("127.0.0.1:", (*s)->port()), grpc::InsecureChannelCredentials(), ""),
            grpc::StatusCode::OK);
}

TEST(LabServerTest, BeyondLoopbackWithTlsAndATokenTokensStayRequiredAfterEveryOneIsRevoked) {
  memfleet::testing::TempDir dir;
  const std::string db = dir.path() + "/memfleet.db";
  std::string secret;
  {
    absl::StatusOr<std::unique_ptr<storage::Store>> store = storage::OpenStore(db);
    ASSERT_TRUE(store.ok()) << store.status();
    absl::StatusOr<std::string> added =
        security::AddToken(**store, {"boss", security::TokenKind::kAdmin, ""}, "2026-12-01T00:00:00Z");
    ASSERT_TRUE(added.ok()) << added.status();
    secret = *added;
  }
  LabServerOptions o;
  o.db_path = db;
  o.listen = "0.0.0.0:0";
  o.tls_cert_file = TlsFile("server.pem");
  o.tls_key_file = TlsFile("server.key");
  absl::StatusOr<std::unique_ptr<LabServer>> s = LabServer::Start(o);
  ASSERT_TRUE(s.ok()) << s.status();
  // By address: a name would go through gRPC's c-ares resolver, whose Debian build leaks a few bytes
  // per lookup that LeakSanitizer reports. The test certificate names 127.0.0.1 too.
  const std::string target = absl::StrCat("127.0.0.1:", (*s)->port());
  EXPECT_EQ(ListDevicesAs(target, TrustingTheTestCa(), secret), grpc::StatusCode::OK);
  EXPECT_EQ(ListDevicesAs(target, TrustingTheTestCa(), ""), grpc::StatusCode::UNAUTHENTICATED);
  ASSERT_TRUE(security::RevokeToken((*s)->store(), "boss", "2026-12-01T00:01:00Z").ok());
  // An empty tokens table on loopback lets everyone in; beyond loopback it must not.
  EXPECT_EQ(ListDevicesAs(target, TrustingTheTestCa(), ""), grpc::StatusCode::UNAUTHENTICATED);
}

TEST(LabServerTest, StopEndsAgentStreamsAndRunningSweepsWithoutWaitingForTheGracePeriod) {
  absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start();
  ASSERT_TRUE(s.ok());
  RawAgent agent((*s)->target());
  ASSERT_TRUE(agent.Hello("sim-qcom-101"));

  auto stub = v1::QueryService::NewStub(grpc::CreateChannel((*s)->target(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 30s);
  v1::SweepRequest req;
  req.set_deadline_s(600);  // the agent never answers: only Stop ends this sweep
  std::unique_ptr<grpc::ClientReader<v1::SweepProgress>> reader = stub->StartSweep(&ctx, req);
  v1::SweepProgress p;
  ASSERT_TRUE(reader->Read(&p));  // "sent" to the one agent: the sweep is running
  EXPECT_EQ(p.state(), v1::SweepProgress::SENT);
  // The agent holds the sweep's CaptureNow before the server stops: "sent" says the server queued it, and a
  // write still queued when the stream is cancelled is not delivered (seen under ThreadSanitizer).
  std::optional<v1::ServerMessage> capture_now = agent.Read();
  ASSERT_TRUE(capture_now.has_value());

  auto started = std::chrono::steady_clock::now();
  std::thread stopper([&] { (*s)->Stop(); });
  std::optional<v1::SweepProgress> last;
  std::optional<v1::SweepProgress> failed;
  while (reader->Read(&p)) {
    if (p.finished()) last = p;
    if (p.state() == v1::SweepProgress::FAILED) failed = p;
  }
  EXPECT_TRUE(reader->Finish().ok());
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 4s);  // grace is 5 s: nothing waited for it
  ASSERT_TRUE(last.has_value());
  ASSERT_TRUE(failed.has_value());
  EXPECT_THAT(failed->message(), HasSubstr("shutting down"));
  // The agent's CaptureNow was this sweep's, and its stream ended too.
  EXPECT_EQ(capture_now->capture_now().sweep_id(), last->sweep_id());
  EXPECT_FALSE(agent.Read().has_value());
  (*s)->Stop();  // idempotent
}

TEST(LabServerTest, TrimsItsHeapOnceAPeriodFromItsStartUntilItStops) {
  testing::ManualSteadyClock clock;
  std::atomic<int> trims{0};
  LabServerOptions options;
  options.heap.clock = &clock;
  options.heap.trim = [&trims] { ++trims; };
  const std::chrono::milliseconds period = options.heap.trim_period;
  absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start(options);
  ASSERT_TRUE(s.ok()) << s.status();
  clock.Advance(period - 1ms);
  EXPECT_EQ(trims.load(), 0);
  clock.Advance(1ms);
  EXPECT_EQ(trims.load(), 1);
  clock.Advance(period);
  EXPECT_EQ(trims.load(), 2);
  (*s)->Stop();
  clock.Advance(10 * period);
  EXPECT_EQ(trims.load(), 2) << "a stopped server trims no more";
}

// Three captures of one device stored long ago, two of them in one hour: with full resolution for a day and
// hourly after it, a run deletes the earlier of the two (a tie in totals goes to the later one) and keeps the
// device's latest. The runs start with the server, follow its injected clock and end when it stops.
TEST(LabServerTest, ThinsItsHistoryOnceAnIntervalFromItsStartUntilItStops) {
  testing::ManualSteadyClock clock;
  LabServerOptions options;
  options.retention.policy.full = 24h;
  options.retention.clock = &clock;
  options.delta.enabled = false;  // whole captures: no keyframe kept for a delta's sake
  const std::chrono::milliseconds interval = options.retention.interval;
  absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start(options);
  ASSERT_TRUE(s.ok()) << s.status();
  const RetentionWorker* retention = (*s)->server().retention();
  ASSERT_NE(retention, nullptr);
  clock.Advance({});
  EXPECT_EQ(retention->runs(), 1u) << "the first run is at the start";
  EXPECT_EQ(retention->last_run().captures_before, 0u);

  RawAgent agent((*s)->target());
  ASSERT_TRUE(agent.Hello("sim-qcom-101"));
  const capture::Capture capture = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree"));
  int seq = 0;
  for (const char* at : {"2026-11-01T08:00:00Z", "2026-11-01T08:10:00Z", "2026-11-01T09:00:00Z"}) {
    std::optional<v1::ServerMessage> answer = agent.SendCapture(capture, testing::CaptureId("sim-qcom-101", ++seq), at);
    ASSERT_TRUE(answer.has_value() && answer->has_ack()) << (answer ? answer->DebugString() : "stream ended");
  }
  ASSERT_TRUE(agent.Close().ok());

  clock.Advance(interval - 1ms);
  EXPECT_EQ(retention->runs(), 1u);
  clock.Advance(1ms);
  EXPECT_EQ(retention->runs(), 2u);
  EXPECT_EQ(retention->last_run().captures_before, 3u);
  EXPECT_EQ(retention->last_run().deleted, 1u);
  (*s)->Stop();
  clock.Advance(10 * interval);
  EXPECT_EQ(retention->runs(), 2u) << "a stopped server thins no more";
}

TEST(LabServerTest, RetentionIsOffUnlessItKeepsCapturesForALimitedTime) {
  absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->server().retention(), nullptr);
}

}  // namespace
}  // namespace memfleet::server
