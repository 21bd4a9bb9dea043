// LabServer, the wiring memfleet-server runs: listening (real port for port 0, a port already taken),
// and a graceful Stop with agents connected and a sweep running.
#include "server/lab_server.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "tests/support/raw_agent.h"
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
  // The agent got the sweep's CaptureNow, then its stream ended too.
  std::optional<v1::ServerMessage> m = agent.Read();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->capture_now().sweep_id(), last->sweep_id());
  EXPECT_FALSE(agent.Read().has_value());
  (*s)->Stop();  // idempotent
}

}  // namespace
}  // namespace memfleet::server
