// A rogue agent against the real LabServer on loopback (docs/reliability.md, "Bad input"): bytes that are
// not a protobuf, a capture claiming 1 GiB, a message larger than the server takes, an unknown (empty)
// message, a capture id of another device, chunks out of order, a capture.json nested 300,000 levels deep.
// Each time: a status is asserted, nothing is stored for that capture (or, for a bad header, the capture
// is stored with a report that says so), and a well-behaved agent on its own stream still gets its acks.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/collector.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "memfleet/v1/agent_service.grpc.pb.h"
#include "proto/capture_id.h"
#include "report/report_json.h"
#include "storage/sqlite/sqlite_db.h"
#include "tests/support/raw_agent.h"
#include "tests/support/test_paths.h"
#include "tests/support/test_server.h"
#include "tests/support/sample_capture.h"

namespace memfleet::server {
namespace rogue_agent_test {
namespace {

using testing::RawAgent;
using testing::TestServer;

std::string QcomTree() { return testing::TestData("captures/qcom-sm8450/tree"); }
constexpr char kGoodDevice[] = "sim-qcom-101";  // the qcom tree's capture.json names it
std::string MtkTree() { return testing::TestData("captures/mtk-mt6989/tree"); }
constexpr char kRogueDevice[] = "sim-mtk-202";  // the mtk tree's capture.json names it
constexpr char kCapturedAt[] = "2026-11-30T08:00:00Z";

using memfleet::testing::CaptureId;
using memfleet::testing::LoadCapture;

class RogueAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    good_ = std::make_unique<RawAgent>(server_->target());
    ASSERT_TRUE(good_->Hello(kGoodDevice));
    good_capture_ = LoadCapture(QcomTree());
    rogue_capture_ = LoadCapture(MtkTree());
  }
  void TearDown() override {
    if (server_ != nullptr) {
      // Whatever the rogue sent, the database stays whole.
      absl::StatusOr<storage::SqliteDb> db = storage::SqliteDb::Open(server_->db_path(), SQLITE_OPEN_READONLY);
      ASSERT_TRUE(db.ok()) << db.status();
      absl::StatusOr<storage::Statement> check = db->Prepare("PRAGMA integrity_check");
      ASSERT_TRUE(check.ok()) << check.status();
      ASSERT_TRUE(check->Step().ok());
      EXPECT_EQ(check->ColumnText(0), "ok");
    }
    if (good_ != nullptr) {
      grpc::Status closed = good_->Close();
      EXPECT_TRUE(closed.ok()) << closed.error_code() << ": " << closed.error_message();
    }
  }

  bool Stored(const std::string& capture_id) {
    absl::StatusOr<bool> has = server_->store().HasCapture(capture_id);
    EXPECT_TRUE(has.ok()) << has.status();
    return has.ok() && *has;
  }
  uint64_t StoredCaptures() {
    absl::StatusOr<storage::Store::Stats> stats = server_->store().GetStats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? stats->captures : 0;
  }

