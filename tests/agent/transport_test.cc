// Transport against a real in-process gRPC server on 127.0.0.1 (a fake AgentService written here that acks,
// rejects, stays silent or drops the stream on demand): what is acked leaves the spool, what is not is
// resent after a reconnect, and an agent started before its server delivers once the server is up.
#include "agent/transport.h"

#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "agent/backoff.h"
#include "agent/clock.h"
#include "agent/spool.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memfleet/v1/agent_service.grpc.pb.h"
#include "proto/capture_codec.h"
#include "proto/capture_digest.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_for.h"

namespace memfleet::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using capture::Capture;

// What the fake server does when a whole capture has arrived.
enum class Verdict {
  kAck,
  kRejectRetryThenClose,  // CaptureRejected{retry=true}, then end the stream (the server restarts)
  kRejectForGood,         // CaptureRejected{retry=false}
  kSilent,                // never answer (a server that hangs before its commit)
  kCloseWithoutAck,       // end the stream before acking (a crash before the commit)
  kRejectDigestMismatch,  // CaptureRejected{DATA_LOSS, retry=true}, as the server answers a digest mismatch
  kAckWhenReleased,       // ack once the test calls ReleaseHeld() (a slow commit)
  kCloseWhenReleased,     // end the stream without an ack once the test calls ReleaseHeld()
};

struct Delivery {
  v1::CaptureBegin begin;
  v1::CaptureEnd end;
  Capture capture;
};

class FakeAgentService final : public v1::AgentService::Service {
 public:
  grpc::Status Connect(grpc::ServerContext* /*context*/,
                       grpc::ServerReaderWriter<v1::ServerMessage, v1::AgentMessage>* stream) override {
    v1::AgentMessage in;
    if (!stream->Read(&in) || !in.has_hello()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Hello first");
    }
    // What the test set before this connection: it may change them for the next one while this one ends.
    uint32_t welcome_interval_s = 0;
    std::vector<v1::ServerMessage> after_welcome;
    {
      std::lock_guard<std::mutex> lock(mu_);
      hellos_.push_back(in.hello());
      welcome_interval_s = welcome_interval_s_;
      after_welcome = after_welcome_;
      cv_.notify_all();
    }
    v1::ServerMessage welcome;
    welcome.mutable_welcome()->set_interval_s(welcome_interval_s);
    welcome.mutable_welcome()->set_server_version("fake");
    if (!stream->Write(welcome)) return grpc::Status::OK;
    for (const v1::ServerMessage& m : after_welcome) stream->Write(m);

    wire::CaptureAssembler assembler;
    v1::CaptureBegin begin;
    while (stream->Read(&in)) {
      if (in.has_dropped()) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          drop_reports_.push_back(in.dropped().dropped_captures());
          cv_.notify_all();
        }
        v1::ServerMessage out;
        out.mutable_dropped_recorded()->set_dropped_captures(in.dropped().dropped_captures());
        stream->Write(out);
      } else if (in.has_begin()) {
        begin = in.begin();
        if (!assembler.Begin(begin).ok()) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad begin");
      } else if (in.has_chunk()) {
        if (!assembler.AddChunk(in.chunk()).ok()) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad chunk");
      } else if (in.has_end()) {
        absl::StatusOr<Capture> capture = assembler.Finish(in.end());
        if (!capture.ok()) return grpc::Status(grpc::StatusCode::DATA_LOSS, "bad end");
        Verdict verdict;
        {
          std::lock_guard<std::mutex> lock(mu_);
          deliveries_.push_back({begin, in.end(), *capture});
          verdict = NextVerdictLocked();
          cv_.notify_all();
        }
        if (verdict == Verdict::kAckWhenReleased || verdict == Verdict::kCloseWhenReleased) {
          std::unique_lock<std::mutex> lock(mu_);
          cv_.wait(lock, [&] { return released_; });
          released_ = false;
        }
        v1::ServerMessage out;
        switch (verdict) {
          case Verdict::kAck:
          case Verdict::kAckWhenReleased:
            out.mutable_ack()->set_capture_id(begin.capture_id());
            stream->Write(out);
            break;
          case Verdict::kRejectRetryThenClose:
            out.mutable_rejected()->set_capture_id(begin.capture_id());
            out.mutable_rejected()->set_code(static_cast<int>(grpc::StatusCode::UNAVAILABLE));
            out.mutable_rejected()->set_message("disk full");
            out.mutable_rejected()->set_retry(true);
            stream->Write(out);
            return grpc::Status(grpc::StatusCode::UNAVAILABLE, "restarting");
          case Verdict::kRejectForGood:
            out.mutable_rejected()->set_capture_id(begin.capture_id());
            out.mutable_rejected()->set_code(static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
            out.mutable_rejected()->set_message("capture.json names another device");
            out.mutable_rejected()->set_retry(false);
            stream->Write(out);
            break;
          case Verdict::kRejectDigestMismatch:
            out.mutable_rejected()->set_capture_id(begin.capture_id());
            out.mutable_rejected()->set_code(static_cast<int>(grpc::StatusCode::DATA_LOSS));
            out.mutable_rejected()->set_message("arrived with another SHA-256");
            out.mutable_rejected()->set_retry(true);
            stream->Write(out);
            break;
          case Verdict::kSilent:
            break;
          case Verdict::kCloseWithoutAck:
          case Verdict::kCloseWhenReleased:
            return grpc::Status(grpc::StatusCode::UNAVAILABLE, "crashed");
        }
      }
    }
    return grpc::Status::OK;
  }

  // Verdicts for the next deliveries, in order; kAck once they run out.
  void SetVerdicts(std::vector<Verdict> verdicts) {
    std::lock_guard<std::mutex> lock(mu_);
    verdicts_ = std::move(verdicts);
    next_verdict_ = 0;
  }
  // Lets the capture held by a k*WhenReleased verdict be answered.
  void ReleaseHeld() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  void set_welcome_interval_s(uint32_t s) {
    std::lock_guard<std::mutex> lock(mu_);
    welcome_interval_s_ = s;
  }
  void set_after_welcome(std::vector<v1::ServerMessage> m) {
    std::lock_guard<std::mutex> lock(mu_);
    after_welcome_ = std::move(m);
  }

  bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, done);
  }
  std::vector<Delivery> deliveries() {
    std::lock_guard<std::mutex> lock(mu_);
    return deliveries_;
  }
  std::vector<v1::Hello> hellos() {
    std::lock_guard<std::mutex> lock(mu_);
    return hellos_;
  }
  std::vector<uint64_t> drop_reports() {
    std::lock_guard<std::mutex> lock(mu_);
    return drop_reports_;
  }
  // For WaitFor predicates (mu_ is held there).
  size_t deliveries_locked() const { return deliveries_.size(); }
  size_t hellos_locked() const { return hellos_.size(); }

 private:
  Verdict NextVerdictLocked() { return next_verdict_ < verdicts_.size() ? verdicts_[next_verdict_++] : Verdict::kAck; }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Verdict> verdicts_;
  size_t next_verdict_ = 0;
  bool released_ = false;
  std::vector<Delivery> deliveries_;
  std::vector<v1::Hello> hellos_;
  std::vector<uint64_t> drop_reports_;
  uint32_t welcome_interval_s_ = 0;
  std::vector<v1::ServerMessage> after_welcome_;
};

