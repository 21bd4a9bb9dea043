// PlanRetention (server/history/retention_plan.h): what a device keeps at each age, which capture represents an
// hour or a day, and what is never deleted (the latest capture, pinned captures, the keyframes of kept
// deltas), and the order of the deletions (no delta outlives its keyframe, whatever the batches). Every
// expected id below follows from the rules in the header, worked out by hand. Most devices below are still
// capturing: Live() adds the capture they took a minute ago.
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

// `captures` of a device still capturing: with its capture of a minute ago, which is its latest.
std::vector<RetentionCandidate> Live(std::vector<RetentionCandidate> captures) {
  captures.push_back(At("now", kNowMs - kMinuteMs, 1));
  return captures;
}

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
  std::vector<RetentionCandidate> c =
      Live({At("m0", hour, 5), At("m10", hour + 10 * kMinuteMs, 9), At("m20", hour + 20 * kMinuteMs, 7),
            At("m30", hour + 30 * kMinuteMs, 9),  // ties m10: the later one stays
            At("m40", hour + 40 * kMinuteMs, std::nullopt), At("m50", hour + 50 * kMinuteMs, 3)});
  RetentionPlan plan = PlanRetention(c, kPolicy, kNowMs);
  EXPECT_EQ(plan.delete_ids, (Ids{"m0", "m10", "m20", "m40", "m50"}));
  EXPECT_EQ(plan.kept, 2u);  // m30 and now
}

TEST(RetentionPlanTest, AnHourWithoutTotalsKeepsItsLatestCapture) {
  const int64_t hour = HourAgo(40, 5);
  std::vector<RetentionCandidate> c =
      Live({At("x", hour + kMinuteMs, std::nullopt), At("y", hour + 2 * kMinuteMs, std::nullopt)});
  EXPECT_EQ(PlanRetention(c, kPolicy, kNowMs).delete_ids, (Ids{"x"}));
}

TEST(RetentionPlanTest, HoursAreUtcHoursNotSixtyMinutesFromTheFirstCapture) {
  const int64_t hour = HourAgo(40, 5);
  // 10:59 and 11:00 are two hours, each keeps its one capture; 11:00 and 11:59 are one.
  std::vector<RetentionCandidate> c =
      Live({At("h10-59", hour - kMinuteMs, 1), At("h11-00", hour, 1), At("h11-59", hour + 59 * kMinuteMs, 2)});
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
  RetentionPlan plan = PlanRetention(Live(c), kPolicy, kNowMs);
  EXPECT_EQ(plan.kept, 2u);  // d13 and now
  EXPECT_EQ(plan.delete_ids.size(), 23u);
  EXPECT_EQ(std::count(plan.delete_ids.begin(), plan.delete_ids.end(), "d13"), 0);
}

TEST(RetentionPlanTest, WithoutALongerHourlyWindowOldCapturesStayHourly) {
  const int64_t day = kNowMs - 400 * kDayMs;
  std::vector<RetentionCandidate> c = Live({At("a", day, 1), At("b", day + kHourMs, 1), At("c", day + kHourMs + 1, 2)});
  RetentionPolicy hourly_forever{std::chrono::hours(24 * 30), std::chrono::hours(24 * 30)};
  EXPECT_EQ(PlanRetention(c, hourly_forever, kNowMs).delete_ids, (Ids{"b"}));
}

TEST(RetentionPlanTest, PinnedCapturesStayBesideTheirHoursRepresentative) {
  const int64_t hour = HourAgo(40, 5);
  std::vector<RetentionCandidate> c =
      Live({At("sweep", hour, 1, "", /*pinned=*/true), At("peak", hour + kMinuteMs, 50),
            At("other", hour + 2 * kMinuteMs, 10), At("labelled-old", kNowMs - 900 * kDayMs, 1, "", /*pinned=*/true)});
  RetentionPlan plan = PlanRetention(c, kPolicy, kNowMs);
  EXPECT_EQ(plan.delete_ids, (Ids{"other"}));
  EXPECT_EQ(plan.kept, 4u);
}

