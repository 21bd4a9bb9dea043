// Backoff: the delays between the agent's reconnect attempts — exponential (0.5 s doubling to 30 s) with
// random jitter, so that a farm of agents does not reconnect in lockstep after a server restart.
//
//   Backoff backoff(BackoffPolicy{}, seed);
//   sleep(backoff.Next());   // ~0.5 s, ~1 s, ~2 s, ... ~30 s, ~30 s
//   backoff.Reset();         // after a session the server welcomed
//
// Not thread-safe (one per transport thread).
#ifndef MEMFLEET_AGENT_BACKOFF_H_
#define MEMFLEET_AGENT_BACKOFF_H_

#include <chrono>
#include <cstdint>
#include <random>

namespace memfleet::agent {

struct BackoffPolicy {
  std::chrono::milliseconds initial{500};
  std::chrono::milliseconds max{30000};
  double multiplier = 2.0;
  // Each delay is scaled by a uniform factor in [1 - jitter, 1 + jitter], then capped at `max`.
  double jitter = 0.2;
};

class Backoff {
 public:
  Backoff(BackoffPolicy policy, uint64_t seed);

  std::chrono::milliseconds Next();
  void Reset() { attempt_delay_ms_ = 0; }

 private:
  BackoffPolicy policy_;
  double attempt_delay_ms_ = 0;  // the un-jittered delay of the last attempt; 0 before the first
  std::mt19937_64 rng_;
};

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_BACKOFF_H_