class FakeServer {
 public:
  // port 0: any free port.
  explicit FakeServer(FakeAgentService& service, int port = 0) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service);
    server_ = builder.BuildAndStart();
  }
  ~FakeServer() { Stop(); }
  void Stop() {
    if (server_ == nullptr) return;
    // The deadline cancels the open Connect streams instead of waiting for them forever.
    server_->Shutdown(std::chrono::system_clock::now() + 100ms);
    server_->Wait();
    server_.reset();
  }
  bool ok() const { return server_ != nullptr && port_ > 0; }
  int port() const { return port_; }
  std::string target() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

class RecordingEvents : public TransportEvents {
 public:
  explicit RecordingEvents(Spool* spool) : spool_(spool) {}
  void OnConnected(uint32_t interval_s) override {
    std::lock_guard<std::mutex> lock(mu_);
    intervals_.push_back(interval_s);
  }
  void OnAcked(const std::string& capture_id, bool /*duplicate*/) override {
    std::lock_guard<std::mutex> lock(mu_);
    acked_.push_back(capture_id);
  }
  void OnRejected(const std::string& capture_id, bool retry, const std::string& /*message*/) override {
    std::lock_guard<std::mutex> lock(mu_);
    rejected_.push_back(capture_id + (retry ? ":retry" : ":final"));
    // What the spool holds at the moment the rejection has been handled.
    spooled_when_rejected_.push_back(spool_->Contains(capture_id));
  }
  void OnCaptureNow(const std::string& sweep_id, bool full_smaps) override {
    std::lock_guard<std::mutex> lock(mu_);
    capture_now_.push_back(full_smaps ? sweep_id + ":full-smaps" : sweep_id);
  }
  void OnSetInterval(uint32_t interval_s) override {
    std::lock_guard<std::mutex> lock(mu_);
    intervals_.push_back(interval_s);
  }
  std::vector<std::string> acked() {
    std::lock_guard<std::mutex> l(mu_);
    return acked_;
  }
  std::vector<std::string> rejected() {
    std::lock_guard<std::mutex> l(mu_);
    return rejected_;
  }
  std::vector<bool> spooled_when_rejected() {
    std::lock_guard<std::mutex> l(mu_);
    return spooled_when_rejected_;
  }
  std::vector<std::string> capture_now() {
    std::lock_guard<std::mutex> l(mu_);
    return capture_now_;
  }
  std::vector<uint32_t> intervals() {
    std::lock_guard<std::mutex> l(mu_);
    return intervals_;
  }

