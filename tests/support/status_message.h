// Test support: whether an error's message says what a test expects it to name (a node path, a line
// number, a field), without tying the test to the whole sentence.
//
//   EXPECT_TRUE(testing::MessageHas(ParseMeminfo("MemTotal: x kB\n").status(), "line 1"));
#ifndef MEMFLEET_TESTS_SUPPORT_STATUS_MESSAGE_H_
#define MEMFLEET_TESTS_SUPPORT_STATUS_MESSAGE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace memfleet::testing {

inline bool MessageHas(const absl::Status& status, std::string_view part) {
  return std::string(status.message()).find(part) != std::string::npos;
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_STATUS_MESSAGE_H_
