// Typed process names against the names a device has: exact first, then a unique base name, then a
// unique suffix; otherwise an error that lists the closest names, bounded.
#include "common/process_name_match.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace memfleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::vector<std::string> kNames = {"/root/.pyenv/versions/3.11.7/bin/python3",
                                         "/system/bin/surfaceflinger",
                                         "com.tencent.mm",
                                         "com.tencent.mm:push",
                                         "/vendor/bin/hw/android.hardware.graphics.composer@2.4-service",
                                         "system_server",
                                         "/system/bin/surfaceflinger"};  // a name twice: two pids

TEST(ResolveProcessNameTest, TheExactNameWinsEvenWhenItIsAlsoAnotherNamesSuffix) {
  EXPECT_EQ(*ResolveProcessName("com.tencent.mm", kNames, "here"), "com.tencent.mm");
  EXPECT_EQ(*ResolveProcessName("/system/bin/surfaceflinger", kNames, "here"), "/system/bin/surfaceflinger");
}

TEST(ResolveProcessNameTest, AUniqueBaseNameMatches) {
  EXPECT_EQ(*ResolveProcessName("python3", kNames, "here"), "/root/.pyenv/versions/3.11.7/bin/python3");
  EXPECT_EQ(*ResolveProcessName("surfaceflinger", kNames, "here"), "/system/bin/surfaceflinger");
}

TEST(ResolveProcessNameTest, AUniqueSuffixMatches) {
  EXPECT_EQ(*ResolveProcessName("bin/python3", kNames, "here"), "/root/.pyenv/versions/3.11.7/bin/python3");
  EXPECT_EQ(*ResolveProcessName("mm:push", kNames, "here"), "com.tencent.mm:push");
  EXPECT_EQ(*ResolveProcessName("composer@2.4-service", kNames, "here"),
            "/vendor/bin/hw/android.hardware.graphics.composer@2.4-service");
}

TEST(ResolveProcessNameTest, SeveralBaseNamesAreAmbiguousAndListed) {
  std::vector<std::string> names = kNames;
  names.push_back("/usr/bin/python3");
  absl::StatusOr<std::string> r = ResolveProcessName("python3", names, "in the latest report of host");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "\"python3\" is the base name of 2 processes in the latest report of host: "
            "\"/root/.pyenv/versions/3.11.7/bin/python3\", \"/usr/bin/python3\"; give the full name");
}

TEST(ResolveProcessNameTest, SeveralSuffixesAreAmbiguous) {
  std::vector<std::string> names = {"com.a.service", "com.b.service"};
  absl::StatusOr<std::string> r = ResolveProcessName(".service", names, "here");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("is the end of 2 processes here: \"com.a.service\", \"com.b.service\""));
}

TEST(ResolveProcessNameTest, NothingMatchingListsTheClosestNames) {
  absl::StatusOr<std::string> r = ResolveProcessName("surfaceflinge", kNames, "in the report of pixel-7");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  // Containing the typed text ranks first; 6 distinct names.
  EXPECT_THAT(r.status().message(),
              HasSubstr("no process named \"surfaceflinge\" in the report of pixel-7 (6 processes; closest: "
                        "\"/system/bin/surfaceflinger\", "));
  absl::StatusOr<std::string> typo = ResolveProcessName("pyhton3", kNames, "here");
  EXPECT_EQ(typo.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(ClosestProcessNames("pyhton3", kNames, 1), ElementsAre("/root/.pyenv/versions/3.11.7/bin/python3"));
  EXPECT_THAT(ResolveProcessName("x", {}, "here").status().message(), "no process named \"x\" here (0 processes)");
}

TEST(ResolveProcessNameTest, TheListIsBounded) {
  std::vector<std::string> names;
  for (int i = 0; i < 500; ++i) names.push_back("worker-" + std::to_string(i));
  EXPECT_EQ(ClosestProcessNames("worker", names).size(), kMaxSuggestedProcessNames);
  absl::StatusOr<std::string> r = ResolveProcessName("worker", names, "here");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_LT(r.status().message().size(), 400u);
  // A hostile, very long name costs no more than its first characters.
  names.push_back(std::string(1 << 16, 'a'));
  EXPECT_EQ(ClosestProcessNames("aaaa", names, 1).front().size(), size_t{1} << 16);
}

TEST(ProcessBaseNameTest, AfterTheLastSlash) {
  EXPECT_EQ(ProcessBaseName("/usr/bin/python3"), "python3");
  EXPECT_EQ(ProcessBaseName("system_server"), "system_server");
  EXPECT_EQ(ProcessBaseName("dir/"), "");
}

}  // namespace
}  // namespace memfleet
