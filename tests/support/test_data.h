// Test support: files of tests/data (see its README), read whole. Header-only; needs GoogleTest.
//
//   std::string smaps = ReadTestData("aosp/system/memory/libmeminfo/testdata1/smaps");
#ifndef MEMFLEET_TESTS_SUPPORT_TEST_DATA_H_
#define MEMFLEET_TESTS_SUPPORT_TEST_DATA_H_

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "tests/support/test_paths.h"

namespace memfleet::testing {

// The contents of tests/data/<relative>; "" with a test failure when it cannot be opened.
inline std::string ReadTestData(std::string_view relative) {
  const std::string path = TestData(std::string(relative));
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_TEST_DATA_H_
