// Retention planning: which of one device's captures to delete so that its history fits a disk
// (docs/performance.md "Retention"). Pure: the caller lists the captures and says what time it is.
//
// Captures younger than `full` are all kept. Between `full` and `hourly` a device keeps one capture an
// hour (UTC hour), the one with the highest device total that hour (a peak is what a trend must not lose;
// a capture without a total only when none in its hour has one; ties to the later capture); older than
// `hourly`, one a day the same way. Always kept, whatever their age: the device's latest capture (what
// `memfleet devices` and `report` show), pinned captures (the answer to a sweep that asked the device, one
// carrying a sweep's labels) and the keyframe of every kept delta (delta storage: a delta is unreadable
// without it).
//
// Raw window (`raw`, independent of the two above): a kept capture older than `raw` loses its raw text
// only — its row, report, process figures and labels stay — unless a delta whose raw text stays names it
// (its keyframe), or it is the device's latest keyframe (the server may still store deltas against it).
// Pinned captures lose their raw text like the others: what pins them is their report and labels.
//
// The captures to delete come in an order that never orphans a delta, however they are cut into
// batches: every delta before any whole capture (a keyframe goes only when none of its deltas stays, and
// those are all listed before it). A run that stops after any batch leaves every kept delta readable; a
// caller that never mixes the two in one batch (delete_deltas) also keeps a keyframe another device's
// delta names from holding up the deletion of deltas.
//
//   RetentionPlan plan = PlanRetention(captures_of_one_device, {days(30), days(365)}, now_ms);
//   ... delete plan.delete_ids in that order, in batches of any size ...
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
  // Raw text for this long, then the report alone; zero = raw text as long as its capture.
  std::chrono::milliseconds raw{0};
};

struct RetentionCandidate {
  std::string capture_id;
  int64_t captured_at_ms = 0;  // UTC milliseconds since 1970
  std::optional<int64_t> total_kb;
  bool pinned = false;       // never deleted (a sweep's answer, a sweep's labels: retention.h says which)
  std::string keyframe_id;   // the keyframe this delta needs; "" for a whole capture
  bool raw_dropped = false;  // its raw text is gone already
};

struct RetentionPlan {
  // The deltas in the order of the input, then the whole captures in the order of the input.
  std::vector<std::string> delete_ids;
  size_t delete_deltas = 0;  // how many of delete_ids, from the first, are deltas
  size_t kept = 0;
  size_t kept_for_deltas = 0;  // among `kept`: keyframes kept only because a kept delta needs them
  // Kept captures whose raw text goes: the deltas in the order of the input, then the whole captures (a
  // keyframe's raw goes only when none of its deltas keeps its own).
  std::vector<std::string> drop_raw_ids;
  size_t drop_raw_deltas = 0;  // how many of drop_raw_ids, from the first, are deltas
  // Keyframes beyond the raw window whose raw text stays for a delta that keeps its own, or as the
  // device's latest keyframe.
  size_t raw_kept_for_deltas = 0;
};

RetentionPlan PlanRetention(const std::vector<RetentionCandidate>& captures, const RetentionPolicy& policy,
                            int64_t now_ms);

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_HISTORY_RETENTION_PLAN_H_
