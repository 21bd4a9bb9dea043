// Transport: the agent's side of AgentService.Connect — one long-lived gRPC stream to the server that
// says Hello, sends every spooled capture (Begin, Chunks, End), removes a capture from the spool when the
// server acks it, and passes the server's commands (CaptureNow, SetInterval) to TransportEvents. Breaks,
// missing acks (--ack-timeout) and stalled writes tear the stream down; it reconnects with exponential
// backoff and jitter, to the next of its servers when it has several, and resends everything still
// spooled (the server deduplicates by capture id). Each CaptureEnd carries the SHA-256 of the capture
// (proto/capture_digest.h) for the server to verify.
//
//   Transport transport(options, spool, events);
//   transport.Start();                    // its own thread owns the stream
//   ... spool.Put(...); transport.CaptureSpooled(id);
//   transport.Stop();                     // waits briefly for acks in flight, closes the stream
//
// Threads: one transport thread writes; a reader thread per session reads; a watchdog cancels the call
// when a write stalls or shutdown's grace runs out. TransportEvents are called on the transport thread and
// must not block (the scheduler posts them to its loop). Public methods are thread-safe.
#ifndef MEMFLEET_AGENT_TRANSPORT_H_
#define MEMFLEET_AGENT_TRANSPORT_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "agent/backoff.h"
#include "agent/spool.h"
#include "grpcpp/security/credentials.h"
#include "memfleet/v1/agent_service.grpc.pb.h"

namespace memfleet::agent {

// What the transport tells its owner. Every method has an empty default.
class TransportEvents {
 public:
  virtual ~TransportEvents() = default;
  // The server welcomed the agent; `interval_s` is the interval it wants (0: keep the agent's own).
  virtual void OnConnected(uint32_t /*interval_s*/) {}
  virtual void OnDisconnected(const std::string& /*reason*/) {}
  virtual void OnAcked(const std::string& /*capture_id*/, bool /*duplicate*/) {}
  // retry=true: still spooled, resent later; retry=false: removed from the spool.
  virtual void OnRejected(const std::string& /*capture_id*/, bool /*retry*/, const std::string& /*message*/) {}
  // `full_smaps`: the server asks for full smaps of every process in this capture.
  virtual void OnCaptureNow(const std::string& /*sweep_id*/, bool /*full_smaps*/) {}
  virtual void OnSetInterval(uint32_t /*interval_s*/) {}
};

// Where the scheduler hands what it produced: the transport, or a fake in tests.
class CaptureSink {
 public:
  virtual ~CaptureSink() = default;
  // A capture was put in the spool: send it (it stays spooled until acked, whatever happens here).
  virtual void CaptureSpooled(const std::string& capture_id) = 0;
  // A CaptureNow could not be carried out; tells the server so that its sweep need not wait.
  virtual void CommandFailed(const std::string& sweep_id, const std::string& message) = 0;
};

// TLS towards the server (docs/security.md); all empty: plaintext.
struct TransportTls {
  std::string ca_cert_pem;      // the CA that signed the server's certificate; non-empty: TLS
  std::string client_cert_pem;  // with client_key_pem: presented for mutual TLS
  std::string client_key_pem;
};

// Plaintext credentials for an empty `tls`, else SSL credentials.
std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(const TransportTls& tls);

struct TransportOptions {
  // gRPC targets, tried in this order: a session that ends, or a connect that fails, moves on to the next
  // (failover between servers sharing one database; each acks a resent capture as a duplicate).
  std::vector<std::string> servers;
  v1::DeviceInfo device;
  std::string token;  // sent as `authorization: Bearer <token>` (and in Hello); "" for a server without auth
  TransportTls tls;
  std::chrono::milliseconds ack_timeout{30000};  // for each sent capture, for the Welcome, for a write
  std::chrono::milliseconds connect_timeout{10000};
  // The agent's own capture interval (--interval): in effect until the server sets another, and named in
  // the connected line when the Welcome leaves it (interval 0).
  std::chrono::seconds interval{300};
  BackoffPolicy backoff;
  std::chrono::milliseconds rejected_retry_delay{30000};  // a CaptureRejected{retry} is resent after this
  std::chrono::milliseconds shutdown_grace{2000};         // Stop() waits this long for acks in flight
  size_t chunk_bytes = 256 * 1024;
  size_t max_in_flight = 4;  // captures sent and not yet acked
  // A capture the server refuses because its digest differs (DATA_LOSS with retry) is resent this many
  // times, then dropped and counted: a wire fault passes, a capture that never verifies must not loop.
  uint32_t max_integrity_retries = 3;
};

class Transport final : public CaptureSink {
 public:
  Transport(TransportOptions options, Spool& spool, TransportEvents& events);
  ~Transport() override;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  void Start() ABSL_LOCKS_EXCLUDED(mu_);
  // Idempotent. Blocks until the transport thread has ended (at most about shutdown_grace while connected).
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  void CaptureSpooled(const std::string& capture_id) override ABSL_LOCKS_EXCLUDED(mu_);
  void CommandFailed(const std::string& sweep_id, const std::string& message) override ABSL_LOCKS_EXCLUDED(mu_);

  bool connected() const ABSL_LOCKS_EXCLUDED(mu_);
  // Sessions the server welcomed so far.
  uint64_t sessions() const ABSL_LOCKS_EXCLUDED(mu_);
  // Connection attempts that ended without a Welcome so far; each is followed by a backoff wait.
  uint64_t failed_connects() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  using Stream = grpc::ClientReaderWriter<v1::AgentMessage, v1::ServerMessage>;
  enum class SendResult { kSent, kSkipped, kWriteFailed };
  struct SessionState;

  void Run();
  // One connection: returns why it ended; *welcomed tells whether the server welcomed it.
  std::string RunSession(bool* welcomed);
  std::string Converse(Stream& stream, bool* welcomed);
  void HandleMessage(const v1::ServerMessage& msg, SessionState& s, bool* welcomed);
  SendResult SendCapture(Stream& stream, const Spool::Entry& entry);
  // Tells the server of drops since the last confirmed count (DroppedReport); false when the write failed.
  bool ReportDrops(Stream& stream, SessionState& s);
  bool Write(Stream& stream, const v1::AgentMessage& msg, bool buffer_hint);
  void Watchdog(grpc::ClientContext& context) ABSL_LOCKS_EXCLUDED(mu_);
  bool stopping() const ABSL_LOCKS_EXCLUDED(mu_);

  const TransportOptions options_;
  Spool& spool_;
  TransportEvents& events_;
  std::thread thread_;

  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::chrono::steady_clock::time_point stop_requested_at_ ABSL_GUARDED_BY(mu_);
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  bool connected_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t sessions_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t failed_connects_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<v1::AgentMessage> outgoing_ ABSL_GUARDED_BY(mu_);  // control messages for the current session
  // The current session, shared with its reader and watchdog threads.
  std::deque<v1::ServerMessage> incoming_ ABSL_GUARDED_BY(mu_);
  bool reader_done_ ABSL_GUARDED_BY(mu_) = false;
  bool session_over_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<std::chrono::steady_clock::time_point> write_started_ ABSL_GUARDED_BY(mu_);
  std::string cancel_reason_ ABSL_GUARDED_BY(mu_);
  // The target of the current session (transport thread only).
  std::string server_;
  // The capture interval in effect: options_.interval until a Welcome or SetInterval sets one, as the
  // scheduler applies them (transport thread only).
  std::chrono::seconds interval_;
  // Digest rejections per capture id, across sessions (transport thread only).
  std::map<std::string, uint32_t> integrity_rejections_;
};

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_TRANSPORT_H_
