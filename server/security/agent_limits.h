// AgentLimits: what one agent may take from the server — open streams per token and captures per minute
// per device. A rogue or broken agent past either is cut off (RESOURCE_EXHAUSTED) while the others go on.
//
//   AgentLimits limits({.max_streams_per_key = 4, .max_captures_per_minute = 600});
//   absl::StatusOr<AgentLimits::StreamLease> lease = limits.OpenStream("token:bench-3");  // released on destruction
//   absl::Status ok = limits.CountCapture("bench-3");          // ResourceExhausted past the rate
//
// Thread-safe; the clock is injected for tests.
#ifndef MEMFLEET_SERVER_SECURITY_AGENT_LIMITS_H_
#define MEMFLEET_SERVER_SECURITY_AGENT_LIMITS_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace memfleet::security {

struct AgentLimitsOptions {
  // 0: unlimited. Above 1 so that a reconnect overlapping its old, half-dead stream passes.
  uint32_t max_streams_per_key = 4;
  uint32_t max_captures_per_minute = 600;  // per device id; 0: unlimited
};

class AgentLimits {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // Releases its stream slot when destroyed.
  class StreamLease {
   public:
    StreamLease(AgentLimits* owner, std::string key) : owner_(owner), key_(std::move(key)) {}
    ~StreamLease();
    StreamLease(const StreamLease&) = delete;
    StreamLease& operator=(const StreamLease&) = delete;

   private:
    AgentLimits* owner_;
    std::string key_;
  };

  explicit AgentLimits(AgentLimitsOptions options, Clock clock = nullptr);

  const AgentLimitsOptions& options() const { return options_; }

  // `key` names who holds the stream ("token:NAME" or "device:ID"); `who` is for the message.
  absl::StatusOr<std::unique_ptr<StreamLease>> OpenStream(const std::string& key, const std::string& who);
  // Counts one capture of `device_id`; ResourceExhausted when it is over the per-minute rate.
  absl::Status CountCapture(const std::string& device_id);

  size_t open_streams(const std::string& key) const;

 private:
  void Release(const std::string& key) ABSL_LOCKS_EXCLUDED(mu_);

  const AgentLimitsOptions options_;
  Clock clock_;
  mutable absl::Mutex mu_;
  std::map<std::string, uint32_t> streams_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::deque<std::chrono::steady_clock::time_point>> captures_ ABSL_GUARDED_BY(mu_);
};

}  // namespace memfleet::security

#endif  // MEMFLEET_SERVER_SECURITY_AGENT_LIMITS_H_
