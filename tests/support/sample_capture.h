// Sample captures for tests that stream to a server by hand: a capture tree collected as the agent
// would, and capture ids in the agent's format (<device>-<time>-<seq>) that the server accepts.
#ifndef MEMFLEET_TESTS_SUPPORT_SAMPLE_CAPTURE_H_
#define MEMFLEET_TESTS_SUPPORT_SAMPLE_CAPTURE_H_

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/collector.h"
#include "capture/capture.h"

namespace memfleet::testing {

// The capture of `tree` (a capture tree's folder); an empty capture, with a test failure, if it cannot be read.
inline capture::Capture LoadCapture(const std::string& tree) {
  agent::CaptureTreeFs fs(tree);
  absl::StatusOr<capture::Capture> c = agent::CollectCapture(fs, agent::CollectOptions{});
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? std::move(*c) : capture::Capture();
}

// The seq-th capture id of `device`, all at one fixed time (2026-11-30T08:00:00Z).
inline std::string CaptureId(const std::string& device, int seq) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%06d", seq);
  return device + "-20261130T080000Z-" + buf;
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_SAMPLE_CAPTURE_H_