  // The well-behaved agent, on its own stream all along, sends its next capture: acked and stored.
  void ExpectGoodAgentStillServed() {
    std::string id = CaptureId(kGoodDevice, ++good_seq_);
    std::optional<v1::ServerMessage> answer = good_->SendCapture(good_capture_, id, kCapturedAt);
    ASSERT_TRUE(answer.has_value());
    ASSERT_TRUE(answer->has_ack()) << answer->DebugString();
    EXPECT_FALSE(answer->ack().duplicate());
    EXPECT_TRUE(Stored(id));
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<RawAgent> good_;
  int good_seq_ = 0;
  capture::Capture good_capture_;
  capture::Capture rogue_capture_;
};

TEST_F(RogueAgentTest, BytesThatAreNotAProtobufEndTheStreamWithAnError) {
  std::shared_ptr<grpc::Channel> channel = grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  grpc::CompletionQueue cq;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(&ctx, "/memfleet.v1.AgentService/Connect", &cq);
  void* tag = nullptr;
  bool ok = false;
  auto step = [&](void* want) {
    ASSERT_TRUE(cq.Next(&tag, &ok));
    ASSERT_EQ(tag, want);
  };
  call->StartCall(reinterpret_cast<void*>(1));
  step(reinterpret_cast<void*>(1));
  // Field 1 (Hello) as a length-delimited value whose length runs past the end: not a valid message.
  const std::string garbage =
      "\x0a\xff\xff\xff\x0f"
      "not a protobuf at all";
  grpc::Slice slice(garbage);
  grpc::ByteBuffer buffer(&slice, 1);
  call->Write(buffer, reinterpret_cast<void*>(2));
  step(reinterpret_cast<void*>(2));
  call->WritesDone(reinterpret_cast<void*>(3));
  step(reinterpret_cast<void*>(3));
  grpc::ByteBuffer reply;
  call->Read(&reply, reinterpret_cast<void*>(4));
  step(reinterpret_cast<void*>(4));
  EXPECT_FALSE(ok) << "the server answered bytes that are not an AgentMessage";
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  step(reinterpret_cast<void*>(5));
  EXPECT_FALSE(status.ok());
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  EXPECT_EQ(StoredCaptures(), 0u);
  ExpectGoodAgentStillServed();
}

TEST_F(RogueAgentTest, ACaptureClaimingOneGibibyteIsRejectedAndNothingStored) {
  RawAgent rogue(server_->target());
  ASSERT_TRUE(rogue.Hello(kRogueDevice));
  std::string id = CaptureId(kRogueDevice, 1);
  std::vector<v1::AgentMessage> messages = RawAgent::CaptureMessages(rogue_capture_, id, kCapturedAt);
  messages.front().mutable_begin()->set_content_bytes(1ull << 30);  // above the 256 MiB capture limit
  ASSERT_TRUE(rogue.SendAll(messages));
  std::optional<v1::ServerMessage> answer = rogue.AwaitAnswer();
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_rejected()) << answer->DebugString();
  EXPECT_EQ(answer->rejected().capture_id(), id);
  EXPECT_FALSE(answer->rejected().retry());  // it will never fit: the agent must not resend it forever
  EXPECT_NE(answer->rejected().code(), 0);
  EXPECT_FALSE(Stored(id));
  ExpectGoodAgentStillServed();
  EXPECT_TRUE(rogue.Close().ok());  // a rejected capture does not end the stream
}

TEST_F(RogueAgentTest, AMessageLargerThanTheServerTakesEndsOnlyThatStream) {
  RawAgent rogue(server_->target());
  ASSERT_TRUE(rogue.Hello(kRogueDevice));
  std::string id = CaptureId(kRogueDevice, 2);
  v1::AgentMessage begin;
  begin.mutable_begin()->set_capture_id(id);
  begin.mutable_begin()->set_captured_at(kCapturedAt);
  begin.mutable_begin()->set_node_count(1);
  begin.mutable_begin()->set_content_bytes(9u << 20);
  ASSERT_TRUE(rogue.Write(begin));
  // One node of 9 MiB in one chunk: above LabServerOptions::max_receive_message_bytes (8 MiB).
  v1::AgentMessage chunk;
  chunk.mutable_chunk()->set_capture_id(id);
  chunk.mutable_chunk()->set_seq(0);
  v1::NodeEntry* node = chunk.mutable_chunk()->add_nodes();
  node->set_path("proc/meminfo");
  node->set_content(std::string(9u << 20, 'x'));
  rogue.Write(chunk);  // may fail: the server is allowed to end the call as soon as it sees the size
  grpc::Status status = rogue.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_FALSE(Stored(id));
  ExpectGoodAgentStillServed();
}

TEST_F(RogueAgentTest, AnUnknownMessageIsIgnoredAndTheStreamGoesOn) {
  // An AgentMessage with no known oneof (an empty one, or a newer agent's message): skipped on purpose,
  // so that agents can be upgraded before servers; nothing is stored for it and the stream stays usable.
  RawAgent rogue(server_->target());
  ASSERT_TRUE(rogue.Hello(kRogueDevice));
  ASSERT_TRUE(rogue.Write(v1::AgentMessage()));
  v1::AgentMessage unknown_field;
  unknown_field.GetReflection()->MutableUnknownFields(&unknown_field)->AddVarint(99, 7);
  ASSERT_TRUE(rogue.Write(unknown_field));
  EXPECT_EQ(StoredCaptures(), 0u);
  std::string id = CaptureId(kRogueDevice, 3);
  std::optional<v1::ServerMessage> answer = rogue.SendCapture(rogue_capture_, id, kCapturedAt);
  ASSERT_TRUE(answer.has_value());
  EXPECT_TRUE(answer->has_ack()) << answer->DebugString();
  EXPECT_EQ(StoredCaptures(), 1u);
  ExpectGoodAgentStillServed();
  EXPECT_TRUE(rogue.Close().ok());
}

TEST_F(RogueAgentTest, ACaptureIdOfAnotherDeviceIsRejectedAndCannotPreemptIt) {
  RawAgent rogue(server_->target());
  ASSERT_TRUE(rogue.Hello(kRogueDevice));
  // The victim's next capture id, sent first by the rogue: were it stored, the victim's real capture would
  // later be acked as a duplicate and silently lost.
  std::string victim_id = CaptureId(kGoodDevice, 1);
  std::optional<v1::ServerMessage> answer = rogue.SendCapture(rogue_capture_, victim_id, kCapturedAt);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_rejected()) << answer->DebugString();
  EXPECT_EQ(answer->rejected().code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_FALSE(answer->rejected().retry());
  EXPECT_FALSE(Stored(victim_id));
  ExpectGoodAgentStillServed();  // sends exactly victim_id: stored, not a duplicate
  EXPECT_TRUE(rogue.Close().ok());
}

// `capture` (of kGoodDevice or kRogueDevice) with its capture.json naming `device`, as that device's
// agent would send it.
capture::Capture AsDevice(capture::Capture capture, const std::string& device) {
  const std::string* header = capture.FileContent("capture.json");
  EXPECT_NE(header, nullptr);
  if (header == nullptr) return capture;
  capture.AddFile("capture.json",
                  absl::StrReplaceAll(*header, {{absl::StrCat("\"", kGoodDevice, "\""), "\"" + device + "\""},
                                                {absl::StrCat("\"", kRogueDevice, "\""), "\"" + device + "\""}}));
  return capture;
}

TEST_F(RogueAgentTest, ADeviceIdThatIsAPrefixOfAnotherCannotPreemptItsCaptures) {
  // Device "phone" writes the next id of device "phone-42" (it starts with "phone-", which was all the
  // server checked): stored, it would make phone-42's real capture "already stored", acked and deleted.
  const std::string victim_id = *wire::MakeCaptureId("phone-42", kCapturedAt, "3f9a0c1e", 1);
  RawAgent rogue(server_->target());
  ASSERT_TRUE(rogue.Hello("phone"));
  std::optional<v1::ServerMessage> answer =
      rogue.SendCapture(AsDevice(rogue_capture_, "phone"), victim_id, kCapturedAt);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_rejected()) << answer->DebugString();
  EXPECT_EQ(answer->rejected().code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_FALSE(answer->rejected().retry());
  EXPECT_NE(answer->rejected().message().find("names device \"phone-42\""), std::string::npos)
      << answer->rejected().message();
  EXPECT_FALSE(Stored(victim_id));
  // An id that merely starts with the device id is refused too.
  answer = rogue.SendCapture(AsDevice(rogue_capture_, "phone"), "phone-anything", kCapturedAt);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_rejected()) << answer->DebugString();
  EXPECT_FALSE(Stored("phone-anything"));

