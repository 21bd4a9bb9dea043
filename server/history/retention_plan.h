// Retention planning: which of one device's captures to delete so that its history fits a disk
// (docs/performance.md "Retention"). Pure: the caller lists the captures and says what time it is.
//
// Captures younger than `full` are all kept. Between `full` and `hourly` a device keeps one capture an
// hour (UTC hour), the one with the highest device total that hour (a peak is what a trend must not lose;
// a capture without a total only when none in its hour has one; ties to the later capture); older than
// `hourly`, one a day the same way. Always kept, whatever their age: pinned captures (a sweep's, a
// labelled one) and the keyframe of every kept delta (delta storage: a delta is unreadable without it).
//
//   RetentionPlan plan = PlanRetention(captures_of_one_device, {days(30), days(365)}, now_ms);
//   ... delete plan.delete_ids ...
#ifndef MEMFLEET_SERVER_HISTORY_RETENTION_PLAN_H_
#define MEMFLEET_SERVER_HISTORY_RETENTION_PLAN_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memfleet::server {

struct RetentionPolicy {
  // Full resolution for this long; zero = forever (nothing is ever deleted).
  std::chrono::milliseconds full{0};
  // One capture an hour until this age, one a day after it; zero = hourly forever. Ignored when not
  // longer than `full`.
  std::chrono::milliseconds hourly{0};
};

struct RetentionCandidate {
  std::string capture_id;
  int64_t captured_at_ms = 0;  // UTC milliseconds since 1970
  std::optional<int64_t> total_kb;
  bool pinned = false;     // a sweep's or labelled capture: never deleted
  std::string keyframe_id;  // the keyframe this delta needs; "" for a whole capture
};

struct RetentionPlan {
  std::vector<std::string> delete_ids;  // in the order of the input
  size_t kept = 0;
  size_t kept_for_deltas = 0;  // among `kept`: keyframes kept only because a kept delta needs them
};

RetentionPlan PlanRetention(const std::vector<RetentionCandidate>& captures, const RetentionPolicy& policy,
                            int64_t now_ms);

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_HISTORY_RETENTION_PLAN_H_
