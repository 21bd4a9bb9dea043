#include "agent/backoff.h"

#include <algorithm>

namespace memfleet::agent {

Backoff::Backoff(BackoffPolicy policy, uint64_t seed) : policy_(policy), rng_(seed) {
  if (policy_.initial.count() < 1) policy_.initial = std::chrono::milliseconds(1);
  if (policy_.max < policy_.initial) policy_.max = policy_.initial;
  if (!(policy_.multiplier >= 1.0)) policy_.multiplier = 1.0;  // also catches NaN
  policy_.jitter = std::clamp(policy_.jitter, 0.0, 1.0);
}

std::chrono::milliseconds Backoff::Next() {
  double max_ms = static_cast<double>(policy_.max.count());
  attempt_delay_ms_ = attempt_delay_ms_ == 0 ? static_cast<double>(policy_.initial.count())
                                             : std::min(attempt_delay_ms_ * policy_.multiplier, max_ms);
  std::uniform_real_distribution<double> factor(1.0 - policy_.jitter, 1.0 + policy_.jitter);
  double ms = std::min(attempt_delay_ms_ * factor(rng_), max_ms);
  return std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(ms)));
}

}  // namespace memfleet::agent
