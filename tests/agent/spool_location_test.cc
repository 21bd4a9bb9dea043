// DefaultSpoolDir: a persistent folder private to the agent, never /tmp; the device id stays one segment.
#include "agent/spool_location.h"

#include <unistd.h>

#include "gtest/gtest.h"

namespace memfleet::agent {
namespace {

SpoolHost Linux(bool root) {
  SpoolHost h;
  h.root = root;
  h.home = "/home/lab";
  return h;
}

TEST(SpoolLocationTest, PhoneLinuxRootAndUser) {
  SpoolHost phone = Linux(true);
  phone.android = true;
  EXPECT_EQ(DefaultSpoolDir("bench-3", phone), "/data/local/tmp/memfleet/spool");
  EXPECT_EQ(DefaultSpoolDir("bench-3", Linux(true)), "/var/lib/memfleet-agent/bench-3");
  EXPECT_EQ(DefaultSpoolDir("bench-3", Linux(false)), "/home/lab/.local/state/memfleet-agent/bench-3");
  SpoolHost xdg = Linux(false);
  xdg.xdg_state_home = "/srv/state";
  EXPECT_EQ(DefaultSpoolDir("bench-3", xdg), "/srv/state/memfleet-agent/bench-3");
  xdg.xdg_state_home = "relative/state";  // not absolute: ignored, as the XDG spec says
  EXPECT_EQ(DefaultSpoolDir("bench-3", xdg), "/home/lab/.local/state/memfleet-agent/bench-3");
  EXPECT_EQ(DefaultSpoolDir("bench-3", SpoolHost{}), "");  // not root, no $HOME
}

TEST(SpoolLocationTest, DeviceIdStaysOneSegment) {
  EXPECT_EQ(DefaultSpoolDir("lab:rack@3+a", Linux(true)), "/var/lib/memfleet-agent/lab_rack_3_a");
  EXPECT_EQ(DefaultSpoolDir("../../etc", Linux(true)), "/var/lib/memfleet-agent/.._.._etc");
  EXPECT_EQ(DefaultSpoolDir("..", Linux(true)), "/var/lib/memfleet-agent/_..");
}

TEST(SpoolLocationTest, ThisHostIsRootHere) {
  // The tests run as root in CI; the flag must follow the effective uid, whatever it is.
  EXPECT_EQ(SpoolHost::ThisHost().root, geteuid() == 0);
}

}  // namespace
}  // namespace memfleet::agent