 private:
  Spool* spool_;
  std::mutex mu_;
  std::vector<std::string> acked_, rejected_, capture_now_;
  std::vector<bool> spooled_when_rejected_;
  std::vector<uint32_t> intervals_;
};

// A capture with a node bigger than a chunk, so that delivery takes several chunks.
Capture TestCapture(const std::string& marker) {
  Capture c;
  c.AddFile("capture.json", "{\"format\": 1, \"device_id\": \"dev-1\", \"captured_at\": \"2026-12-02T16:15:00Z\"}\n");
  c.AddFile("proc/meminfo", "MemTotal: 16000000 kB\n" + marker);
  std::string big(600 * 1024, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i % 251);
  c.AddFile("proc/1/smaps", big);
  c.AddError("proc/1/oom_score_adj", "EACCES");
  return c;
}

class TransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "memfleet-transport-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    absl::StatusOr<std::unique_ptr<Spool>> spool = Spool::Open({dir_ + "/spool", 64ull << 20});
    ASSERT_TRUE(spool.ok()) << spool.status();
    spool_ = std::move(*spool);
    events_ = std::make_unique<RecordingEvents>(spool_.get());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  TransportOptions Options(const std::string& target) {
    TransportOptions o;
    o.servers = {target};
    o.device.set_device_id("dev-1");
    o.device.set_model("Pixel 9");
    o.device.set_page_size(4096);
    o.ack_timeout = 2s;
    o.connect_timeout = 2s;
    o.backoff.initial = 50ms;
    o.backoff.max = 200ms;
    o.rejected_retry_delay = 60s;  // a resend within a test can only come from a reconnect
    o.shutdown_grace = 500ms;
    o.chunk_bytes = 256 * 1024;
    return o;
  }

  std::string SpoolCapture(const std::string& id, const std::string& sweep_id = "") {
    EXPECT_TRUE(spool_->Put(id, "2026-12-02T16:15:00Z", sweep_id, Blob(id)).ok());
    return id;
  }
  static std::string Blob(const std::string& id) {
    return wire::EncodeStoredCapture(TestCapture(id), id, "dev-1", "2026-12-02T16:15:00Z");
  }

  // A spool in its own folder holding `id`, with room for it and not for a second capture of its size.
  std::unique_ptr<Spool> SpoolWithRoomForOne(const std::string& id) {
    const std::string dir = dir_ + "/room-for-one";
    uint64_t one = 0;
    {
      absl::StatusOr<std::unique_ptr<Spool>> sizing = Spool::Open({dir, 64ull << 20});
      EXPECT_TRUE(sizing.ok() && (*sizing)->Put(id, "2026-12-02T16:15:00Z", "", Blob(id)).ok());
      one = sizing.ok() ? (*sizing)->total_bytes() : 0;
    }
    absl::StatusOr<std::unique_ptr<Spool>> spool = Spool::Open({dir, one + one / 2});
    EXPECT_TRUE(spool.ok()) << spool.status();
    return spool.ok() ? std::move(*spool) : nullptr;
  }

  std::string dir_;
  std::unique_ptr<agent::Spool> spool_;
  std::unique_ptr<RecordingEvents> events_;
};