TEST(RetentionPlanTest, AKeptDeltasKeyframeIsKeptEvenInAnotherHour) {
  const int64_t hour = HourAgo(40, 5);
  std::vector<RetentionCandidate> c = {
      At("key", hour - 2 * kHourMs, 1),                         // alone in its hour: kept anyway
      At("key-low", hour - 2 * kHourMs + kMinuteMs, 0, "key"),  // loses to key? no: key has 1 > 0
      At("key2", hour, 1),                                      // a keyframe whose deltas all go
      At("d2", hour + kMinuteMs, 2, "key2"),                    // ...but d2 is its hour's peak
      At("d3", hour + kHourMs, 1, "key-far"),                   // keyframe not listed: nothing to keep
      At("key3", hour + 2 * kHourMs, 1),
      At("d4", hour + 2 * kHourMs + kMinuteMs, 9, "key"),  // its hour's peak, delta of "key"
      At("now", kNowMs - kMinuteMs, 1),                    // the latest, a whole capture
  };
  RetentionPlan plan = PlanRetention(c, kPolicy, kNowMs);
  // Hour -2: key (1) beats key-low (0). Hour 0: d2 (2) beats key2, which stays as d2's keyframe.
  // Hour +1: d3 alone. Hour +2: d4 (9) beats key3; d4's keyframe "key" is kept already.
  EXPECT_EQ(plan.delete_ids, (Ids{"key-low", "key3"}));
  EXPECT_EQ(plan.kept_for_deltas, 1u);  // key2
  EXPECT_EQ(plan.kept, 6u);
}

TEST(RetentionPlanTest, AKeyframeGoesWithTheLastOfItsDeltasAndAfterThem) {
  const int64_t hour = HourAgo(40, 5);
  std::vector<RetentionCandidate> c =
      Live({At("key", hour, 1), At("d1", hour + kMinuteMs, 2, "key"), At("peak", hour + 2 * kMinuteMs, 3)});
  EXPECT_EQ(PlanRetention(c, kPolicy, kNowMs).delete_ids, (Ids{"d1", "key"}));
}

TEST(RetentionPlanTest, EveryDeltaIsDeletedBeforeAnyWholeCaptureSoNoBatchOrphansOne) {
  // Two days beyond the hourly window, a capture every 5 minutes, a keyframe every 64 (as the server
  // stores them), each day's peak at noon: a day keeps one capture and the keyframe it needs, and whole
  // groups of a keyframe and its deltas go. Listed oldest first, a keyframe would precede its deltas,
  // and cut into batches of 100 the batch holding it would commit with some of them still stored.
  const int64_t day = kNowMs - 400 * kDayMs;
  std::vector<RetentionCandidate> c;
  std::string keyframe;
  for (int i = 0; i < 2 * 288; ++i) {
    const std::string id = "c" + std::to_string(i);
    const bool whole = i % 64 == 0;
    c.push_back(At(id, day + i * 5 * kMinuteMs, i % 288 == 144 ? 900 : 100, whole ? "" : keyframe));
    if (whole) keyframe = id;
  }
  RetentionPlan plan = PlanRetention(Live(c), kPolicy, kNowMs);
  // Kept: c144 and its keyframe c128, c432 and its keyframe c384, now.
  EXPECT_EQ(plan.kept, 5u);
  ASSERT_EQ(plan.delete_ids.size(), 2u * 288 - 4);
  // Every delta comes before the first whole capture; so in any prefix (what committed batches deleted),
  // a deleted keyframe's deltas are all deleted too.
  size_t first_whole = plan.delete_ids.size();
  for (size_t i = 0; i < plan.delete_ids.size(); ++i) {
    const int n = std::stoi(plan.delete_ids[i].substr(1));
    if (n % 64 == 0) {
      first_whole = std::min(first_whole, i);
    } else {
      EXPECT_LT(i, first_whole) << plan.delete_ids[i] << " is a delta listed after a keyframe";
    }
  }
  EXPECT_EQ(first_whole, plan.delete_ids.size() - 7);  // the keyframes c0, c64, c192, c256, c320, c448, c512
  EXPECT_EQ(plan.delete_deltas, first_whole);
}

