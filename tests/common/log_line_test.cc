// The one log line format of the server and the agent: UTC time to the millisecond, the program, the message.
#include "common/log_line.h"

#include <chrono>

#include "gtest/gtest.h"

namespace memfleet {
namespace {

TEST(LogLineTest, TimeToTheMillisecondThenProgramThenMessage) {
  // 2026-12-02T16:15:00Z (time_spec_test.cc has the arithmetic) and 7 ms.
  const auto at = std::chrono::system_clock::from_time_t(1796228100) + std::chrono::milliseconds(7);
  EXPECT_EQ(FormatLogLine("memfleet-server", "stopped", at), "2026-12-02T16:15:00.007Z memfleet-server: stopped\n");
  EXPECT_EQ(FormatLogLine("memfleet-agent", "", at), "2026-12-02T16:15:00.007Z memfleet-agent: \n");
}

}  // namespace
}  // namespace memfleet