TEST_F(TransportTest, AckedCaptureIsDeliveredWholeAndLeavesTheSpool) {
  FakeAgentService service;
  FakeServer server(service);
  ASSERT_TRUE(server.ok());
  std::string id = SpoolCapture("dev-1-20261202T161500Z-000001", "sweep-9");

  const std::string started_at = agent::FormatRfc3339(std::chrono::system_clock::now());
  Transport transport(Options(server.target()), *spool_, *events_);
  transport.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return spool_->count() == 0; }, 10s)) << "never acked";
  transport.Stop();
  const std::string stopped_at = agent::FormatRfc3339(std::chrono::system_clock::now());

  std::vector<Delivery> d = service.deliveries();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].begin.capture_id(), id);
  EXPECT_EQ(d[0].begin.captured_at(), "2026-12-02T16:15:00Z");
  EXPECT_EQ(d[0].begin.sweep_id(), "sweep-9");
  Capture want = TestCapture(id);
  EXPECT_EQ(d[0].begin.node_count(), want.size());
  EXPECT_EQ(d[0].begin.content_bytes(), want.ContentBytes());
  ASSERT_EQ(d[0].capture.size(), want.size());
  EXPECT_TRUE(*d[0].capture.FileContent("proc/1/smaps") == *want.FileContent("proc/1/smaps"));
  EXPECT_EQ(d[0].capture.Find("proc/1/oom_score_adj")->content, "EACCES");
  // The digest of what was spooled, which the fake's assembler verified.
  EXPECT_EQ(d[0].end.capture_sha256(), wire::CaptureSha256(want));

  std::vector<v1::Hello> hellos = service.hellos();
  ASSERT_EQ(hellos.size(), 1u);
  EXPECT_EQ(hellos[0].device().device_id(), "dev-1");
  EXPECT_EQ(hellos[0].device().model(), "Pixel 9");
  EXPECT_EQ(hellos[0].spooled_captures(), 1u);
  // The agent's wall clock as it said Hello, for the server's clock skew (RFC 3339 compares as text).
  EXPECT_GE(hellos[0].agent_time(), started_at);
  EXPECT_LE(hellos[0].agent_time(), stopped_at);
  EXPECT_EQ(events_->acked(), std::vector<std::string>{id});
}

TEST_F(TransportTest, CaptureSpooledWhileConnectedIsSentAtOnce) {
  FakeAgentService service;
  FakeServer server(service);
  ASSERT_TRUE(server.ok());
  Transport transport(Options(server.target()), *spool_, *events_);
  transport.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return transport.connected(); }, 10s));
  std::string id = SpoolCapture("dev-1-20261202T161500Z-000002");
  transport.CaptureSpooled(id);
  ASSERT_TRUE(testing::WaitFor([&] { return spool_->count() == 0; }, 10s));
  EXPECT_EQ(service.deliveries().size(), 1u);
  EXPECT_EQ(transport.sessions(), 1u);
}

TEST_F(TransportTest, RejectedWithRetryStaysSpooledAndIsResentAfterReconnect) {
  FakeAgentService service;
  service.SetVerdicts({Verdict::kRejectRetryThenClose});
  FakeServer server(service);
  ASSERT_TRUE(server.ok());
  std::string id = SpoolCapture("dev-1-20261202T161500Z-000003");

  Transport transport(Options(server.target()), *spool_, *events_);
  transport.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return spool_->count() == 0; }, 10s)) << "never delivered after the rejection";
  transport.Stop();

  EXPECT_EQ(events_->rejected(), std::vector<std::string>{id + ":retry"});
  EXPECT_EQ(events_->spooled_when_rejected(), std::vector<bool>{true});
  // Sent, rejected, the stream closed; sent again on the second stream and acked.
  EXPECT_EQ(service.deliveries().size(), 2u);
  EXPECT_EQ(service.hellos().size(), 2u);
  EXPECT_EQ(transport.sessions(), 2u);
  EXPECT_EQ(events_->acked(), std::vector<std::string>{id});
}

TEST_F(TransportTest, RejectedForGoodIsDroppedAndNotResent) {
  FakeAgentService service;
  service.SetVerdicts({Verdict::kRejectForGood});
  FakeServer server(service);
  ASSERT_TRUE(server.ok());
  std::string bad = SpoolCapture("dev-1-20261202T161500Z-000004");
  std::string good = SpoolCapture("dev-1-20261202T161600Z-000005");

  Transport transport(Options(server.target()), *spool_, *events_);
  transport.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return spool_->count() == 0; }, 10s));
  transport.Stop();
  EXPECT_EQ(events_->rejected(), std::vector<std::string>{bad + ":final"});
  EXPECT_EQ(events_->acked(), std::vector<std::string>{good});
  EXPECT_EQ(service.deliveries().size(), 2u);
  EXPECT_EQ(spool_->dropped(), 0u);  // the server knows about it: not a spool drop
}

