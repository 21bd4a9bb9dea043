// Test support: a stored report checked against its sample capture's expected.json
// (tests/data/captures/<capture>/expected.json): the platform, every device figure and every figure of
// every process the expected report lists, and no process more or less. Header-only.
//
//   ExpectReportMatchesExpected(server.Report("qcom-sm8450"), "qcom-sm8450");
#ifndef MEMFLEET_TESTS_SUPPORT_EXPECTED_REPORT_H_
#define MEMFLEET_TESTS_SUPPORT_EXPECTED_REPORT_H_

#include <gtest/gtest.h>

#include <string>

#include "nlohmann/json.hpp"
#include "tests/support/test_data.h"

namespace memfleet::testing {

inline void ExpectReportMatchesExpected(const nlohmann::json& got, const std::string& capture) {
  const nlohmann::json expected = nlohmann::json::parse(ReadTestData("captures/" + capture + "/expected.json"));
  ASSERT_TRUE(got.is_object()) << capture;
  EXPECT_EQ(got["platform"], expected["platform"]) << capture;
  for (auto it = expected["device"].begin(); it != expected["device"].end(); ++it) {
    EXPECT_EQ(got["device"][it.key()], it.value()) << capture << " device." << it.key();
  }
  ASSERT_EQ(got["processes"].size(), expected["processes"].size()) << capture;
  for (auto p = expected["processes"].begin(); p != expected["processes"].end(); ++p) {
    for (auto f = p.value().begin(); f != p.value().end(); ++f) {
      EXPECT_EQ(got["processes"][p.key()][f.key()], f.value()) << capture << " pid " << p.key() << " " << f.key();
    }
  }
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_EXPECTED_REPORT_H_
