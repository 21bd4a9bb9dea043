// AgentStream driven without gRPC: messages go in as the stream would read them, answers are what the
// session's sink receives, captures land in a real SQLite file through the real ingestor and writer.
// The stand-in is only the sink (the gRPC stream's write side); ingest_service_test covers the real stream.
#include "server/ingest/agent_stream.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/load_tree.h"
#include "tests/support/raw_agent.h"
#include "tests/support/sample_capture.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace memfleet::server {
namespace agent_stream_test {
namespace {

constexpr char kDevice[] = "sim-qcom-101";  // the qcom-sm8450 sample's capture.json device_id
constexpr int64_t kTotalKb = 3567646;       // its expected.json device.total_kb
constexpr char kCapturedAt[] = "2026-11-30T08:00:00Z";

// The write side of a stream: keeps what the server sent.
class RecordingSink : public MessageSink {
 public:
  explicit RecordingSink(std::vector<v1::ServerMessage>* sent, absl::Mutex* mu) : sent_(sent), mu_(mu) {}
  bool Write(const v1::ServerMessage& message) override {
    absl::MutexLock lock(mu_);
    sent_->push_back(message);
    return true;
  }
  void Cancel() override {}

 private:
  std::vector<v1::ServerMessage>* sent_;
  absl::Mutex* mu_;
};

class AgentStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<storage::Store>> s = storage::OpenSqliteStore(dir_.path() + "/memfleet.db");
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    options_.now = [] { return std::string("2026-11-30T08:00:05Z"); };
    ingestor_ = std::make_unique<CaptureIngestor>(*store_, nullptr, options_.now);
    writer_ = std::make_unique<CaptureWriter>(*store_, *ingestor_, CaptureWriter::Options{});
    authorizer_ = std::make_unique<security::Authorizer>(*store_, security::AuthorizerOptions{});
    v1::DeviceInfo info = testing::RawAgent::DefaultHello(kDevice).device();
    session_ = std::make_shared<AgentSession>(info, options_.now(), std::make_unique<RecordingSink>(&sent_, &sent_mu_));
    storage::DeviceRecord device;
    device.device_id = kDevice;
    device.last_seen_at = options_.now();
    ASSERT_TRUE(store_->UpsertDevice(device).ok());
    stream_ = std::make_unique<AgentStream>(
        AgentStreamDeps{*store_, registry_, writer_.get(), nullptr, *ingestor_, *authorizer_, options_}, session_,
        device, security::Principal{});
    sample_ = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree"));
  }