// A digest mismatch may be the wire's: the capture stays spooled and is resent, and a later clean
// delivery is acked as usual.
TEST_F(TransportTest, DigestMismatchIsResentAndThenAcked) {
  FakeAgentService service;
  service.SetVerdicts({Verdict::kRejectDigestMismatch, Verdict::kRejectDigestMismatch});
  FakeServer server(service);
  ASSERT_TRUE(server.ok());
  std::string id = SpoolCapture("dev-1-20261202T161500Z-000011");
  TransportOptions o = Options(server.target());
  o.rejected_retry_delay = 10ms;
  o.max_integrity_retries = 2;
  Transport transport(o, *spool_, *events_);
  transport.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return !events_->acked().empty(); }, 10s));
  transport.Stop();
  EXPECT_EQ(events_->rejected(), (std::vector<std::string>{id + ":retry", id + ":retry"}));
  EXPECT_EQ(service.deliveries().size(), 3u);
  EXPECT_EQ(spool_->count(), 0u);
  EXPECT_EQ(spool_->dropped(), 0u);
}

// A capture that never verifies is not resent forever: after max_integrity_retries resends it is dropped
// from the spool and counted as dropped (and that drop reported to the server).
TEST_F(TransportTest, DigestMismatchEveryTimeIsDroppedAndCountedAfterTheRetries) {
  FakeAgentService service;
  service.SetVerdicts({Verdict::kRejectDigestMismatch, Verdict::kRejectDigestMismatch, Verdict::kRejectDigestMismatch,
                       Verdict::kRejectDigestMismatch});
  FakeServer server(service);
  ASSERT_TRUE(server.ok());
  std::string id = SpoolCapture("dev-1-20261202T161500Z-000012");
  TransportOptions o = Options(server.target());
  o.rejected_retry_delay = 10ms;
  o.max_integrity_retries = 2;
  Transport transport(o, *spool_, *events_);
  transport.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return spool_->count() == 0 && !service.drop_reports().empty(); }, 10s));
  transport.Stop();
  EXPECT_EQ(events_->rejected(), (std::vector<std::string>{id + ":retry", id + ":retry", id + ":final"}));
  EXPECT_EQ(events_->spooled_when_rejected(), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(service.deliveries().size(), 3u);  // sent once, resent twice
  EXPECT_EQ(service.drop_reports(), std::vector<uint64_t>{1});
}

TEST_F(TransportTest, ServerDownAtStartGetsTheCaptureOnceItIsUp) {
  // A port bound but not listening: connections are refused, and no other process can take it.
  auto reservation = std::make_unique<testing::LoopbackPortReservation>();
  const int port = reservation->port();
  std::string id = SpoolCapture("dev-1-20261202T161500Z-000006");
  Transport transport(Options(reservation->address()), *spool_, *events_);
  transport.Start();
  // Several refused attempts, each followed by a backoff wait (50 ms doubling to 200 ms).
  ASSERT_TRUE(testing::WaitFor([&] { return transport.failed_connects() >= 3; }, 10s));
  EXPECT_FALSE(transport.connected());
  EXPECT_TRUE(spool_->Contains(id));

  FakeAgentService service;
  FakeServer server(service, port);
  ASSERT_TRUE(server.ok()) << "cannot listen on the reserved port " << port;
  reservation.reset();
  ASSERT_TRUE(testing::WaitFor([&] { return spool_->count() == 0; }, 10s)) << "not delivered after the server came up";
  transport.Stop();
  // Stored once: the first session that reached the server delivered it, and nothing was resent.
  EXPECT_EQ(service.deliveries().size(), 1u);
  EXPECT_EQ(service.deliveries()[0].begin.capture_id(), id);
}

TEST_F(TransportTest, ADeadFirstServerFailsOverToTheNextWithoutABackoffWait) {
  auto down = std::make_unique<testing::LoopbackPortReservation>();
  FakeAgentService service;
  FakeServer server(service);
  ASSERT_TRUE(server.ok());
  std::string id = SpoolCapture("dev-1-20261202T161500Z-000011");
  TransportOptions options = Options(down->address());
  options.servers.push_back(server.target());
  // A backoff wait longer than the test's patience: delivery within it proves the second server was
  // tried straight after the first refused.
  options.backoff.initial = 60s;
  options.backoff.max = 60s;
  Transport transport(options, *spool_, *events_);
  transport.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return spool_->count() == 0; }, 10s)) << "the second server was not tried at once";
  EXPECT_EQ(transport.failed_connects(), 1u);
  EXPECT_EQ(transport.sessions(), 1u);
  transport.Stop();
  ASSERT_EQ(service.deliveries().size(), 1u);
  EXPECT_EQ(service.deliveries()[0].begin.capture_id(), id);
}

