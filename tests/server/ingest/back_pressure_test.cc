// Back-pressure over real gRPC: a LabServer whose in-flight budget holds one periodic capture being
// received, and raw agents, one of which uploads slowly (it stops after its Begin and first chunk, holding
// its capture's room). A stream whose capture does not fit waits unread — its agent's writes stop at the
// socket — and its capture is stored once room frees, nothing refused; a sweep's capture finds room while a
// periodic one waits, a sweep promotes a stream that waits, and a stream cancelled while it waits ends at
// once. A capture waiting for its commit holds only its record: the store is a real SQLite one whose first
// commit a test can hold (tests/support/failing_store.h), and the next capture is read meanwhile.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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
namespace back_pressure_test {
namespace {

using namespace std::chrono_literals;
using testing::RawAgent;

constexpr char kCapturedAt[] = "2026-11-30T08:00:00Z";

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

// An agent whose capture is sent from its own thread — its writes block while the server does not read —
// all at once, or its Begin and first chunk first and the rest on Resume (a slow upload).
class Sender {
 public:
  Sender(const std::string& target, const std::string& device, const capture::Capture& capture,
         const std::string& sweep_id = "")
      : agent_(std::make_unique<RawAgent>(target)), id_(testing::CaptureId(device, 1)) {
    hello_ = agent_->Hello(device);
    messages_ = RawAgent::CaptureMessages(capture, id_, kCapturedAt, sweep_id);
  }
  ~Sender() {
    Resume();
    if (thread_.joinable()) thread_.join();
  }
  bool said_hello() const { return hello_; }
  const std::string& id() const { return id_; }
  // The capture answers the sweep `sweep_id` (one that asked this device: an agent's own claim is not kept).
  void AnswerSweep(const capture::Capture& capture, const std::string& sweep_id) {
    messages_ = RawAgent::CaptureMessages(capture, id_, kCapturedAt, sweep_id);
  }
  void Start(bool slow = false) {
    thread_ = std::thread([this, slow] {
      size_t sent = 0;
      if (slow) {
        agent_->SendAll({messages_[0], messages_[1]});
        sent = 2;
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(&resumed_));
      }
      agent_->SendAll(
          std::vector<v1::AgentMessage>(messages_.begin() + static_cast<std::ptrdiff_t>(sent), messages_.end()));
      std::optional<v1::ServerMessage> answer = agent_->AwaitAnswer();
      absl::MutexLock lock(&mu_);
      answer_ = std::move(answer);
      answered_ = true;
    });
  }
  void Resume() {
    absl::MutexLock lock(&mu_);
    resumed_ = true;
  }
  bool Answered() {
    absl::MutexLock lock(&mu_);
    return answered_;
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
  bool resumed_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<v1::ServerMessage> answer_ ABSL_GUARDED_BY(mu_);
  bool answered_ ABSL_GUARDED_BY(mu_) = false;
};

class BackPressureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sample_ = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree"));
    const capture::Capture one = CaptureOf("dev-x");  // every device here has a name of that length
    charge_ = InflightBytesOfCapture(one.ContentBytes(), wire::NodeCount(one));
    ASSERT_GE(RawAgent::CaptureMessages(one, "x", kCapturedAt).size(), 4u) << "a slow upload needs chunks to hold";
    LabServerOptions options;
    // Periodic captures may hold three quarters (1.8 captures being received): one, not two. Sweeps'
    // captures may hold seven eighths (2.1): two.
    options.max_inflight_bytes = charge_ * 12 / 5;
    absl::StatusOr<std::unique_ptr<storage::Store>> sqlite = storage::OpenSqliteStore(":memory:");
    ASSERT_TRUE(sqlite.ok()) << sqlite.status();
    auto failing = std::make_unique<testing::FailingStore>(std::move(*sqlite));
    failing->before_put = [this] {
      if (hold_first_commit_) gate_.Enter();
    };
    absl::StatusOr<std::unique_ptr<testing::TestServer>> s =
        testing::TestServer::StartWithStore(std::move(failing), options);
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
  // `device` uploading its capture slowly: the server holds its room, its capture is not stored yet.
  std::unique_ptr<Sender> SlowUpload(const std::string& device) {
    auto slow = std::make_unique<Sender>(server_->target(), device, CaptureOf(device));
    EXPECT_TRUE(slow->said_hello());
    slow->Start(/*slow=*/true);
    EXPECT_TRUE(testing::WaitFor([this] { return budget_->used_bytes() >= charge_; }, 60s));
    return slow;
  }
  bool Stored(const std::string& id) {
    absl::StatusOr<bool> has = server_->store().HasCapture(id);
    return has.ok() && *has;
  }

