// ProcessAdb running real programs in adb's place: what they print and exit with comes back as is, a
// program that hangs is killed at the timeout, and a missing one is a clear error.
#include "cli/adb_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "tests/support/temp_dir.h"

namespace memfleet::cli {
namespace {

class ProcessAdbTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.path().empty()); }
  testing::TempDir dir_{"adb_process_test"};
};

TEST_F(ProcessAdbTest, ArgumentsOutputAndExitCodeComeBackAsTheProgramGaveThem) {
  const std::string adb = dir_.Write("adb", "#!/bin/sh\nprintf '%s|' \"$@\"\necho to-stderr >&2\nexit 3\n", true);
  ProcessAdb runner(adb);
  absl::StatusOr<AdbResult> result = runner.Run({"-s", "R58 M1", "shell", "echo 'a b'"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 3);
  EXPECT_EQ(result->output, "-s|R58 M1|shell|echo 'a b'|to-stderr\n");
}

TEST_F(ProcessAdbTest, StdinIsEmptySoNothingWaitsForInput) {
  const std::string adb = dir_.Write("adb", "#!/bin/sh\ncat\necho done\n", true);
  ProcessAdb runner(adb, std::chrono::seconds(30));
  absl::StatusOr<AdbResult> result = runner.Run({});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->output, "done\n");
}

TEST_F(ProcessAdbTest, AProgramThatHangsIsKilledAtTheTimeout) {
  const std::string adb = dir_.Write("adb", "#!/bin/sh\necho started\nexec sleep 600\n", true);
  ProcessAdb runner(adb, std::chrono::seconds(1));
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<AdbResult> result = runner.Run({"wait-for-device"});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(result.status().message().find("wait-for-device` did not finish within 1 s"), std::string::npos)
      << result.status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

TEST_F(ProcessAdbTest, AProgramThatPrintsMoreThanTheBoundIsStoppedThere) {
  // 64 MiB from a program that would go on: the reader stops at its bound and kills it.
  const std::string adb = dir_.Write("adb", "#!/bin/sh\nexec head -c 67108864 /dev/zero\n", true);
  ProcessAdb runner(adb, std::chrono::seconds(60), 1u << 20);
  absl::StatusOr<AdbResult> result = runner.Run({"shell", "cat big"});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(result.status().message().find("printed more than 1 MiB"), std::string::npos) << result.status();
  // At the bound exactly, the output is whole.
  const std::string exact = dir_.Write("exact", "#!/bin/sh\nexec head -c 1048576 /dev/zero\n", true);
  absl::StatusOr<AdbResult> whole = ProcessAdb(exact, std::chrono::seconds(60), 1u << 20).Run({});
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->output.size(), 1u << 20);
}

TEST_F(ProcessAdbTest, AMissingProgramSaysHowToGetOne) {
  ProcessAdb runner(dir_.path() + "/no-such-adb");
  absl::StatusOr<AdbResult> result = runner.Run({"devices"});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(result.status().message().find("install Debian's adb package, or set $ADB"), std::string::npos)
      << result.status();
}

TEST(AdbProgram, TheEnvironmentNamesItElseAdbOnPath) {
  setenv("ADB", "/opt/platform-tools/adb", 1);
  EXPECT_EQ(AdbProgram(), "/opt/platform-tools/adb");
  setenv("ADB", "", 1);
  EXPECT_EQ(AdbProgram(), "adb");
  unsetenv("ADB");
  EXPECT_EQ(AdbProgram(), "adb");
}

}  // namespace
}  // namespace memfleet::cli
