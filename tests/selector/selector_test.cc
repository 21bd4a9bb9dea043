// The one --where grammar and matcher (selector/selector.h): what it accepts, what it refuses and why,
// and which devices and captures a parsed selector matches. The CLI, the server's queries and sweeps, the
// dashboard and /metrics all parse with it, so these cases hold for every surface.
#include "selector/selector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace memfleet::selector {
namespace {

using ::testing::HasSubstr;

Selector Select(const std::vector<std::string>& terms) {
  absl::StatusOr<Selector> s = Selector::Parse(terms);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : Selector();
}

const DeviceFacts kXiaomi = {"Xiaomi 12", "qcom", "sm8450", "sim-qcom-101",
                             "Xiaomi/cupid/cupid:14/UKQ1/V816:user/release-keys"};

TEST(SelectorTest, TermsAreKeptInTheirCanonicalForm) {
  Selector s = Select({"model=Pixel 8 Pro", " soc =sm8450", "build=a=b", "label.run=12*"});
  EXPECT_THAT(s.terms(), ::testing::ElementsAre("model=Pixel 8 Pro", "soc=sm8450", "build=a=b", "label.run=12*"));
  EXPECT_EQ(s.ToString(), "model=Pixel 8 Pro soc=sm8450 build=a=b label.run=12*");
  EXPECT_EQ(s.labels(), (capture::Labels{{"run", "12*"}}));
  EXPECT_TRUE(Select({}).empty());
  EXPECT_TRUE(Select({"platform=q*"}).MatchesDevice(kXiaomi));  // a prefix is not checked as a platform name
}

TEST(SelectorTest, RefusalsNameTheTermAndTheFix) {
  struct Case {
    std::vector<std::string> terms;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{{{"qcom"}, "expected KEY=VALUE"},
                                         {{"vendor=qcom"}, "unknown key \"vendor\""},
                                         {{"colour=red"}, "label.NAME"},
                                         {{"model="}, "give a value, e.g. model=VALUE"},
                                         {{"=x"}, "unknown key"},
                                         {{"platform=qualcomm"}, "qcom, mtk, xring, mali, generic"},
                                         {{"model=a", "model=b"}, "given twice"},
                                         {{"label.run=1", "label.run=2"}, "given twice"},
                                         {{"label.Run=1"}, "label"},
                                         {{"label.=1"}, "label"},
                                         {{"label.run="}, "label"},
                                         {{"model=a\nforged"}, "control character"},
                                         {{std::string(600, 'x')}, "longer than 512 bytes"},
                                         {std::vector<std::string>(33, "model=a"), "at most 32"}}) {
    absl::StatusOr<Selector> s = Selector::Parse(c.terms);
    ASSERT_FALSE(s.ok()) << c.terms[0];
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.status().message()), HasSubstr(c.says)) << c.terms[0];
    EXPECT_EQ(std::string(s.status().message()).find('\n'), std::string::npos);  // a newline would forge a log line
  }
}

TEST(SelectorTest, EveryDeviceTermMustMatchAndStarIsAPrefix) {
  EXPECT_TRUE(Select({}).MatchesDevice(kXiaomi));
  EXPECT_TRUE(Select({"model=Xiaomi 12", "platform=qcom"}).MatchesDevice(kXiaomi));
  EXPECT_FALSE(Select({"model=Xiaomi 12", "platform=mtk"}).MatchesDevice(kXiaomi));  // AND, not OR
  EXPECT_FALSE(Select({"model=Xiaomi"}).MatchesDevice(kXiaomi));                     // exact unless '*'
  EXPECT_FALSE(Select({"model=xiaomi 12"}).MatchesDevice(kXiaomi));                  // case-sensitive
  EXPECT_TRUE(Select({"model=Xiaomi*"}).MatchesDevice(kXiaomi));
  EXPECT_TRUE(Select({"model=*"}).MatchesDevice(kXiaomi));
  EXPECT_TRUE(Select({"device_id=sim-*", "soc=sm8450"}).MatchesDevice(kXiaomi));
  EXPECT_TRUE(Select({"build=Xiaomi/cupid/*"}).MatchesDevice(kXiaomi));
  EXPECT_FALSE(Select({"device_id=sim-qcom-1010"}).MatchesDevice(kXiaomi));
  EXPECT_TRUE(Select({"label.run=1"}).MatchesDevice(kXiaomi));  // label terms are matched on captures
}

TEST(SelectorTest, LabelTermsMatchACapturesLabelsExactly) {
  Selector s = Select({"model=Pixel 8", "label.run=12*", "label.suite=camera"});
  EXPECT_TRUE(s.MatchesLabels({{"run", "12*"}, {"suite", "camera"}, {"rack", "3"}}));
  EXPECT_FALSE(s.MatchesLabels({{"run", "1234"}, {"suite", "camera"}}));  // '*' is not a prefix on labels
  EXPECT_FALSE(s.MatchesLabels({{"run", "12*"}}));                        // every label term
  EXPECT_TRUE(Select({"model=Pixel 8"}).MatchesLabels({}));
}

}  // namespace
}  // namespace memfleet::selector