  std::atomic<bool> hold_first_commit_{false};  // read on the writer's thread
  Gate gate_;
  capture::Capture sample_;
  size_t charge_ = 0;
  std::unique_ptr<testing::TestServer> server_;
  const InflightBudget* budget_ = nullptr;
};

TEST_F(BackPressureTest, AStreamWhoseCaptureDoesNotFitWaitsUnreadAndIsStoredOnceRoomFrees) {
  std::unique_ptr<Sender> slow = SlowUpload("dev-a");
  Sender waiting(server_->target(), "dev-b", CaptureOf("dev-b"));
  ASSERT_TRUE(waiting.said_hello());
  waiting.Start();
  ASSERT_TRUE(testing::WaitFor([this] { return budget_->waiting() == 1; }, 60s));
  // Its Begin was read, nothing more: the room held is the slow upload's.
  EXPECT_GE(budget_->used_bytes(), charge_);
  EXPECT_LT(budget_->used_bytes(), 2 * charge_);
  EXPECT_FALSE(waiting.Answered());
  EXPECT_FALSE(Stored(waiting.id()));

  slow->Resume();
  std::optional<v1::ServerMessage> a = slow->Answer();
  std::optional<v1::ServerMessage> b = waiting.Answer();
  ASSERT_TRUE(a.has_value() && a->has_ack()) << (a ? a->DebugString() : "stream ended");
  ASSERT_TRUE(b.has_value() && b->has_ack()) << (b ? b->DebugString() : "stream ended");
  EXPECT_FALSE(b->ack().duplicate());
  EXPECT_TRUE(Stored(slow->id()));
  EXPECT_TRUE(Stored(waiting.id()));
  EXPECT_EQ(budget_->waiting(), 0u);
  EXPECT_TRUE(testing::WaitFor([this] { return budget_->used_bytes() == 0; }, 60s));
  EXPECT_LE(budget_->peak_used_bytes(), budget_->capacity_bytes());
}

TEST_F(BackPressureTest, ACaptureWaitingForItsCommitHoldsOnlyItsRecordAndTheNextOneIsRead) {
  hold_first_commit_ = true;
  Sender first(server_->target(), "dev-a", CaptureOf("dev-a"));
  ASSERT_TRUE(first.said_hello());
  first.Start();
  ASSERT_TRUE(testing::WaitFor([this] { return gate_.Entered(); }, 60s));
  // Accounted and encoded, at the writer: its nodes are freed, and so is their room.
  const size_t first_held = budget_->used_bytes();
  EXPECT_GT(first_held, 0u);
  EXPECT_LT(first_held, charge_);
  const size_t first_peak = budget_->peak_used_bytes();  // its whole capture, while it was received
  EXPECT_GE(first_peak, charge_);

  Sender second(server_->target(), "dev-b", CaptureOf("dev-b"));
  ASSERT_TRUE(second.said_hello());
  second.Start();
  // Two whole captures do not fit the periodic share (1.8): the second got its room only because the
  // first gave back all but its record ...
  ASSERT_TRUE(testing::WaitFor([&] { return budget_->peak_used_bytes() > first_peak; }, 60s));
  // ... and it was read, accounted and encoded while the first commit is held: its own room shrank too
  // (nothing is answered before that commit).
  EXPECT_TRUE(
      testing::WaitFor([&] { return budget_->waiting() == 0 && budget_->used_bytes() < first_held + charge_; }, 60s));
  EXPECT_FALSE(second.Answered());
  EXPECT_FALSE(Stored(first.id()));
  EXPECT_FALSE(Stored(second.id()));

  gate_.Open();
  for (Sender* s : {&first, &second}) {
    std::optional<v1::ServerMessage> answer = s->Answer();
    ASSERT_TRUE(answer.has_value() && answer->has_ack()) << s->id();
    EXPECT_FALSE(answer->ack().duplicate());
    EXPECT_TRUE(Stored(s->id())) << s->id();
  }
  EXPECT_TRUE(testing::WaitFor([this] { return budget_->used_bytes() == 0; }, 60s));
}

TEST_F(BackPressureTest, ASweepsCaptureIsStoredWhileAPeriodicOneWaits) {
  std::unique_ptr<Sender> slow = SlowUpload("dev-a");
  Sender periodic(server_->target(), "dev-b", CaptureOf("dev-b"));
  Sender sweep(server_->target(), "dev-c", CaptureOf("dev-c"));
  ASSERT_TRUE(periodic.said_hello() && sweep.said_hello());
  periodic.Start();
  ASSERT_TRUE(testing::WaitFor([this] { return budget_->waiting() == 1; }, 60s));
  // A sweep that asks dev-c: only its answer goes ahead.
  auto query = v1::QueryService::NewStub(grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::SweepRequest request;
  request.mutable_selector()->add_where("device_id=dev-c");
  request.set_deadline_s(60);
  auto progress = query->StartSweep(&context, request);
  v1::SweepProgress sent;
  ASSERT_TRUE(progress->Read(&sent));
  ASSERT_FALSE(sent.sweep_id().empty());
  sweep.AnswerSweep(CaptureOf("dev-c"), sent.sweep_id());
  sweep.Start();
  std::optional<v1::ServerMessage> answer = sweep.Answer();
  ASSERT_TRUE(answer.has_value() && answer->has_ack()) << (answer ? answer->DebugString() : "stream ended");
  EXPECT_TRUE(Stored(sweep.id()));
  EXPECT_EQ(budget_->waiting(), 1u);  // the periodic one still waits for the slow upload's room
  EXPECT_FALSE(Stored(periodic.id()));
  v1::SweepProgress p;
  bool dev_c_stored = false;
  while (progress->Read(&p)) {
    dev_c_stored |= p.device_id() == "dev-c" && p.state() == v1::SweepProgress::STORED;
  }
  EXPECT_TRUE(progress->Finish().ok());
  EXPECT_TRUE(dev_c_stored);

  slow->Resume();
  for (Sender* s : {slow.get(), &periodic}) {
    answer = s->Answer();
    EXPECT_TRUE(answer.has_value() && answer->has_ack()) << s->id();
    EXPECT_TRUE(Stored(s->id())) << s->id();
  }
}

TEST_F(BackPressureTest, ASweepPromotesAStreamThatWaitsSinceItsCaptureComesAfterTheWaitingOne) {
  std::unique_ptr<Sender> slow = SlowUpload("dev-a");
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
  // dev-b's periodic capture may now use the sweeps' room: read and stored while the slow upload holds its own.
  std::optional<v1::ServerMessage> answer = periodic.Answer();
  ASSERT_TRUE(answer.has_value() && answer->has_ack()) << (answer ? answer->DebugString() : "stream ended");
  EXPECT_TRUE(Stored(periodic.id()));
  EXPECT_FALSE(slow->Answered());
  v1::SweepProgress p;
  while (progress->Read(&p)) {
  }
  progress->Finish();

  slow->Resume();
  answer = slow->Answer();
  EXPECT_TRUE(answer.has_value() && answer->has_ack());
}

TEST_F(BackPressureTest, AStreamCancelledWhileItWaitsEndsAtOnceAndItsCaptureIsNotStored) {
  std::unique_ptr<Sender> slow = SlowUpload("dev-a");
  auto waiting = std::make_unique<Sender>(server_->target(), "dev-b", CaptureOf("dev-b"));
  ASSERT_TRUE(waiting->said_hello());
  const std::string id = waiting->id();
  waiting->Start();
  ASSERT_TRUE(testing::WaitFor([this] { return budget_->waiting() == 1; }, 60s));
  waiting->agent().Cancel();  // the phone dropped off the network
  waiting.reset();
  EXPECT_TRUE(testing::WaitFor(
      [this] { return budget_->waiting() == 0 && !server_->server().registry().IsOnline("dev-b"); }, 60s));

  slow->Resume();
  std::optional<v1::ServerMessage> answer = slow->Answer();
  EXPECT_TRUE(answer.has_value() && answer->has_ack());
  EXPECT_FALSE(Stored(id));  // still in the agent's spool, for its next connection
  EXPECT_TRUE(testing::WaitFor([this] { return budget_->used_bytes() == 0; }, 60s));
}

}  // namespace
}  // namespace back_pressure_test
}  // namespace memfleet::server
