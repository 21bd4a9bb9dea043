// Test support: RawAgent, one AgentService stream driven message by message from a test — the protocol
// of agent_service.proto spoken by hand (Hello, Begin/Chunk.../End, reading acks), so a test can also
// break it on purpose (chunks out of order, no Hello). Header-only.
//
//   RawAgent agent(server->target());
//   ASSERT_TRUE(agent.Hello("sim-qcom-101"));
//   std::optional<v1::ServerMessage> answer = agent.SendCapture(capture, id, "2026-11-30T08:00:00Z");
//   EXPECT_TRUE(answer->has_ack());
//
// Not thread-safe: one reader thread and one writer thread at most, as for any gRPC stream. The call has
// a 60 s deadline so a broken test fails instead of hanging.
#ifndef MEMFLEET_TESTS_SUPPORT_RAW_AGENT_H_
#define MEMFLEET_TESTS_SUPPORT_RAW_AGENT_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "memfleet/v1/agent_service.grpc.pb.h"
#include "proto/capture_codec.h"
#include "capture/capture.h"
#include "proto/capture_digest.h"

namespace memfleet::testing {

class RawAgent {
 public:
  explicit RawAgent(const std::string& target) : RawAgent(target, grpc::InsecureChannelCredentials(), "") {}
  // Over `credentials` (TLS), sending `token` (if not empty) as `authorization: Bearer <token>`.
  RawAgent(const std::string& target, const std::shared_ptr<grpc::ChannelCredentials>& credentials,
           const std::string& token, std::chrono::milliseconds deadline = std::chrono::seconds(60))
      : channel_(grpc::CreateChannel(target, credentials)), stub_(v1::AgentService::NewStub(channel_)) {
    if (!token.empty()) context_.AddMetadata("authorization", "Bearer " + token);
    context_.set_compression_algorithm(GRPC_COMPRESS_GZIP);
    context_.set_deadline(std::chrono::system_clock::now() + deadline);  // a broken test fails, never hangs
    stream_ = stub_->Connect(&context_);
  }
  ~RawAgent() {
    if (!finished_) {
      context_.TryCancel();
      Finish();
    }
  }

  bool Write(const v1::AgentMessage& m) { return stream_->Write(m); }
  std::optional<v1::ServerMessage> Read() {
    v1::ServerMessage m;
    if (!stream_->Read(&m)) return std::nullopt;
    return m;
  }

  // Hello; true when the server answered Welcome.
  bool Hello(const std::string& device_id, const std::string& model = "Xiaomi 12") {
    return SendHello(DefaultHello(device_id, model));
  }
  // The Hello that Hello() sends, for a test to change before SendHello.
  static v1::Hello DefaultHello(const std::string& device_id, const std::string& model = "Xiaomi 12") {
    v1::Hello hello;
    v1::DeviceInfo* d = hello.mutable_device();
    d->set_device_id(device_id);
    d->set_model(model);
    d->set_soc("sm8450");
    d->set_build_fingerprint("Xiaomi/cupid/cupid:14/UKQ1/V816:user/release-keys");
    d->set_kernel("5.10.168");
    d->set_page_size(4096);
    d->set_agent_version("raw-test-agent");
    return hello;
  }
  // True when the server answered `hello` with Welcome.
  bool SendHello(const v1::Hello& hello) {
    v1::AgentMessage m;
    *m.mutable_hello() = hello;
    if (!Write(m)) return false;
    std::optional<v1::ServerMessage> welcome = Read();
    return welcome.has_value() && welcome->has_welcome();
  }

  static std::vector<v1::AgentMessage> CaptureMessages(const capture::Capture& c, const std::string& id,
                                                       const std::string& at, const std::string& sweep_id = "",
                                                       size_t chunk_bytes = 64 * 1024) {
    return wire::CaptureStreamMessages(c, {id, at, sweep_id}, chunk_bytes);
  }

  bool SendAll(const std::vector<v1::AgentMessage>& messages) {
    for (const v1::AgentMessage& m : messages) {
      if (!Write(m)) return false;
    }
    return true;
  }

  // The next ack or rejection (commands in between are skipped); nullopt when the stream ended.
  std::optional<v1::ServerMessage> AwaitAnswer() {
    for (;;) {
      std::optional<v1::ServerMessage> m = Read();
      if (!m.has_value() || m->has_ack() || m->has_rejected()) return m;
    }
  }

  std::optional<v1::ServerMessage> SendCapture(const capture::Capture& c, const std::string& id,
                                               const std::string& captured_at, const std::string& sweep_id = "") {
    // A write fails once the server has ended the call, which it may do right after answering the
    // Begin (a rate-limit rejection): the answer is still there to read.
    SendAll(CaptureMessages(c, id, captured_at, sweep_id));
    return AwaitAnswer();
  }

  void WritesDone() { stream_->WritesDone(); }
  // Drains what the server still sends and returns the call's status.
  grpc::Status Finish() {
    v1::ServerMessage ignored;
    while (stream_->Read(&ignored)) {
    }
    finished_ = true;
    return stream_->Finish();
  }
  grpc::Status Close() {
    WritesDone();
    return Finish();
  }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::AgentService::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::ServerMessage>> stream_;
  bool finished_ = false;
};

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_RAW_AGENT_H_
