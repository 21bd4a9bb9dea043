// PlanRetention (server/history/retention_plan.h): what a device keeps at each age, which capture represents an
// hour or a day, and what is never deleted (pinned captures, the keyframes of kept deltas). Every
// expected id below follows from the rules in the header, worked out by hand.
#include "server/history/retention_plan.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace memfleet::server {
namespace {

using Ids = std::vector<std::string>;

constexpr int64_t kMinuteMs = 60'000;
constexpr int64_t kHourMs = 60 * kMinuteMs;
constexpr int64_t kDayMs = 24 * kHourMs;
// 2026-12-01T00:00:00Z: "now" of every test, a whole UTC day.
constexpr int64_t kNowMs = int64_t{1'796'083'200'000};

const RetentionPolicy kPolicy{std::chrono::hours(24 * 30), std::chrono::hours(24 * 365)};

RetentionCandidate At(const std::string& id, int64_t at_ms, std::optional<int64_t> total_kb,
                      const std::string& keyframe = "", bool pinned = false) {
  RetentionCandidate c;
  c.capture_id = id;
  c.captured_at_ms = at_ms;
  c.total_kb = total_kb;
  c.keyframe_id = keyframe;
  c.pinned = pinned;
  return c;
}

// The start of the UTC hour `days` days and `hours` hours before now.
int64_t HourAgo(int64_t days, int64_t hours) { return kNowMs - days * kDayMs - hours * kHourMs; }

TEST(RetentionPlanTest, NoPolicyDeletesNothing) {
  std::vector<RetentionCandidate> c = {At("a", kNowMs - 1000 * kDayMs, 1), At("b", kNowMs - 1000 * kDayMs + 1, 2)};
  RetentionPlan plan = PlanRetention(c, RetentionPolicy{}, kNowMs);
  EXPECT_EQ(plan.delete_ids, Ids{});
  EXPECT_EQ(plan.kept, 2u);
}

TEST(RetentionPlanTest, EverythingYoungerThanTheFullWindowIsKept) {
  std::vector<RetentionCandidate> c;
  for (int i = 0; i < 6; ++i) c.push_back(At("c" + std::to_string(i), HourAgo(29, 23) + i * 10 * kMinuteMs, 100 + i));
  // 29 days 23 hours ago plus up to 50 minutes: all under 30 days old.
  RetentionPlan plan = PlanRetention(c, kPolicy, kNowMs);
  EXPECT_EQ(plan.delete_ids, Ids{});
  EXPECT_EQ(plan.kept, 6u);
}

TEST(RetentionPlanTest, AnHourBeyondTheFullWindowKeepsItsHighestTotalTiesToTheLater) {
  const int64_t hour = HourAgo(40, 5);
  std::vector<RetentionCandidate> c = {At("m0", hour, 5),
                                       At("m10", hour + 10 * kMinuteMs, 9),
                                       At("m20", hour + 20 * kMinuteMs, 7),
                                       At("m30", hour + 30 * kMinuteMs, 9),  // ties m10: the later one stays
                                       At("m40", hour + 40 * kMinuteMs, std::nullopt),
                                       At("m50", hour + 50 * kMinuteMs, 3)};
  RetentionPlan plan = PlanRetention(c, kPolicy, kNowMs);
  EXPECT_EQ(plan.delete_ids, (Ids{"m0", "m10", "m20", "m40", "m50"}));
  EXPECT_EQ(plan.kept, 1u);
}

TEST(RetentionPlanTest, AnHourWithoutTotalsKeepsItsLatestCapture) {
  const int64_t hour = HourAgo(40, 5);
  std::vector<RetentionCandidate> c = {At("x", hour + kMinuteMs, std::nullopt),
                                       At("y", hour + 2 * kMinuteMs, std::nullopt)};
  EXPECT_EQ(PlanRetention(c, kPolicy, kNowMs).delete_ids, (Ids{"x"}));
}

TEST(RetentionPlanTest, HoursAreUtcHoursNotSixtyMinutesFromTheFirstCapture) {
  const int64_t hour = HourAgo(40, 5);
  // 10:59 and 11:00 are two hours, each keeps its one capture; 11:00 and 11:59 are one.
  std::vector<RetentionCandidate> c = {At("h10-59", hour - kMinuteMs, 1), At("h11-00", hour, 1),
                                       At("h11-59", hour + 59 * kMinuteMs, 2)};
  EXPECT_EQ(PlanRetention(c, kPolicy, kNowMs).delete_ids, (Ids{"h11-00"}));
}

TEST(RetentionPlanTest, TheFullWindowEndsExactlyAtItsAge) {
  // 30 days old to the millisecond is past the window; a millisecond younger is inside it. Same hour.
  const int64_t now = kNowMs + 30 * kMinuteMs;  // so that all three fall in one UTC hour
  const int64_t edge = now - 30 * kDayMs;
  std::vector<RetentionCandidate> c = {At("old", edge, 1), At("older", edge - kMinuteMs, 5), At("young", edge + 1, 1)};
  RetentionPlan plan = PlanRetention(c, kPolicy, now);
  EXPECT_EQ(plan.delete_ids, (Ids{"old"}));  // "older" has the hour's higher total
}

TEST(RetentionPlanTest, BeyondTheHourlyWindowADayKeepsItsHighestTotal) {
  std::vector<RetentionCandidate> c;
  const int64_t day = kNowMs - 400 * kDayMs;  // a UTC midnight, 400 days ago
  for (int h = 0; h < 24; ++h) c.push_back(At("d" + std::to_string(h), day + h * kHourMs, h == 13 ? 900 : 100 + h));
  RetentionPlan plan = PlanRetention(c, kPolicy, kNowMs);
  EXPECT_EQ(plan.kept, 1u);
  EXPECT_EQ(plan.delete_ids.size(), 23u);
  EXPECT_EQ(std::count(plan.delete_ids.begin(), plan.delete_ids.end(), "d13"), 0);
}

TEST(RetentionPlanTest, WithoutALongerHourlyWindowOldCapturesStayHourly) {
  const int64_t day = kNowMs - 400 * kDayMs;
  std::vector<RetentionCandidate> c = {At("a", day, 1), At("b", day + kHourMs, 1), At("c", day + kHourMs + 1, 2)};
  RetentionPolicy hourly_forever{std::chrono::hours(24 * 30), std::chrono::hours(24 * 30)};
  EXPECT_EQ(PlanRetention(c, hourly_forever, kNowMs).delete_ids, (Ids{"b"}));
}

TEST(RetentionPlanTest, PinnedCapturesStayBesideTheirHoursRepresentative) {
  const int64_t hour = HourAgo(40, 5);
  std::vector<RetentionCandidate> c = {At("sweep", hour, 1, "", /*pinned=*/true), At("peak", hour + kMinuteMs, 50),
                                       At("other", hour + 2 * kMinuteMs, 10),
                                       At("labelled-old", kNowMs - 900 * kDayMs, 1, "", /*pinned=*/true)};
  RetentionPlan plan = PlanRetention(c, kPolicy, kNowMs);
  EXPECT_EQ(plan.delete_ids, (Ids{"other"}));
  EXPECT_EQ(plan.kept, 3u);
}

TEST(RetentionPlanTest, AKeptDeltasKeyframeIsKeptEvenInAnotherHour) {
  const int64_t hour = HourAgo(40, 5);
  std::vector<RetentionCandidate> c = {
      At("key", hour - 2 * kHourMs, 1),                            // alone in its hour: kept anyway
      At("key-low", hour - 2 * kHourMs + kMinuteMs, 0, "key"),     // loses to key? no: key has 1 > 0
      At("key2", hour, 1),                                          // a keyframe whose deltas all go
      At("d2", hour + kMinuteMs, 2, "key2"),                        // ...but d2 is its hour's peak
      At("d3", hour + kHourMs, 1, "key-far"),                       // keyframe not listed: nothing to keep
      At("key3", hour + 2 * kHourMs, 1),
      At("d4", hour + 2 * kHourMs + kMinuteMs, 9, "key"),          // its hour's peak, delta of "key"
  };
  RetentionPlan plan = PlanRetention(c, kPolicy, kNowMs);
  // Hour -2: key (1) beats key-low (0). Hour 0: d2 (2) beats key2, which stays as d2's keyframe.
  // Hour +1: d3 alone. Hour +2: d4 (9) beats key3; d4's keyframe "key" is kept already.
  EXPECT_EQ(plan.delete_ids, (Ids{"key-low", "key3"}));
  EXPECT_EQ(plan.kept_for_deltas, 1u);  // key2
  EXPECT_EQ(plan.kept, 5u);
}

TEST(RetentionPlanTest, AKeyframeGoesWithTheLastOfItsDeltas) {
  const int64_t hour = HourAgo(40, 5);
  std::vector<RetentionCandidate> c = {At("key", hour, 1), At("d1", hour + kMinuteMs, 2, "key"),
                                       At("peak", hour + 2 * kMinuteMs, 3)};
  EXPECT_EQ(PlanRetention(c, kPolicy, kNowMs).delete_ids, (Ids{"key", "d1"}));
}

TEST(RetentionPlanTest, CapturesFromTheFutureAreKept) {
  std::vector<RetentionCandidate> c = {At("ahead", kNowMs + kDayMs, 1), At("ahead2", kNowMs + kDayMs + 1, 2)};
  EXPECT_EQ(PlanRetention(c, kPolicy, kNowMs).delete_ids, Ids{});
}

TEST(RetentionPlanTest, PlanningTwiceDeletesNothingMore) {
  std::vector<RetentionCandidate> c;
  // 60 days of one capture every 10 minutes: the older 30 days thin to one an hour.
  for (int i = 0; i < 60 * 144; ++i) {
    c.push_back(At("c" + std::to_string(i), kNowMs - 60 * kDayMs + i * 10 * kMinuteMs, 1000 + (i * 7919) % 97));
  }
  RetentionPlan first = PlanRetention(c, kPolicy, kNowMs);
  EXPECT_EQ(first.kept, 30u * 144 + 30 * 24);
  std::vector<RetentionCandidate> rest;
  for (const RetentionCandidate& x : c) {
    if (std::find(first.delete_ids.begin(), first.delete_ids.end(), x.capture_id) == first.delete_ids.end()) {
      rest.push_back(x);
    }
  }
  EXPECT_EQ(PlanRetention(rest, kPolicy, kNowMs).delete_ids, Ids{});
}

}  // namespace
}  // namespace memfleet::server
