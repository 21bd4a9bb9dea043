// CaptureWriter, group commit on a real SQLite file: captures that arrive while a commit is held share the
// next transaction, each is answered only once its transaction committed, a batch the store refuses fails
// only the captures that fail on their own, sweeps' captures go first. The store is a real one behind
// tests/support/failing_store.h, whose hook holds a commit until the test lets it go.
#include "server/ingest/capture_writer.h"

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "server/ingest/capture_ingestor.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/failing_store.h"
#include "tests/support/moving_capture.h"
#include "tests/support/sample_capture.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace memfleet::server {
namespace capture_writer_test {
namespace {

// Holds the store's first `held` commits until Open(); counts every commit that started.
class Gate {
 public:
  void Hold(int held) {
    absl::MutexLock lock(&mu_);
    held_ = held;
  }
  void Enter() {
    absl::MutexLock lock(&mu_);
    ++entered_;
    if (entered_ <= held_) mu_.Await(absl::Condition(&open_));
  }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }
  void AwaitEntered(int n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return entered_ >= n; };
    mu_.Await(absl::Condition(&reached));
  }

 private:
  absl::Mutex mu_;
  int held_ ABSL_GUARDED_BY(mu_) = 0;
  int entered_ ABSL_GUARDED_BY(mu_) = 0;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
};

// The answers, in the order the writer gave them, and whether each capture was in the database then.
class Answers {
 public:
  explicit Answers(storage::Store& store) : store_(store) {}
  CaptureWriter::Done For(const std::string& capture_id) {
    return [this, capture_id](v1::ServerMessage answer) {
      absl::StatusOr<bool> stored = store_.HasCapture(capture_id);  // the reading connection: committed only
      absl::MutexLock lock(&mu_);
      answers_.push_back({capture_id, std::move(answer), stored.ok() && *stored});
    };
  }
  struct Answer {
    std::string capture_id;
    v1::ServerMessage message;
    bool stored_when_answered;
  };
  std::vector<Answer> AwaitCount(size_t n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return answers_.size() >= n; };
    mu_.Await(absl::Condition(&reached));
    return answers_;
  }

 private:
  storage::Store& store_;
  absl::Mutex mu_;
  std::vector<Answer> answers_ ABSL_GUARDED_BY(mu_);
};

class CaptureWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<storage::Store>> s = storage::OpenSqliteStore(dir_.path() + "/memfleet.db");
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::make_unique<testing::FailingStore>(std::move(*s));
    store_->before_put = [this] { gate_.Enter(); };
    ingestor_ = std::make_unique<CaptureIngestor>(*store_, nullptr);
    writer_ = std::make_unique<CaptureWriter>(*store_, *ingestor_, CaptureWriter::Options{});
    sample_ = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree"));
    ASSERT_GT(sample_.size(), 100u);
  }
  void TearDown() override {
    gate_.Open();
    writer_->Shutdown();
  }

  // The seq-th capture of `device`, prepared as a stream's job prepares it.
  CaptureIngestor::Prepared Prepare(const std::string& device, int seq) {
    AssembledCapture a;
    a.device_id = device;
    a.capture_id = testing::CaptureId(device, seq);
    char at[48];
    std::snprintf(at, sizeof(at), "2026-11-30T08:%02d:00.000Z", seq % 60);
    a.captured_at = at;
    a.capture = testing::Later(sample_, seq);
    a.capture.AddFile("capture.json", "{\"format\": 1, \"device_id\": \"" + device + "\"}\n");
    CaptureIngestor::Prepared p = ingestor_->Prepare(std::move(a));
    EXPECT_FALSE(p.answer.has_value()) << p.answer->DebugString();
    return p;
  }
  void Submit(const std::string& device, int seq, bool urgent, Answers& answers) {
    ASSERT_TRUE(writer_->Submit(Prepare(device, seq), urgent, answers.For(testing::CaptureId(device, seq))));
  }

  testing::TempDir dir_{"memfleet-writer"};
  Gate gate_;
  std::unique_ptr<testing::FailingStore> store_;
  std::unique_ptr<CaptureIngestor> ingestor_;
  std::unique_ptr<CaptureWriter> writer_;
  capture::Capture sample_;
};

TEST_F(CaptureWriterTest, CapturesArrivingDuringACommitShareTheNextTransactionAndAreAckedAfterIt) {
  Answers answers(*store_);
  gate_.Hold(1);
  Submit("dev-a", 0, false, answers);
  gate_.AwaitEntered(1);  // the first transaction is at the store, held
  for (int seq = 1; seq <= 4; ++seq) Submit("dev-b", seq, false, answers);
  gate_.Open();
  std::vector<Answers::Answer> got = answers.AwaitCount(5);
  ASSERT_EQ(got.size(), 5u);
  for (const Answers::Answer& a : got) {
    ASSERT_TRUE(a.message.has_ack()) << a.capture_id << ": " << a.message.DebugString();
    EXPECT_EQ(a.message.ack().capture_id(), a.capture_id);
    EXPECT_FALSE(a.message.ack().duplicate());
    EXPECT_TRUE(a.stored_when_answered) << a.capture_id << " was acked before its COMMIT";
  }
  EXPECT_EQ(got[0].capture_id, testing::CaptureId("dev-a", 0));
  CaptureWriter::Stats stats = writer_->stats();
  EXPECT_EQ(stats.transactions, 2u);  // [0] alone, then [1..4] together
  EXPECT_EQ(stats.largest_batch, 4u);
  EXPECT_EQ(stats.captures, 5u);
}

