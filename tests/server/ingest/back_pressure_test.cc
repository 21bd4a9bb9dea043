// Back-pressure over real gRPC: a LabServer whose in-flight budget holds one periodic capture, over a real
// SQLite store whose commit the test holds (tests/support/failing_store.h), and raw agents. A stream whose
// capture does not fit waits unread — its agent's writes stop at the socket — and its capture is stored
// once room frees, nothing refused; a sweep's capture finds room while periodic ones wait, a sweep promotes
// a stream that waits, and a stream cancelled while it waits ends at once.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "server/ingest/inflight_budget.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/agent_ledger.h"
#include "tests/support/failing_store.h"
#include "tests/support/raw_agent.h"
#include "tests/support/sample_capture.h"
#include "tests/support/test_paths.h"
#include "tests/support/test_server.h"

namespace memfleet::server {
namespace {

using namespace std::chrono_literals;
using testing::RawAgent;

constexpr char kCapturedAt[] = "2026-11-30T08:00:00Z";
constexpr char kSweepId[] = "sweep-20261130T080000Z-0a1b2c";

// Holds the first commit until Open().
class Gate {
 public:
  void Enter() {
    absl::MutexLock lock(&mu_);
    if (++entered_ == 1) mu_.Await(absl::Condition(&open_));
  }
  bool Entered() {
    absl::MutexLock lock(&mu_);
    return entered_ > 0;
  }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }

 private:
  absl::Mutex mu_;
  int entered_ ABSL_GUARDED_BY(mu_) = 0;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
};

// An agent whose capture is sent from its own thread: its writes block while the server does not read.
class Sender {
 public:
  Sender(const std::string& target, const std::string& device, const capture::Capture& capture,
         const std::string& sweep_id = "")
      : agent_(std::make_unique<RawAgent>(target)), id_(testing::CaptureId(device, 1)) {
    hello_ = agent_->Hello(device);
    messages_ = RawAgent::CaptureMessages(capture, id_, kCapturedAt, sweep_id);
  }
  ~Sender() {
    if (thread_.joinable()) thread_.join();
  }
  bool said_hello() const { return hello_; }
  const std::string& id() const { return id_; }
  void Start() {
    thread_ = std::thread([this] {
      agent_->SendAll(messages_);
      std::optional<v1::ServerMessage> answer = agent_->AwaitAnswer();
      absl::MutexLock lock(&mu_);
      answer_ = std::move(answer);
      answered_ = true;
    });
  }
  // The ack or rejection (nullopt: the stream ended first).
  std::optional<v1::ServerMessage> Answer() {
    if (thread_.joinable()) thread_.join();
    absl::MutexLock lock(&mu_);
    return answer_;
  }
  RawAgent& agent() { return *agent_; }

 private:
  std::unique_ptr<RawAgent> agent_;
  std::string id_;
  bool hello_ = false;
  std::vector<v1::AgentMessage> messages_;
  std::thread thread_;
  absl::Mutex mu_;
  std::optional<v1::ServerMessage> answer_ ABSL_GUARDED_BY(mu_);
  bool answered_ ABSL_GUARDED_BY(mu_) = false;
};

class BackPressureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sample_ = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree"));
    const capture::Capture one = CaptureOf("dev-x");  // every device here has a name of that length
    charge_ = InflightBytesOfCapture(one.ContentBytes(), wire::NodeCount(one));
    absl::StatusOr<std::unique_ptr<storage::Store>> sqlite = storage::OpenSqliteStore(":memory:");
    ASSERT_TRUE(sqlite.ok());
    auto failing = std::make_unique<testing::FailingStore>(std::move(*sqlite));
    failing->before_put = [this] { gate_.Enter(); };
    store_ = failing.get();
    LabServerOptions options;
    // Periodic captures may hold three quarters (1.65 sample captures): one, not two. Sweeps' captures may
    // hold it all (2.2): two.
    options.max_inflight_bytes = charge_ * 11 / 5;
    absl::StatusOr<std::unique_ptr<testing::TestServer>> s = testing::TestServer::StartWithStore(std::move(failing), options);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    budget_ = server_->server().inflight();
    ASSERT_NE(budget_, nullptr);
  }
  void TearDown() override { gate_.Open(); }

  // The sample as `device`'s capture (its header names the device).
  capture::Capture CaptureOf(const std::string& device) {
    capture::Capture c = sample_;
    c.AddFile("capture.json", "{\"format\": 1, \"device_id\": \"" + device + "\"}\n");
    return c;
  }
  // Starts `device`'s capture and waits until the server holds it at the (held) commit.
  std::unique_ptr<Sender> HoldFirstCommit(const std::string& device) {
    auto first = std::make_unique<Sender>(server_->target(), device, CaptureOf(device));
    EXPECT_TRUE(first->said_hello());
    first->Start();
    EXPECT_TRUE(testing::WaitFor([this] { return gate_.Entered(); }, 60s));
    return first;
  }
  bool Stored(const std::string& id) {
    absl::StatusOr<bool> has = server_->store().HasCapture(id);
    return has.ok() && *has;
  }

  Gate gate_;
  capture::Capture sample_;
  size_t charge_ = 0;
  testing::FailingStore* store_ = nullptr;
  std::unique_ptr<testing::TestServer> server_;
  const InflightBudget* budget_ = nullptr;
};