  RawAgent victim(server_->target());
  ASSERT_TRUE(victim.Hello("phone-42"));
  answer = victim.SendCapture(AsDevice(good_capture_, "phone-42"), victim_id, kCapturedAt);
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_ack()) << answer->DebugString();
  EXPECT_FALSE(answer->ack().duplicate());  // stored, not "already stored"
  absl::StatusOr<std::optional<std::string>> owner = server_->store().CaptureDevice(victim_id);
  ASSERT_TRUE(owner.ok()) << owner.status();
  EXPECT_EQ(*owner, std::optional<std::string>("phone-42"));
  ExpectGoodAgentStillServed();
  EXPECT_TRUE(rogue.Close().ok());
  EXPECT_TRUE(victim.Close().ok());
}

TEST_F(RogueAgentTest, ChunksOutOfOrderAreRejectedAndNothingStored) {
  RawAgent rogue(server_->target());
  ASSERT_TRUE(rogue.Hello(kRogueDevice));
  std::string id = CaptureId(kRogueDevice, 4);
  std::vector<v1::AgentMessage> messages = RawAgent::CaptureMessages(rogue_capture_, id, kCapturedAt, "", 16 * 1024);
  ASSERT_GE(messages.size(), 4u);  // begin, two chunks or more, end
  std::swap(messages[1], messages[2]);
  ASSERT_TRUE(rogue.SendAll(messages));
  std::optional<v1::ServerMessage> answer = rogue.AwaitAnswer();
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->has_rejected()) << answer->DebugString();
  EXPECT_EQ(answer->rejected().capture_id(), id);
  EXPECT_FALSE(Stored(id));
  ExpectGoodAgentStillServed();
  EXPECT_TRUE(rogue.Close().ok());
}

