// A rogue agent on loopback against the real LabServer, sending captures that are well-formed protobuf but
// lie: error values of a megabyte, paths thousands of segments deep, parent folders that multiply the
// nodes, counts that do not match what follows, a digest that does not match, no nodes at all. Each is
// refused with its code (nothing stored), and a well-behaved agent on its own stream is still served.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "memfleet/v1/agent_service.grpc.pb.h"
#include "proto/capture_digest.h"
#include "proto/capture_limits.h"
#include "server/ingest/capture_ingestor.h"
#include "tests/support/raw_agent.h"
#include "tests/support/sample_capture.h"
#include "tests/support/test_paths.h"
#include "tests/support/test_server.h"

namespace memfleet::server {
namespace rogue_capture_test {
namespace {

using testing::CaptureId;
using testing::LoadCapture;
using testing::RawAgent;
using testing::TestServer;

std::string MtkTree() { return testing::TestData("captures/mtk-mt6989/tree"); }
constexpr char kRogueDevice[] = "sim-mtk-202";  // the mtk tree's capture.json names it
constexpr char kCapturedAt[] = "2026-11-30T08:00:00Z";

class RogueCaptureTest : public ::testing::Test {
 protected:
  void StartServer(LabServerOptions options = {}) {
    absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    rogue_ = std::make_unique<RawAgent>(server_->target());
    ASSERT_TRUE(rogue_->Hello(kRogueDevice));
  }
  void SetUp() override { capture_ = LoadCapture(MtkTree()); }
  void TearDown() override {
    if (rogue_ != nullptr) {
      // A refused capture never ends the stream: the same agent's next honest capture is stored.
      std::string id = CaptureId(kRogueDevice, 99);
      std::optional<v1::ServerMessage> answer = rogue_->SendCapture(capture_, id, kCapturedAt);
      ASSERT_TRUE(answer.has_value());
      EXPECT_TRUE(answer->has_ack()) << answer->DebugString();
      EXPECT_TRUE(rogue_->Close().ok());
    }
  }

  // Sends `messages` and returns the rejection (a failure when it was acked or the stream ended).
  v1::CaptureRejected ExpectRejected(const std::vector<v1::AgentMessage>& messages) {
    EXPECT_TRUE(rogue_->SendAll(messages));
    std::optional<v1::ServerMessage> answer = rogue_->AwaitAnswer();
    EXPECT_TRUE(answer.has_value());
    if (!answer.has_value()) return {};
    EXPECT_TRUE(answer->has_rejected()) << answer->DebugString();
    return answer->rejected();
  }

  uint64_t StoredCaptures() {
    absl::StatusOr<storage::Store::Stats> stats = server_->store().GetStats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? stats->captures : 0;
  }

  // Begin, one chunk per entry group, End, with counts that match what is sent (digest left out: the
  // server checks shapes and limits before it gets to the digest).
  static std::vector<v1::AgentMessage> Handmade(const std::string& id,
                                                const std::vector<std::vector<v1::NodeEntry>>& chunks,
                                                uint32_t node_count, uint64_t content_bytes) {
    std::vector<v1::AgentMessage> out(1);
    v1::CaptureBegin* b = out[0].mutable_begin();
    b->set_capture_id(id);
    b->set_captured_at(kCapturedAt);
    b->set_node_count(node_count);
    b->set_content_bytes(content_bytes);
    uint32_t seq = 0;
    for (const std::vector<v1::NodeEntry>& entries : chunks) {
      v1::AgentMessage m;
      m.mutable_chunk()->set_capture_id(id);
      m.mutable_chunk()->set_seq(seq++);
      for (const v1::NodeEntry& e : entries) *m.mutable_chunk()->add_nodes() = e;
      out.push_back(std::move(m));
    }
    v1::AgentMessage end;
    end.mutable_end()->set_capture_id(id);
    end.mutable_end()->set_chunk_count(seq);
    out.push_back(std::move(end));
    return out;
  }