TEST_F(BackPressureTest, AStreamWhoseCaptureDoesNotFitWaitsUnreadAndIsStoredOnceRoomFrees) {
  std::unique_ptr<Sender> first = HoldFirstCommit("dev-a");
  Sender second(server_->target(), "dev-b", CaptureOf("dev-b"));
  ASSERT_TRUE(second.said_hello());
  second.Start();
  ASSERT_TRUE(testing::WaitFor([this] { return budget_->waiting() == 1; }, 60s));
  // The first capture holds its room until it is answered; the second's Begin was read, nothing more.
  EXPECT_GE(budget_->used_bytes(), charge_);
  EXPECT_LT(budget_->used_bytes(), 2 * charge_);
  EXPECT_FALSE(Stored(first->id()));
  EXPECT_FALSE(Stored(second.id()));

  gate_.Open();
  std::optional<v1::ServerMessage> a = first->Answer();
  std::optional<v1::ServerMessage> b = second.Answer();
  ASSERT_TRUE(a.has_value() && a->has_ack()) << (a ? a->DebugString() : "stream ended");
  ASSERT_TRUE(b.has_value() && b->has_ack()) << (b ? b->DebugString() : "stream ended");
  EXPECT_FALSE(b->ack().duplicate());
  EXPECT_TRUE(Stored(first->id()));
  EXPECT_TRUE(Stored(second.id()));
  EXPECT_EQ(budget_->waiting(), 0u);
  EXPECT_TRUE(testing::WaitFor([this] { return budget_->used_bytes() == 0; }, 60s));
  EXPECT_LE(budget_->peak_used_bytes(), budget_->capacity_bytes());
}

TEST_F(BackPressureTest, ASweepsCaptureFindsRoomWhileAPeriodicOneWaits) {
  std::unique_ptr<Sender> first = HoldFirstCommit("dev-a");
  Sender periodic(server_->target(), "dev-b", CaptureOf("dev-b"));
  Sender sweep(server_->target(), "dev-c", CaptureOf("dev-c"), kSweepId);
  ASSERT_TRUE(periodic.said_hello() && sweep.said_hello());
  periodic.Start();
  ASSERT_TRUE(testing::WaitFor([this] { return budget_->waiting() == 1; }, 60s));
  sweep.Start();
  // Read whole while the periodic capture still waits: the sweep's is held at the writer behind the
  // first commit, with its room.
  ASSERT_TRUE(testing::WaitFor([this] { return budget_->used_bytes() >= 2 * charge_; }, 60s));
  EXPECT_EQ(budget_->waiting(), 1u);
  EXPECT_FALSE(Stored(periodic.id()));

  gate_.Open();
  for (Sender* s : {first.get(), &periodic, &sweep}) {
    std::optional<v1::ServerMessage> answer = s->Answer();
    EXPECT_TRUE(answer.has_value() && answer->has_ack()) << s->id();
    EXPECT_TRUE(Stored(s->id())) << s->id();
  }
}

TEST_F(BackPressureTest, ASweepPromotesAStreamThatWaitsSinceItsCaptureComesAfterTheWaitingOne) {
  std::unique_ptr<Sender> first = HoldFirstCommit("dev-a");
  Sender periodic(server_->target(), "dev-b", CaptureOf("dev-b"));
  ASSERT_TRUE(periodic.said_hello());
  periodic.Start();
  ASSERT_TRUE(testing::WaitFor([this] { return budget_->waiting() == 1; }, 60s));

  auto query = v1::QueryService::NewStub(grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::SweepRequest request;
  request.mutable_selector()->add_where("device_id=dev-b");
  request.set_deadline_s(1);
  auto progress = query->StartSweep(&context, request);
  // dev-b's periodic capture now uses the sweeps' share: read, while the first commit is still held.
  EXPECT_TRUE(testing::WaitFor([this] { return budget_->waiting() == 0 && budget_->used_bytes() >= 2 * charge_; }, 60s));
  EXPECT_FALSE(Stored(periodic.id()));
  v1::SweepProgress p;
  while (progress->Read(&p)) {
  }
  progress->Finish();

  gate_.Open();
  std::optional<v1::ServerMessage> answer = periodic.Answer();
  EXPECT_TRUE(answer.has_value() && answer->has_ack());
  EXPECT_TRUE(first->Answer().has_value());
}

TEST_F(BackPressureTest, AStreamCancelledWhileItWaitsEndsAtOnceAndItsCaptureIsNotStored) {
  std::unique_ptr<Sender> first = HoldFirstCommit("dev-a");
  auto waiting = std::make_unique<Sender>(server_->target(), "dev-b", CaptureOf("dev-b"));
  ASSERT_TRUE(waiting->said_hello());
  const std::string id = waiting->id();
  waiting->Start();
  ASSERT_TRUE(testing::WaitFor([this] { return budget_->waiting() == 1; }, 60s));
  waiting->agent().Cancel();  // the phone dropped off the network
  waiting.reset();
  EXPECT_TRUE(testing::WaitFor(
      [this] { return budget_->waiting() == 0 && !server_->server().registry().IsOnline("dev-b"); }, 60s));

  gate_.Open();
  std::optional<v1::ServerMessage> answer = first->Answer();
  EXPECT_TRUE(answer.has_value() && answer->has_ack());
  EXPECT_FALSE(Stored(id));  // still in the agent's spool, for its next connection
  EXPECT_TRUE(testing::WaitFor([this] { return budget_->used_bytes() == 0; }, 60s));
}

}  // namespace
}  // namespace memfleet::server