TEST_F(RogueAgentTest, ADeeplyNestedCaptureHeaderIsAccountedWithAWarningAndTheServerStaysUp) {
  // Valid JSON nested 100,000 levels deep, 600 KB, under the 1 MiB header cap: the header parser's error
  // message dumped it recursively and overflowed the server's stack, ending every stream at once.
  RawAgent rogue(server_->target());
  ASSERT_TRUE(rogue.Hello(kRogueDevice));
  capture::Capture deep = rogue_capture_;
  const std::string nesting = std::string(300000, '[') + std::string(300000, ']');
  deep.AddFile("capture.json", R"({"format":)" + nesting + R"(,"device_id":"sim-mtk-202","captured_at":"t"})");
  const std::string id = CaptureId(kRogueDevice, 5);
  std::optional<v1::ServerMessage> answer = rogue.SendCapture(deep, id, kCapturedAt);
  ASSERT_TRUE(answer.has_value());
  // Stored like any capture with a bad node: the report says what was wrong, the rest is computed.
  ASSERT_TRUE(answer->has_ack()) << answer->DebugString();
  absl::StatusOr<std::optional<storage::StoredReport>> stored = server_->store().GetReportByCapture(id);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_TRUE(stored->has_value());
  absl::StatusOr<report::Report> report = report::ReportFromJson((*stored)->report_json);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->device_id, kRogueDevice);
  EXPECT_FALSE(report->processes.empty());
  EXPECT_TRUE(report->device.mem_total_kb.has_value());
  bool warned = false;
  for (const std::string& w : report->warnings) {
    warned |= w == "capture.json: nested more than 64 levels deep (at byte 73): page_size 4096 assumed";
  }
  EXPECT_TRUE(warned);

  // The same stream goes on: the rogue's next, ordinary capture is acked, and so is the good agent's.
  const std::string next = CaptureId(kRogueDevice, 6);
  answer = rogue.SendCapture(rogue_capture_, next, kCapturedAt);
  ASSERT_TRUE(answer.has_value());
  EXPECT_TRUE(answer->has_ack()) << answer->DebugString();
  EXPECT_TRUE(Stored(next));
  ExpectGoodAgentStillServed();
  EXPECT_TRUE(rogue.Close().ok());
}

}  // namespace
}  // namespace rogue_agent_test
}  // namespace memfleet::server