  // Feeds every message; the first error, if any.
  absl::Status Feed(const std::vector<v1::AgentMessage>& messages) {
    for (const v1::AgentMessage& m : messages) {
      if (absl::Status s = stream_->OnMessage(m); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  std::vector<v1::ServerMessage> Sent() {
    absl::MutexLock lock(&sent_mu_);
    return sent_;
  }

  testing::TempDir dir_;
  std::unique_ptr<storage::Store> store_;
  IngestOptions options_;
  AgentRegistry registry_;
  std::unique_ptr<CaptureIngestor> ingestor_;
  std::unique_ptr<CaptureWriter> writer_;
  std::unique_ptr<security::Authorizer> authorizer_;  // over a store with no tokens: loopback, no auth
  absl::Mutex sent_mu_;
  std::vector<v1::ServerMessage> sent_;
  std::shared_ptr<AgentSession> session_;
  std::unique_ptr<AgentStream> stream_;
  capture::Capture sample_;
};

TEST_F(AgentStreamTest, ACaptureIsStoredAndAckedBeforeFinishReturns) {
  const std::string id = testing::CaptureId(kDevice, 1);
  ASSERT_TRUE(Feed(testing::RawAgent::CaptureMessages(sample_, id, kCapturedAt)).ok());
  stream_->Finish();  // waits for the writer: the ack is out when it returns
  std::vector<v1::ServerMessage> sent = Sent();
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(sent[0].has_ack()) << sent[0].DebugString();
  EXPECT_EQ(sent[0].ack().capture_id(), id);
  EXPECT_FALSE(sent[0].ack().duplicate());
  absl::StatusOr<std::optional<storage::StoredReport>> stored = store_->GetReportByCapture(id);
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ(nlohmann::json::parse((*stored)->report_json)["device"]["total_kb"].get<int64_t>(), kTotalKb);
}

TEST_F(AgentStreamTest, AChunkOrEndWithoutItsBeginEndsTheStream) {
  std::vector<v1::AgentMessage> messages =
      testing::RawAgent::CaptureMessages(sample_, testing::CaptureId(kDevice, 1), kCapturedAt);
  absl::Status chunk = stream_->OnMessage(messages[1]);
  EXPECT_EQ(chunk.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(chunk.message().find("without its CaptureBegin"), std::string::npos) << chunk;
  EXPECT_EQ(stream_->OnMessage(messages.back()).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(AgentStreamTest, ASecondHelloEndsTheStream) {
  v1::AgentMessage hello;
  *hello.mutable_hello() = testing::RawAgent::DefaultHello(kDevice);
  EXPECT_EQ(stream_->OnMessage(hello).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(AgentStreamTest, ARefusedBeginIsRejectedOnceAndItsChunksAreDroppedQuietly) {
  // Dated a day ahead of the server's clock: refused for good at its Begin.
  std::vector<v1::AgentMessage> messages =
      testing::RawAgent::CaptureMessages(sample_, testing::CaptureId(kDevice, 1), "2026-12-01T08:00:00Z");
  EXPECT_TRUE(Feed(messages).ok());  // the stream goes on
  stream_->Finish();
  std::vector<v1::ServerMessage> sent = Sent();
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(sent[0].has_rejected()) << sent[0].DebugString();
  EXPECT_FALSE(sent[0].rejected().retry());
  EXPECT_EQ(sent[0].rejected().code(), static_cast<int>(absl::StatusCode::kOutOfRange));
  absl::StatusOr<bool> has = store_->HasCapture(testing::CaptureId(kDevice, 1));
  ASSERT_TRUE(has.ok());
  EXPECT_FALSE(*has);
}

TEST_F(AgentStreamTest, ACaptureIdOfAnotherDeviceIsRejectedAndTheNextCaptureStillStored) {
  std::vector<v1::AgentMessage> foreign =
      testing::RawAgent::CaptureMessages(sample_, testing::CaptureId("sim-qcom-1010", 1), kCapturedAt);
  std::vector<v1::AgentMessage> own =
      testing::RawAgent::CaptureMessages(sample_, testing::CaptureId(kDevice, 2), kCapturedAt);
  ASSERT_TRUE(Feed(foreign).ok());
  ASSERT_TRUE(Feed(own).ok());
  stream_->Finish();
  std::vector<v1::ServerMessage> sent = Sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_TRUE(sent[0].has_rejected()) << sent[0].DebugString();
  ASSERT_TRUE(sent[1].has_ack()) << sent[1].DebugString();
  EXPECT_EQ(sent[1].ack().capture_id(), testing::CaptureId(kDevice, 2));
}

TEST_F(AgentStreamTest, ADropReportIsRecordedThenConfirmed) {
  v1::AgentMessage dropped;
  dropped.mutable_dropped()->set_dropped_captures(7);
  ASSERT_TRUE(stream_->OnMessage(dropped).ok());
  std::vector<v1::ServerMessage> sent = Sent();
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(sent[0].has_dropped_recorded());
  EXPECT_EQ(sent[0].dropped_recorded().dropped_captures(), 7u);
  absl::StatusOr<std::vector<storage::DeviceSummaryRow>> devices = store_->ListDevices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].device.dropped_captures, 7u);
}

}  // namespace
}  // namespace agent_stream_test
}  // namespace memfleet::server