TEST_F(TransportTest, AServerThatDropsTheStreamHandsTheCaptureToTheNext) {
  FakeAgentService first_service;
  first_service.SetVerdicts({Verdict::kCloseWithoutAck});  // crashes before its commit
  FakeServer first(first_service);
  FakeAgentService second_service;
  FakeServer second(second_service);
  ASSERT_TRUE(first.ok() && second.ok());
  std::string id = SpoolCapture("dev-1-20261202T161500Z-000012");
  TransportOptions options = Options(first.target());
  options.servers.push_back(second.target());
  Transport transport(options, *spool_, *events_);
  transport.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return spool_->count() == 0; }, 10s));
  transport.Stop();
  // Sent to the first, which never acked; resent to the second, which did. The first never saw it again.
  ASSERT_EQ(first_service.deliveries().size(), 1u);
  ASSERT_EQ(second_service.deliveries().size(), 1u);
  EXPECT_EQ(second_service.deliveries()[0].begin.capture_id(), id);
  EXPECT_EQ(events_->acked(), std::vector<std::string>{id});
  EXPECT_EQ(transport.sessions(), 2u);
}

TEST_F(TransportTest, MissingAckTearsDownAndResends) {
  FakeAgentService service;
  service.SetVerdicts({Verdict::kSilent});
  FakeServer server(service);
  ASSERT_TRUE(server.ok());
  std::string id = SpoolCapture("dev-1-20261202T161500Z-000007");
  TransportOptions options = Options(server.target());
  options.ack_timeout = 300ms;

  Transport transport(options, *spool_, *events_);
  transport.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return spool_->count() == 0; }, 10s));
  transport.Stop();
  // The server ignored the first copy; the resend after the ack timeout on a new stream was acked.
  EXPECT_EQ(service.deliveries().size(), 2u);
  EXPECT_GE(service.hellos().size(), 2u);
  EXPECT_EQ(events_->acked(), std::vector<std::string>{id});
}

TEST_F(TransportTest, StreamClosedBeforeTheAckResends) {
  FakeAgentService service;
  service.SetVerdicts({Verdict::kCloseWithoutAck});
  FakeServer server(service);
  ASSERT_TRUE(server.ok());
  SpoolCapture("dev-1-20261202T161500Z-000008");
  Transport transport(Options(server.target()), *spool_, *events_);
  transport.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return spool_->count() == 0; }, 10s));
  transport.Stop();
  EXPECT_EQ(service.deliveries().size(), 2u);
}

// A transport sends `first` from a spool with room for one capture; while the fake server holds it
// (`verdict`), `second` is spooled and pushes `first` out of the full spool.
struct HeldCaptureRun {
  FakeAgentService service;
  std::unique_ptr<FakeServer> server;
  std::unique_ptr<Spool> spool;
  std::unique_ptr<RecordingEvents> events;
  std::unique_ptr<Transport> transport;  // last: stopped before what it uses goes
};

class InFlightDeletionTest : public TransportTest {
 protected:
  void DeleteWhileHeld(Verdict verdict, const std::string& first, const std::string& second) {
    run_.service.SetVerdicts({verdict});
    run_.server = std::make_unique<FakeServer>(run_.service);
    ASSERT_TRUE(run_.server->ok());
    run_.spool = SpoolWithRoomForOne(first);
    ASSERT_NE(run_.spool, nullptr);
    run_.events = std::make_unique<RecordingEvents>(run_.spool.get());
    run_.transport = std::make_unique<Transport>(Options(run_.server->target()), *run_.spool, *run_.events);
    run_.transport->Start();
    ASSERT_TRUE(run_.service.WaitFor([&] { return run_.service.deliveries_locked() == 1; }, 10s));
    ASSERT_TRUE(run_.spool->Put(second, "2026-12-02T16:20:00Z", "", Blob(second)).ok());
    EXPECT_FALSE(run_.spool->Contains(first));  // the bound holds
    EXPECT_EQ(run_.spool->dropped(), 0u);       // its fate is not known yet
  }
  HeldCaptureRun run_;
};

// Acked, the deleted capture was stored: no drop is counted or reported.
TEST_F(InFlightDeletionTest, CaptureDeletedWhileInFlightAndThenAckedIsNotADrop) {
  const std::string first = "dev-1-20261202T161500Z-000021", second = "dev-1-20261202T162000Z-000022";
  ASSERT_NO_FATAL_FAILURE(DeleteWhileHeld(Verdict::kAckWhenReleased, first, second));
  run_.service.ReleaseHeld();
  run_.transport->CaptureSpooled(second);
  ASSERT_TRUE(testing::WaitFor([&] { return run_.events->acked().size() == 2; }, 10s));
  EXPECT_EQ(run_.events->acked(), (std::vector<std::string>{first, second}));
  EXPECT_EQ(run_.spool->dropped(), 0u);
  run_.transport->Stop();
  EXPECT_TRUE(run_.service.drop_reports().empty());
  EXPECT_EQ(run_.service.hellos().size(), 1u);
}