TEST_F(CaptureWriterTest, ABatchTheStoreRefusesFailsOnlyTheCaptureThatFailsOnItsOwn) {
  Answers answers(*store_);
  gate_.Hold(1);
  Submit("dev-a", 0, false, answers);
  gate_.AwaitEntered(1);
  Submit("dev-b", 1, false, answers);
  // Prepared while its id was free; by its commit another device holds the id (only a database from
  // before ids were checked can, but the store must refuse it, and the batch must not take the others down).
  CaptureIngestor::Prepared taken = Prepare("dev-c", 2);
  storage::CaptureRecord squatter = taken.record;
  squatter.device_id = "dev-x";
  ASSERT_TRUE(*store_->PutCapture(squatter));  // the gate holds only the first commit
  ASSERT_TRUE(writer_->Submit(std::move(taken), false, answers.For(testing::CaptureId("dev-c", 2))));
  Submit("dev-b", 3, false, answers);
  gate_.Open();
  std::vector<Answers::Answer> got = answers.AwaitCount(4);
  std::map<std::string, Answers::Answer> by_id;
  for (Answers::Answer& a : got) by_id[a.capture_id] = a;
  for (const std::string& id :
       {testing::CaptureId("dev-a", 0), testing::CaptureId("dev-b", 1), testing::CaptureId("dev-b", 3)}) {
    EXPECT_TRUE(by_id[id].message.has_ack()) << id << ": " << by_id[id].message.DebugString();
    EXPECT_TRUE(by_id[id].stored_when_answered) << id;
  }
  const v1::ServerMessage& refused = by_id[testing::CaptureId("dev-c", 2)].message;
  ASSERT_TRUE(refused.has_rejected()) << refused.DebugString();
  EXPECT_EQ(refused.rejected().code(), static_cast<int32_t>(absl::StatusCode::kAlreadyExists));
  EXPECT_TRUE(refused.rejected().retry());  // kept in the agent's spool
  // The squatter's copy is the only one stored under the id.
  absl::StatusOr<std::optional<std::string>> owner = store_->CaptureDevice(testing::CaptureId("dev-c", 2));
  ASSERT_TRUE(owner.ok());
  EXPECT_EQ(*owner, std::optional<std::string>("dev-x"));
  // The held transaction, the failed batch of three, then each of the three alone.
  EXPECT_EQ(writer_->stats().transactions, 1u + 1u + 3u);
}

TEST_F(CaptureWriterTest, TheSameCaptureTwiceInABatchIsStoredOnceAndAckedAsADuplicateTheSecondTime) {
  Answers answers(*store_);
  gate_.Hold(1);
  Submit("dev-a", 0, false, answers);
  gate_.AwaitEntered(1);
  // An agent that reconnected resent a capture whose first copy is still on its way to the store.
  Submit("dev-b", 1, false, answers);
  Submit("dev-b", 1, false, answers);
  gate_.Open();
  std::vector<Answers::Answer> got = answers.AwaitCount(3);
  ASSERT_TRUE(got[1].message.has_ack() && got[2].message.has_ack());
  EXPECT_FALSE(got[1].message.ack().duplicate());
  EXPECT_TRUE(got[2].message.ack().duplicate());
  absl::StatusOr<storage::Store::Stats> stats = store_->GetStats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->captures, 2u);
}

TEST_F(CaptureWriterTest, SweepCapturesGoIntoTheNextTransactionBeforeTheOthers) {
  Answers answers(*store_);
  gate_.Hold(1);
  Submit("dev-a", 0, false, answers);
  gate_.AwaitEntered(1);
  Submit("dev-b", 1, false, answers);
  Submit("dev-c", 2, false, answers);
  Submit("dev-s", 3, /*urgent=*/true, answers);
  gate_.Open();
  std::vector<Answers::Answer> got = answers.AwaitCount(4);
  std::vector<std::string> order;
  for (const Answers::Answer& a : got) order.push_back(a.capture_id);
  EXPECT_EQ(order, (std::vector<std::string>{testing::CaptureId("dev-a", 0), testing::CaptureId("dev-s", 3),
                                             testing::CaptureId("dev-b", 1), testing::CaptureId("dev-c", 2)}));
}

TEST_F(CaptureWriterTest, AStoreThatFailsRejectsEveryCaptureForTheAgentToSendAgain) {
  Answers answers(*store_);
  gate_.Hold(1);
  Submit("dev-a", 0, false, answers);
  gate_.AwaitEntered(1);
  Submit("dev-a", 1, false, answers);
  Submit("dev-a", 2, false, answers);
  store_->fail_puts = true;  // the disk filled up under the held transaction
  gate_.Open();
  std::vector<Answers::Answer> got = answers.AwaitCount(3);
  for (const Answers::Answer& a : got) {
    ASSERT_TRUE(a.message.has_rejected()) << a.capture_id;
    EXPECT_TRUE(a.message.rejected().retry()) << a.capture_id;
    EXPECT_NE(a.message.rejected().message().find("database or disk is full"), std::string::npos);
    EXPECT_FALSE(a.stored_when_answered);
  }
}

TEST_F(CaptureWriterTest, ShutdownStoresWhatIsQueuedAndRefusesWhatComesAfter) {
  Answers answers(*store_);
  gate_.Hold(1);
  Submit("dev-a", 0, false, answers);
  gate_.AwaitEntered(1);
  Submit("dev-a", 1, false, answers);
  gate_.Open();
  writer_->Shutdown();
  std::vector<Answers::Answer> got = answers.AwaitCount(2);
  EXPECT_TRUE(got[0].message.has_ack() && got[1].message.has_ack());
  bool called = false;
  EXPECT_FALSE(writer_->Submit(Prepare("dev-a", 2), false, [&called](v1::ServerMessage) { called = true; }));
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace capture_writer_test
}  // namespace memfleet::server