  static v1::NodeEntry Entry(const std::string& path, const std::string& content) {
    v1::NodeEntry e;
    e.set_path(path);
    e.set_content(content);
    return e;
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<RawAgent> rogue_;
  capture::Capture capture_;
};

LabServerOptions OneMebibyteCaptures() {
  LabServerOptions o;
  o.capture_limits.max_capture_bytes = 1 << 20;
  return o;
}

// Before: error names were not counted at all, and 300 of 1 MiB each were stored under a 1 MiB limit.
TEST_F(RogueCaptureTest, ErrorNodesOfAMebibyteEachAreRefused) {
  StartServer(OneMebibyteCaptures());
  std::string id = CaptureId(kRogueDevice, 1);
  std::vector<std::vector<v1::NodeEntry>> chunks;
  for (int i = 0; i < 300; ++i) {
    v1::NodeEntry e;
    e.set_path("proc/" + std::to_string(1000 + i) + "/smaps");
    e.set_errno_name(std::string(1 << 20, 'E'));
    chunks.push_back({e});
  }
  v1::CaptureRejected r = ExpectRejected(Handmade(id, chunks, 600, 0));
  EXPECT_EQ(r.capture_id(), id);
  EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kInvalidArgument)) << r.message();
  EXPECT_FALSE(r.retry());
  EXPECT_NE(r.message().find("not an errno name"), std::string::npos) << r.message();
  EXPECT_EQ(StoredCaptures(), 0u);
}

// Before: 2,000-segment paths were taken and each made ~2,000 parent folder nodes.
TEST_F(RogueCaptureTest, PathsThousandsOfSegmentsDeepAreRefused) {
  StartServer();
  std::string id = CaptureId(kRogueDevice, 2);
  std::string deep = "d";
  for (int i = 1; i < 2000; ++i) deep += "/d";
  v1::CaptureRejected r = ExpectRejected(Handmade(id, {{Entry(deep, "x")}}, 2000, 1));
  EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kInvalidArgument)) << r.message();
  EXPECT_NE(r.message().find("2000 segments (at most 32)"), std::string::npos) << r.message();
  EXPECT_EQ(StoredCaptures(), 0u);
}

// Paths within the depth and length bounds still each add up to 31 folder nodes, and 4 KiB paths add
// ~64 KiB of folder paths: both count (before: neither did).
TEST_F(RogueCaptureTest, ParentFoldersCountAgainstMaxNodes) {
  LabServerOptions o;
  o.capture_limits.max_nodes = 1000;
  StartServer(o);
  std::string id = CaptureId(kRogueDevice, 3);
  std::vector<v1::NodeEntry> entries;
  // 32 files of 32 segments: 1,024 nodes. Before, the limit was checked before each entry, so the last
  // one (at 992 nodes) went in with its 31 folders and the capture was stored over the limit.
  for (int i = 0; i < 32; ++i) {
    std::string path = "t" + std::to_string(i);
    for (uint32_t s = 1; s < wire::kMaxPathDepth; ++s) path += "/s";
    entries.push_back(Entry(path, "x"));
  }
  v1::CaptureRejected r = ExpectRejected(Handmade(id, {entries}, 1000, 32));
  EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kResourceExhausted)) << r.message();
  EXPECT_NE(r.message().find("exceeds 1000 nodes"), std::string::npos) << r.message();
  EXPECT_EQ(StoredCaptures(), 0u);
}

TEST_F(RogueCaptureTest, PathBytesCountAgainstMaxCaptureBytes) {
  StartServer(OneMebibyteCaptures());
  std::string id = CaptureId(kRogueDevice, 4);
  std::vector<std::vector<v1::NodeEntry>> chunks;
  for (int i = 0; i < 40; ++i) {  // 40 paths of 4 KiB, 32 segments: ~2.6 MB of paths, 40 bytes of content
    std::string path = std::to_string(100 + i) + std::string(124, 's');
    for (uint32_t s = 1; s < wire::kMaxPathDepth; ++s) path += "/" + std::string(127, 's');
    chunks.push_back({Entry(path, "x")});
  }
  v1::CaptureRejected r = ExpectRejected(Handmade(id, chunks, 40 * 32, 40));
  EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kResourceExhausted)) << r.message();
  EXPECT_NE(r.message().find("paths"), std::string::npos) << r.message();
  EXPECT_EQ(StoredCaptures(), 0u);
}