TEST(RetentionPlanTest, TheLatestCaptureIsKeptWhenItIsNotItsBucketsPeak) {
  // A device that stopped sending 40 days ago: its last capture has a lower total than the one before it
  // in the same hour, yet `devices` and `report` show it, so it stays (with the hour's peak).
  const int64_t hour = HourAgo(40, 5);
  std::vector<RetentionCandidate> c = {At("early", hour, 1), At("peak", hour + 10 * kMinuteMs, 50),
                                       At("last", hour + 20 * kMinuteMs, 10)};
  RetentionPlan plan = PlanRetention(c, kPolicy, kNowMs);
  EXPECT_EQ(plan.delete_ids, (Ids{"early"}));
  // Beyond the hourly window too, and the latest ties broken by capture id as the store orders them.
  const int64_t day = kNowMs - 400 * kDayMs;
  std::vector<RetentionCandidate> d = {At("a", day, 9), At("c", day + kHourMs, 1), At("b", day + kHourMs, 1)};
  EXPECT_EQ(PlanRetention(d, kPolicy, kNowMs).delete_ids, (Ids{"b"}));
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
  EXPECT_EQ(first.kept, 30u * 144 + 30 * 24);  // the latest capture is in the full window already
  std::vector<RetentionCandidate> rest;
  for (const RetentionCandidate& x : c) {
    if (std::find(first.delete_ids.begin(), first.delete_ids.end(), x.capture_id) == first.delete_ids.end()) {
      rest.push_back(x);
    }
  }
  EXPECT_EQ(PlanRetention(rest, kPolicy, kNowMs).delete_ids, Ids{});
}

// The raw window alone: nothing is deleted; beyond 7 days the raw text goes, deltas first, but for k1 (a
// delta inside the window names it), k2 (the device's latest keyframe, which its next deltas may name) and
// what is gone already.
TEST(RetentionPlanTest, TheRawWindowDropsRawTextOnlyAndKeepsWhatKeptDeltasAndTheNextOnesNeed) {
  RetentionPolicy raw_only;
  raw_only.raw = std::chrono::hours(24 * 7);
  std::vector<RetentionCandidate> c = {At("k0", HourAgo(9, 0), 1),        At("d0", HourAgo(8, 0), 1, "k0"),
                                       At("k1", HourAgo(8, 0) + 1, 1),    At("d1a", HourAgo(7, 1), 1, "k1"),
                                       At("d1b", HourAgo(6, 0), 1, "k1"), At("k2", HourAgo(7, 12), 1),
                                       At("gone", HourAgo(10, 0), 1)};
  c.back().raw_dropped = true;
  RetentionPlan plan = PlanRetention(c, raw_only, kNowMs);
  EXPECT_EQ(plan.delete_ids, Ids{});
  EXPECT_EQ(plan.kept, c.size());
  EXPECT_EQ(plan.drop_raw_ids, (Ids{"d0", "d1a", "k0"}));
  EXPECT_EQ(plan.drop_raw_deltas, 2u);
  EXPECT_EQ(plan.raw_kept_for_deltas, 2u);  // k1 and k2
  // A capture the full window deletes loses nothing more: only kept captures are in drop_raw_ids.
  RetentionPolicy both = raw_only;
  both.full = std::chrono::hours(24 * 7);
  plan = PlanRetention(c, both, kNowMs);
  for (const std::string& id : plan.drop_raw_ids) {
    EXPECT_EQ(std::count(plan.delete_ids.begin(), plan.delete_ids.end(), id), 0) << id;
  }
}

}  // namespace
}  // namespace memfleet::server
