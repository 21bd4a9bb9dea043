// The one wording of what marks a stored capture (report/capture_marks.h), which `memfleet report`,
// `memfleet trend` and the dashboard's device page all print: the sweep it answered, then the labels its
// sweep gave, then those its agent wrote (docs/labels.md), in key order, and nothing for a periodic
// capture without labels.
#include "report/capture_marks.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace memfleet::report {
namespace {

std::vector<std::string> Texts(const std::vector<CaptureMark>& marks) {
  std::vector<std::string> texts;
  for (const CaptureMark& m : marks) texts.push_back(m.text);
  return texts;
}

TEST(CaptureMarksTest, ASweptCaptureIsMarkedBySweepThenItsLabelsThenItsAgents) {
  const std::vector<CaptureMark> marks = CaptureMarks("sw-7", {{"suite", "camera"}, {"run", "1234"}}, {{"rack", "7"}});
  ASSERT_EQ(marks.size(), 3u);
  EXPECT_EQ(marks[0].kind, CaptureMark::Kind::kSweep);
  EXPECT_EQ(marks[1].kind, CaptureMark::Kind::kLabels);
  EXPECT_EQ(marks[2].kind, CaptureMark::Kind::kAgentLabels);
  EXPECT_EQ(Texts(marks),
            (std::vector<std::string>{"sweep sw-7", "labels: run=1234 suite=camera", "agent labels: rack=7"}))
      << "labels in key order, whatever order they were given in";
  EXPECT_EQ(CaptureMarksText("sw-7", {{"run", "1234"}}, {{"rack", "7"}}),
            "sweep sw-7 · labels: run=1234 · agent labels: rack=7");
}

TEST(CaptureMarksTest, OnlyWhatTheCaptureHasIsSaid) {
  EXPECT_TRUE(CaptureMarks("", {}, {}).empty()) << "a periodic capture without labels has no mark";
  EXPECT_EQ(CaptureMarksText("", {}, {}), "");
  EXPECT_EQ(CaptureMarksText("", {}, {{"rack", "7"}}), "agent labels: rack=7");
  EXPECT_EQ(CaptureMarksText("sw-1", {}, {}), "sweep sw-1") << "a sweep without labels";
  EXPECT_EQ(CaptureMarksText("", {{"build", "a=b"}}, {}), "labels: build=a=b") << "a value may hold '='";
}

TEST(CaptureMarksTest, LabelTermsAreKeyValueBySpaceInKeyOrderAValueWithASpaceQuoted) {
  EXPECT_EQ(CaptureMarksText("", {{"z", "1"}, {"a", "2 3"}}, {}), "labels: a=\"2 3\" z=1");
  EXPECT_EQ(CaptureMarksText("", {}, {{"desk", "row \"B\""}}), "agent labels: desk=\"row \\\"B\\\"\"");
}

}  // namespace
}  // namespace memfleet::report