// When the stream ends before its ack, it is lost: one drop, told to the server on reconnect.
TEST_F(InFlightDeletionTest, CaptureDeletedWhileInFlightAndNeverAckedIsOneDrop) {
  const std::string first = "dev-1-20261202T161500Z-000031", second = "dev-1-20261202T162000Z-000032";
  ASSERT_NO_FATAL_FAILURE(DeleteWhileHeld(Verdict::kCloseWhenReleased, first, second));
  run_.service.ReleaseHeld();
  ASSERT_TRUE(testing::WaitFor([&] { return run_.events->acked() == std::vector<std::string>{second}; }, 10s));
  run_.transport->Stop();
  const std::vector<v1::Hello> hellos = run_.service.hellos();
  ASSERT_EQ(hellos.size(), 2u);
  EXPECT_EQ(hellos[0].dropped_captures(), 0u);
  EXPECT_EQ(hellos[1].dropped_captures(), 1u);
  EXPECT_EQ(run_.spool->dropped(), 0u);  // the server welcomed that Hello: reported
  ASSERT_EQ(run_.service.deliveries().size(), 2u);
  EXPECT_EQ(run_.service.deliveries()[1].begin.capture_id(), second);
}

TEST_F(TransportTest, DroppedCountIsReportedAndClearedAfterWelcome) {
  // A capture too big for the spool is dropped and counted before any connection.
  absl::StatusOr<std::unique_ptr<agent::Spool>> tiny = agent::Spool::Open({dir_ + "/tiny", 100});
  ASSERT_TRUE(tiny.ok());
  EXPECT_FALSE((*tiny)->Put("x", "2026-12-02T16:15:00Z", "", std::string(200, 'x')).ok());
  ASSERT_EQ((*tiny)->dropped(), 1u);

  FakeAgentService service;
  FakeServer server(service);
  ASSERT_TRUE(server.ok());
  RecordingEvents events(tiny->get());
  Transport transport(Options(server.target()), **tiny, events);
  transport.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return transport.connected(); }, 10s));
  ASSERT_EQ(service.hellos().size(), 1u);
  EXPECT_EQ(service.hellos()[0].dropped_captures(), 1u);
  EXPECT_TRUE(testing::WaitFor([&] { return (*tiny)->dropped() == 0; }, 10s));
}

// Before, drops while connected waited for the next Hello (a reconnect, maybe days later).
TEST_F(TransportTest, DropsWhileConnectedAreReportedAtOnceAndClearedWhenRecorded) {
  absl::StatusOr<std::unique_ptr<agent::Spool>> tiny = agent::Spool::Open({dir_ + "/tiny", 100});
  ASSERT_TRUE(tiny.ok());
  FakeAgentService service;
  FakeServer server(service);
  ASSERT_TRUE(server.ok());
  RecordingEvents events(tiny->get());
  Transport transport(Options(server.target()), **tiny, events);
  transport.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return transport.connected(); }, 10s));
  EXPECT_EQ(service.hellos()[0].dropped_captures(), 0u);

  // The count is not read here: the first drop may wake the transport, which can report both and see
  // them recorded (the count back at 0) before this thread looks. What the server recorded is the check.
  EXPECT_FALSE((*tiny)->Put("x", "2026-12-02T16:15:00Z", "", std::string(200, 'x')).ok());
  EXPECT_FALSE((*tiny)->Put("y", "2026-12-02T16:16:00Z", "", std::string(200, 'y')).ok());
  transport.CaptureSpooled("y");  // any wake-up of the transport
  ASSERT_TRUE(testing::WaitFor([&] { return (*tiny)->dropped() == 0; }, 10s));
  // Both drops reported, each once: in one report, or in two when the transport woke between them (the
  // first drop may wake it before the second happens).
  const std::vector<uint64_t> reports = service.drop_reports();
  EXPECT_EQ(std::accumulate(reports.begin(), reports.end(), uint64_t{0}), 2u);
  EXPECT_LE(reports.size(), 2u);
  EXPECT_EQ(service.hellos().size(), 1u);  // on the same stream
  transport.Stop();
}

