#include "server/history/retention_plan.h"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace memfleet::server {
namespace {

constexpr int64_t kHourMs = int64_t{3'600'000};
constexpr int64_t kDayMs = 24 * kHourMs;

// The bucket of a capture: (width, index) — floor division, so times before 1970 bucket correctly too.
struct Bucket {
  int64_t width_ms;
  int64_t index;
  bool operator<(const Bucket& o) const { return width_ms != o.width_ms ? width_ms < o.width_ms : index < o.index; }
};

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0) ? 1 : 0); }

// Whether `a` represents its bucket better than `b`: a higher total; any total over none; then later.
bool Better(const RetentionCandidate& a, const RetentionCandidate& b) {
  if (a.total_kb.has_value() != b.total_kb.has_value()) return a.total_kb.has_value();
  if (a.total_kb.has_value() && *a.total_kb != *b.total_kb) return *a.total_kb > *b.total_kb;
  return a.captured_at_ms > b.captured_at_ms;
}

// The device's latest capture, as the store orders them (captured_at, then capture id); none when empty.
std::optional<size_t> LatestOf(const std::vector<RetentionCandidate>& captures) {
  std::optional<size_t> latest;
  for (size_t i = 0; i < captures.size(); ++i) {
    if (!latest.has_value()) {
      latest = i;
      continue;
    }
    const RetentionCandidate& a = captures[i];
    const RetentionCandidate& b = captures[*latest];
    if (a.captured_at_ms != b.captured_at_ms ? a.captured_at_ms > b.captured_at_ms : a.capture_id > b.capture_id) {
      latest = i;
    }
  }
  return latest;
}

// The raw window over the captures `keep` keeps: whose raw text goes, into plan.drop_raw_ids.
void PlanRawWindow(const std::vector<RetentionCandidate>& captures, const std::vector<bool>& keep,
                   const std::unordered_map<std::string, size_t>& index_of, int64_t raw_ms, int64_t now_ms,
                   RetentionPlan& plan) {
  std::vector<bool> raw_stays(captures.size(), false);
  std::optional<size_t> latest_keyframe;
  for (size_t i = 0; i < captures.size(); ++i) {
    const RetentionCandidate& c = captures[i];
    if (!keep[i] || c.raw_dropped) continue;
    raw_stays[i] = now_ms - c.captured_at_ms < raw_ms;
    if (c.keyframe_id.empty() &&
        (!latest_keyframe.has_value() || captures[*latest_keyframe].captured_at_ms < c.captured_at_ms)) {
      latest_keyframe = i;
    }
  }
  std::vector<bool> needed(captures.size(), false);
  // The server encodes a device's next captures against its latest keyframe for as long as the device
  // is away: that keyframe's raw text must be there when they arrive.
  if (latest_keyframe.has_value()) needed[*latest_keyframe] = true;
  for (size_t i = 0; i < captures.size(); ++i) {
    if (!raw_stays[i] || captures[i].keyframe_id.empty()) continue;
    auto it = index_of.find(captures[i].keyframe_id);
    if (it != index_of.end()) needed[it->second] = true;
  }
  std::vector<std::string> whole;  // after every delta: one of them may name it
  for (size_t i = 0; i < captures.size(); ++i) {
    if (!keep[i] || captures[i].raw_dropped || raw_stays[i]) continue;
    if (needed[i]) {
      ++plan.raw_kept_for_deltas;
    } else if (captures[i].keyframe_id.empty()) {
      whole.push_back(captures[i].capture_id);
    } else {
      plan.drop_raw_ids.push_back(captures[i].capture_id);
    }
  }
  plan.drop_raw_deltas = plan.drop_raw_ids.size();
  plan.drop_raw_ids.insert(plan.drop_raw_ids.end(), whole.begin(), whole.end());
}

}  // namespace

RetentionPlan PlanRetention(const std::vector<RetentionCandidate>& captures, const RetentionPolicy& policy,
                            int64_t now_ms) {
  RetentionPlan plan;
  std::vector<bool> keep(captures.size(), true);
  const int64_t full_ms = policy.full.count();
  const int64_t hourly_ms = policy.hourly.count() > full_ms ? policy.hourly.count() : 0;
  if (full_ms > 0) {
    std::map<Bucket, size_t> best;  // bucket -> index of its representative so far
    for (size_t i = 0; i < captures.size(); ++i) {
      const int64_t age_ms = now_ms - captures[i].captured_at_ms;
      if (age_ms < full_ms || captures[i].pinned) continue;
      keep[i] = false;
      const int64_t width = hourly_ms == 0 || age_ms < hourly_ms ? kHourMs : kDayMs;
      const Bucket bucket{width, FloorDiv(captures[i].captured_at_ms, width)};
      auto [it, inserted] = best.emplace(bucket, i);
      if (!inserted && Better(captures[i], captures[it->second])) it->second = i;
    }
    for (const auto& [bucket, index] : best) keep[index] = true;
  }
  // A device that stopped sending keeps its last word: otherwise `memfleet devices` and `report` would move
  // back to an older capture, and the device's row would keep facts of one that is gone.
  if (std::optional<size_t> latest = LatestOf(captures)) keep[*latest] = true;
  // A kept delta's keyframe stays. Keyframes are whole captures (a delta never references a delta), so
  // one pass over the kept deltas is enough.
  std::unordered_map<std::string, size_t> index_of;
  for (size_t i = 0; i < captures.size(); ++i) index_of.emplace(captures[i].capture_id, i);
  std::vector<bool> needed(captures.size(), false);
  for (size_t i = 0; i < captures.size(); ++i) {
    if (!keep[i] || captures[i].keyframe_id.empty()) continue;
    auto it = index_of.find(captures[i].keyframe_id);
    if (it != index_of.end()) needed[it->second] = true;
  }
  std::vector<std::string> whole;  // deleted after every delta: one of them may be a delta's keyframe
  for (size_t i = 0; i < captures.size(); ++i) {
    if (needed[i] && !keep[i]) {
      keep[i] = true;
      ++plan.kept_for_deltas;
    }
    if (keep[i]) {
      ++plan.kept;
    } else if (captures[i].keyframe_id.empty()) {
      whole.push_back(captures[i].capture_id);
    } else {
      plan.delete_ids.push_back(captures[i].capture_id);
    }
  }
  plan.delete_deltas = plan.delete_ids.size();
  plan.delete_ids.insert(plan.delete_ids.end(), whole.begin(), whole.end());
  if (policy.raw.count() > 0) PlanRawWindow(captures, keep, index_of, policy.raw.count(), now_ms, plan);
  return plan;
}

}  // namespace memfleet::server