// Before: the announced content_bytes was never compared (±50,000 bytes were stored).
TEST_F(RogueCaptureTest, ContentBytesOffByOneIsRefused) {
  StartServer();
  for (int delta : {-1, +1}) {
    std::string id = CaptureId(kRogueDevice, delta < 0 ? 5 : 6);
    std::vector<v1::AgentMessage> m = RawAgent::CaptureMessages(capture_, id, kCapturedAt);
    m.front().mutable_begin()->set_content_bytes(capture_.ContentBytes() + delta);
    v1::CaptureRejected r = ExpectRejected(m);
    EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kDataLoss)) << delta << ": " << r.message();
    EXPECT_FALSE(r.retry());
  }
  EXPECT_EQ(StoredCaptures(), 0u);
}

// Before: node_count was only a minimum, so an understated count passed.
TEST_F(RogueCaptureTest, NodeCountNotExactIsRefused) {
  StartServer();
  for (int delta : {-1, +1}) {
    std::string id = CaptureId(kRogueDevice, delta < 0 ? 7 : 8);
    std::vector<v1::AgentMessage> m = RawAgent::CaptureMessages(capture_, id, kCapturedAt);
    m.front().mutable_begin()->set_node_count(static_cast<uint32_t>(capture_.size()) + delta);
    v1::CaptureRejected r = ExpectRejected(m);
    EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kDataLoss)) << delta << ": " << r.message();
    EXPECT_FALSE(r.retry());
  }
  EXPECT_EQ(StoredCaptures(), 0u);
}

// One content byte changed, every count intact: only the digest sees it. Refused with retry, so that the
// agent keeps the capture and resends it.
TEST_F(RogueCaptureTest, DigestMismatchIsRefusedWithRetry) {
  StartServer();
  std::string id = CaptureId(kRogueDevice, 9);
  std::vector<v1::AgentMessage> m = RawAgent::CaptureMessages(capture_, id, kCapturedAt);
  ASSERT_GE(m.size(), 3u);
  std::string* content = m[1].mutable_chunk()->mutable_nodes(0)->mutable_content();
  ASSERT_FALSE(content->empty());
  (*content)[0] = static_cast<char>((*content)[0] ^ 0x20);
  v1::CaptureRejected r = ExpectRejected(m);
  EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kDataLoss)) << r.message();
  EXPECT_TRUE(r.retry());
  EXPECT_NE(r.message().find("SHA-256"), std::string::npos) << r.message();
  EXPECT_EQ(StoredCaptures(), 0u);
}

// An agent older than the digest: stored (servers upgrade first), with the report saying it is unverified.
TEST_F(RogueCaptureTest, NoDigestIsStoredWithAWarning) {
  StartServer();
  std::string id = CaptureId(kRogueDevice, 10);
  std::vector<v1::AgentMessage> m = RawAgent::CaptureMessages(capture_, id, kCapturedAt);
  m.back().mutable_end()->clear_capture_sha256();
  ASSERT_TRUE(rogue_->SendAll(m));
  std::optional<v1::ServerMessage> answer = rogue_->AwaitAnswer();
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_ack()) << answer->DebugString();
  absl::StatusOr<std::optional<storage::StoredReport>> report = server_->store().GetReportByCapture(id);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_TRUE(report->has_value());
  EXPECT_NE((*report)->report_json.find("no capture_sha256"), std::string::npos);

  // With the digest, the same capture carries no such warning.
  std::string verified = CaptureId(kRogueDevice, 11);
  answer = rogue_->SendCapture(capture_, verified, kCapturedAt);
  ASSERT_TRUE(answer.has_value() && answer->has_ack());
  report = server_->store().GetReportByCapture(verified);
  ASSERT_TRUE(report.ok() && report->has_value());
  EXPECT_EQ((*report)->report_json.find("no capture_sha256"), std::string::npos);
}

// Before: Begin + End with no chunks was stored and became the device's latest report, all null.
TEST_F(RogueCaptureTest, AnEmptyCaptureIsRefused) {
  StartServer();
  std::string id = CaptureId(kRogueDevice, 12);
  v1::CaptureRejected r = ExpectRejected(Handmade(id, {}, 0, 0));
  EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kInvalidArgument)) << r.message();
  EXPECT_NE(r.message().find("no nodes"), std::string::npos) << r.message();
  EXPECT_EQ(StoredCaptures(), 0u);
}

}  // namespace
}  // namespace rogue_capture_test
}  // namespace memfleet::server