TEST_F(TransportTest, CommandsReachTheEvents) {
  FakeAgentService service;
  service.set_welcome_interval_s(60);
  v1::ServerMessage now, full, interval;
  now.mutable_capture_now()->set_sweep_id("sweep-42");
  full.mutable_capture_now()->set_sweep_id("sweep-43");
  full.mutable_capture_now()->set_full_smaps(true);
  interval.mutable_set_interval()->set_interval_s(30);
  service.set_after_welcome({now, full, interval});
  FakeServer server(service);
  ASSERT_TRUE(server.ok());
  Transport transport(Options(server.target()), *spool_, *events_);
  transport.Start();
  ASSERT_TRUE(
      testing::WaitFor([&] { return events_->capture_now().size() == 2 && events_->intervals().size() == 2; }, 10s));
  EXPECT_EQ(events_->capture_now(), (std::vector<std::string>{"sweep-42", "sweep-43:full-smaps"}));
  EXPECT_EQ(events_->intervals(), (std::vector<uint32_t>{60, 30}));
}

// The connected line names the interval the agent captures at: its own (--interval) when the Welcome
// leaves it (interval 0), the server's when the Welcome sets one; never "interval 0 s".
TEST_F(TransportTest, TheConnectedLineNamesTheIntervalInEffect) {
  FakeAgentService service;  // welcomes with interval 0
  FakeServer server(service);
  ASSERT_TRUE(server.ok());
  TransportOptions options = Options(server.target());
  options.interval = 30s;

  ::testing::internal::CaptureStderr();
  {
    Transport transport(options, *spool_, *events_);
    transport.Start();
    // OnConnected follows the connected line.
    EXPECT_TRUE(testing::WaitFor([&] { return events_->intervals().size() == 1; }, 10s));
    transport.Stop();
  }
  service.set_welcome_interval_s(60);
  {
    Transport transport(options, *spool_, *events_);
    transport.Start();
    EXPECT_TRUE(testing::WaitFor([&] { return events_->intervals().size() == 2; }, 10s));
    transport.Stop();
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, ::testing::HasSubstr("memfleet-agent: connected to 127.0.0.1:"));
  EXPECT_THAT(log, ::testing::HasSubstr(" as dev-1 (server fake, keeps interval 30 s); spool: "));
  EXPECT_THAT(log, ::testing::HasSubstr(" as dev-1 (server fake, interval 60 s); spool: "));
  EXPECT_THAT(log, ::testing::Not(::testing::HasSubstr("interval 0 s")));
}

TEST_F(TransportTest, StopIsPromptWhileConnectedAndWhileUnreachable) {
  FakeAgentService service;
  FakeServer server(service);
  ASSERT_TRUE(server.ok());
  {
    Transport transport(Options(server.target()), *spool_, *events_);
    transport.Start();
    ASSERT_TRUE(testing::WaitFor([&] { return transport.connected(); }, 10s));
    auto start = std::chrono::steady_clock::now();
    transport.Stop();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  }
  {
    TransportOptions options = Options("127.0.0.1:1");
    options.backoff.initial = 5s;
    options.backoff.max = 5s;
    Transport transport(options, *spool_, *events_);
    transport.Start();
    ASSERT_TRUE(
        testing::WaitFor([&] { return transport.failed_connects() >= 1; }, 10s));  // now in its 5 s backoff wait
    auto start = std::chrono::steady_clock::now();
    transport.Stop();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  }
}

TEST(BackoffTest, DoublesFromInitialToMaxWithBoundedJitter) {
  BackoffPolicy policy;  // 0.5 s doubling to 30 s, +-20 %
  Backoff backoff(policy, 7);
  double base_ms = 500;
  for (int attempt = 0; attempt < 12; ++attempt) {
    auto d = backoff.Next();
    double expected = std::min(base_ms, 30000.0);
    EXPECT_GE(d.count(), static_cast<int64_t>(expected * 0.8) - 1) << "attempt " << attempt;
    EXPECT_LE(d.count(), std::min<int64_t>(30000, static_cast<int64_t>(expected * 1.2) + 1)) << "attempt " << attempt;
    base_ms *= 2;
  }
  backoff.Reset();
  auto first = backoff.Next();
  EXPECT_GE(first.count(), 400);
  EXPECT_LE(first.count(), 600);
}

TEST(BackoffTest, JitterSpreadsAgentsApart) {
  // Two agents with different seeds should not retry at exactly the same moments.
  Backoff a(BackoffPolicy{}, 1), b(BackoffPolicy{}, 2);
  int same = 0;
  for (int i = 0; i < 10; ++i) same += a.Next() == b.Next() ? 1 : 0;
  EXPECT_LT(same, 10);
}

}  // namespace
}  // namespace memfleet::agent
