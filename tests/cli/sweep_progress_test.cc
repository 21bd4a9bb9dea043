// The sweep progress line and the per-device state tracking behind it.
#include "cli/sweep_progress.h"

#include <gtest/gtest.h>

#include <string>

namespace memfleet::cli {
namespace {

using State = v1::SweepProgress;

v1::SweepProgress Msg(const std::string& device, v1::SweepProgress::State state, uint32_t total = 0,
                      const std::string& capture_id = "", const std::string& message = "") {
  v1::SweepProgress p;
  p.set_sweep_id("sweep-1");
  p.set_device_id(device);
  p.set_state(state);
  p.set_devices_total(total);
  p.set_capture_id(capture_id);
  p.set_message(message);
  return p;
}

TEST(ProgressBarTest, StoredShareIsFilledAndEndedWithoutCaptureIsMarked) {
  // 3 of 6 stored: 3 * 10 / 6 = 5 cells '='; stored + failed = 4: 4 * 10 / 6 = 6 cells done, so one 'x'.
  EXPECT_EQ(RenderProgressBar({6, 3, 1, 0, 0}), "[=====x    ] 3/6 stored, 1 failed, 0 offline");
  EXPECT_EQ(RenderProgressBar({6, 0, 0, 0, 0}), "[          ] 0/6 stored, 0 failed, 0 offline");
  EXPECT_EQ(RenderProgressBar({6, 6, 0, 0, 0}), "[==========] 6/6 stored, 0 failed, 0 offline");
  // 2 stored, 1 offline, 1 timed out of 4: '=' 5 cells, done 10 cells.
  EXPECT_EQ(RenderProgressBar({4, 2, 0, 1, 1}), "[=====xxxxx] 2/4 stored, 0 failed, 1 offline, 1 timed out");
}

TEST(ProgressBarTest, NoDevicesAndInconsistentTotalsStayInTheBox) {
  EXPECT_EQ(RenderProgressBar({0, 0, 0, 0, 0}), "[          ] 0/0 stored, 0 failed, 0 offline");
  // More devices done than the announced total (a late total): the total is raised, never overflows.
  EXPECT_EQ(RenderProgressBar({1, 2, 1, 0, 0}), "[======xxxx] 2/3 stored, 1 failed, 0 offline");
  EXPECT_EQ(RenderProgressBar({3, 1, 0, 0, 0}, 3), "[=  ] 1/3 stored, 0 failed, 0 offline");
}

TEST(SweepTrackerTest, CountsEachDeviceByItsLatestState) {
  SweepTracker t;
  EXPECT_TRUE(t.Apply(Msg("a", State::SENT, 3)));
  EXPECT_TRUE(t.Apply(Msg("b", State::SENT, 3)));
  EXPECT_TRUE(t.Apply(Msg("c", State::OFFLINE, 3, "", "not connected")));
  EXPECT_TRUE(t.Apply(Msg("a", State::CAPTURING, 3)));
  EXPECT_FALSE(t.Apply(Msg("a", State::CAPTURING, 3)));  // nothing new to draw
  EXPECT_TRUE(t.Apply(Msg("a", State::STORED, 3, "a-20261202T161500Z-000001")));
  EXPECT_TRUE(t.Apply(Msg("b", State::FAILED, 3, "", "collector: EACCES")));
  SweepTally tally = t.tally();
  EXPECT_EQ(tally.total, 3u);
  EXPECT_EQ(tally.stored, 1u);
  EXPECT_EQ(tally.failed, 1u);
  EXPECT_EQ(tally.offline, 1u);
  EXPECT_EQ(tally.timed_out, 0u);
  ASSERT_EQ(t.devices().size(), 3u);
  EXPECT_EQ(t.devices()[0].device_id, "a");  // first-seen order
  EXPECT_EQ(t.devices()[0].capture_id, "a-20261202T161500Z-000001");
  EXPECT_EQ(t.devices()[1].message, "collector: EACCES");
  EXPECT_EQ(t.sweep_id(), "sweep-1");
  EXPECT_FALSE(t.finished());
}

TEST(SweepTrackerTest, AFinalStateIsNotUndoneByALateProgressMessage) {
  SweepTracker t;
  t.Apply(Msg("a", State::STORED, 1, "cap-1"));
  t.Apply(Msg("a", State::CAPTURING, 1));
  EXPECT_EQ(t.devices()[0].state, State::STORED);
  EXPECT_EQ(t.tally().stored, 1u);
  // A device that timed out and then stored after all counts as stored.
  t.Apply(Msg("b", State::TIMED_OUT, 2));
  t.Apply(Msg("b", State::STORED, 2, "cap-2"));
  EXPECT_EQ(t.tally().stored, 2u);
  EXPECT_EQ(t.tally().timed_out, 0u);
}

TEST(SweepTrackerTest, SummaryMessageEndsTheSweep) {
  SweepTracker t;
  t.Apply(Msg("a", State::STORED, 2));
  v1::SweepProgress summary;
  summary.set_sweep_id("sweep-1");
  summary.set_devices_total(2);
  summary.set_devices_done(2);
  summary.set_finished(true);
  t.Apply(summary);
  EXPECT_TRUE(t.finished());
  EXPECT_EQ(t.devices().size(), 1u);  // the summary is not a device
  EXPECT_EQ(t.tally().total, 2u);
}

TEST(PlainProgressLineTest, DeviceAndSummaryLines) {
  EXPECT_EQ(PlainProgressLine(Msg("pixel-7", State::STORED, 2, "pixel-7-20261202T161500Z-000001")),
            "pixel-7: stored (capture pixel-7-20261202T161500Z-000001)");
  EXPECT_EQ(PlainProgressLine(Msg("pixel-8", State::TIMED_OUT, 2, "", "no capture within 30 s")),
            "pixel-8: timed out: no capture within 30 s");
  v1::SweepProgress summary;
  summary.set_sweep_id("s1");
  summary.set_devices_total(2);
  summary.set_devices_done(2);
  summary.set_finished(true);
  EXPECT_EQ(PlainProgressLine(summary), "sweep s1: 2/2 devices done, finished");
}

}  // namespace
}  // namespace memfleet::cli
