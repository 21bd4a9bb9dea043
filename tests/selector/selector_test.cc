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

const DeviceFacts kXiaomi = {
    "Xiaomi 12", "qcom", "sm8450", "sim-qcom-101", "Xiaomi/cupid/cupid:14/UKQ1/V816:user/release-keys", "", ""};

TEST(SelectorTest, TermsAreKeptInTheirCanonicalForm) {
  Selector s = Select({"model=Pixel 8 Pro", " soc =sm8450", "build=a=b", "label.run=12*"});
  EXPECT_THAT(s.terms(), ::testing::ElementsAre("model=\"Pixel 8 Pro\"", "soc=sm8450", "build=a=b", "label.run=12*"));
  EXPECT_EQ(s.ToString(), "model=\"Pixel 8 Pro\" soc=sm8450 build=a=b label.run=12*");
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
                                         {{"tier=dumsys"}, "tier is one of kernel, dumpsys"},
                                         {{"tier=dumpsys*"}, "tier is one of kernel, dumpsys"},
                                         {{"tier="}, "give a value, e.g. tier=dumpsys"},
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

// tier= is the tier of the device's latest capture (docs/accounting.md section 9): one of the two names,
// exactly; a device whose tier is unknown (nothing stored since the store kept tiers) matches neither.
TEST(SelectorTest, TierTermsMatchTheLatestCapturesTierExactly) {
  DeviceFacts shell = kXiaomi;
  shell.tier = "dumpsys";
  DeviceFacts rooted = kXiaomi;
  rooted.tier = "kernel";
  EXPECT_TRUE(Select({"tier=dumpsys"}).MatchesDevice(shell));
  EXPECT_FALSE(Select({"tier=dumpsys"}).MatchesDevice(rooted));
  EXPECT_TRUE(Select({"tier=kernel", "platform=qcom"}).MatchesDevice(rooted));
  EXPECT_FALSE(Select({"tier=kernel"}).MatchesDevice(kXiaomi));
  EXPECT_FALSE(Select({"tier=dumpsys"}).MatchesDevice(kXiaomi));
  EXPECT_EQ(Select({" tier =kernel"}).ToString(), "tier=kernel");
}

// While the stored tier is unknown (a phone online with no capture yet, or its latest stored before
// tiers), tier= takes the tier its agent said in its Hello; a stored tier wins over the agent's.
TEST(SelectorTest, TierTermsFallBackToTheAgentsTierWhileTheStoredOneIsUnknown) {
  DeviceFacts new_shell = kXiaomi;
  new_shell.agent_tier = "dumpsys";
  EXPECT_TRUE(Select({"tier=dumpsys"}).MatchesDevice(new_shell));
  EXPECT_FALSE(Select({"tier=kernel"}).MatchesDevice(new_shell));
  DeviceFacts rooted_since = new_shell;  // its latest capture is of the kernel tier, its agent says dumpsys
  rooted_since.tier = "kernel";
  EXPECT_TRUE(Select({"tier=kernel"}).MatchesDevice(rooted_since));
  EXPECT_FALSE(Select({"tier=dumpsys"}).MatchesDevice(rooted_since));
}

TEST(SelectorTest, LabelTermsMatchACapturesLabelsExactly) {
  Selector s = Select({"model=Pixel 8", "label.run=12*", "label.suite=camera"});
  EXPECT_TRUE(s.MatchesLabels({{"run", "12*"}, {"suite", "camera"}, {"rack", "3"}}));
  EXPECT_FALSE(s.MatchesLabels({{"run", "1234"}, {"suite", "camera"}}));  // '*' is not a prefix on labels
  EXPECT_FALSE(s.MatchesLabels({{"run", "12*"}}));                        // every label term
  EXPECT_TRUE(Select({"model=Pixel 8"}).MatchesLabels({}));
}

// A label value as the views print it (quoted when it holds a space) selects the same captures as the
// value typed bare, and the selector's own text prints it quoted again.
TEST(SelectorTest, AQuotedLabelValueReadsBackAsPrinted) {
  Selector quoted = Select({"label.suite=\"camera smoke\"", "agentlabel.desk=\"row \\\"B\\\"\""});
  EXPECT_EQ(quoted.labels(), (capture::Labels{{"suite", "camera smoke"}}));
  EXPECT_EQ(quoted.agent_labels(), (capture::Labels{{"desk", "row \"B\""}}));
  EXPECT_TRUE(quoted.MatchesLabels({{"suite", "camera smoke"}}, {{"desk", "row \"B\""}}));
  EXPECT_EQ(quoted.ToString(), "label.suite=\"camera smoke\" agentlabel.desk=\"row \\\"B\\\"\"");
  EXPECT_EQ(Select({"label.suite=camera smoke"}).labels(), quoted.labels());
  absl::StatusOr<Selector> open = Selector::Parse({"label.suite=\"camera smoke"});
  EXPECT_EQ(open.status().code(), absl::StatusCode::kInvalidArgument);
}

// A device term's value is quoted as a label's is: the selector's text (shown in the sweeps list) names
// `model="Pixel 8"` and `soc=sm8450` as two terms, and each printed term selects what the bare one did.
TEST(SelectorTest, ADeviceValueWithASpaceIsQuotedAndReadsBack) {
  const DeviceFacts pixel = {"Pixel 8", "generic", "gs301", "p8-1", "google/shiba:14", "", ""};
  Selector bare = Select({"model=Pixel 8", "soc=gs301"});
  EXPECT_EQ(bare.ToString(), "model=\"Pixel 8\" soc=gs301");
  Selector quoted = Select({"model=\"Pixel 8\"", "soc=gs301"});
  EXPECT_EQ(quoted.terms(), bare.terms());
  EXPECT_TRUE(quoted.MatchesDevice(pixel));
  EXPECT_FALSE(quoted.MatchesDevice(kXiaomi));
  EXPECT_TRUE(Select({"model=\"Pixel *\""}).MatchesDevice(pixel));  // a prefix inside the quotes
  EXPECT_FALSE(Select({"model=\"Pixel 8 Pro\""}).MatchesDevice(pixel));
  absl::StatusOr<Selector> open = Selector::Parse({"model=\"Pixel 8"});
  ASSERT_FALSE(open.ok());
  EXPECT_THAT(std::string(open.status().message()), HasSubstr("closing"));
  absl::StatusOr<Selector> empty = Selector::Parse({"model=\"\""});
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("give a value"));
}

// label.NAME matches a sweep's labels only, agentlabel.NAME the agent's only: an agent that writes a run's
// label into its own header is not in the run.
TEST(SelectorTest, LabelTermsMatchOnlyLabelsFromTheirSource) {
  Selector run = Select({"label.run=R1"});
  EXPECT_EQ(run.labels(), (capture::Labels{{"run", "R1"}}));
  EXPECT_TRUE(run.agent_labels().empty());
  EXPECT_TRUE(run.MatchesLabels({{"run", "R1"}}, {}));
  EXPECT_FALSE(run.MatchesLabels({}, {{"run", "R1"}}));

  Selector rack = Select({"agentlabel.rack=7", "label.run=R1"});
  EXPECT_TRUE(rack.has_label_terms());
  EXPECT_EQ(rack.agent_labels(), (capture::Labels{{"rack", "7"}}));
  EXPECT_EQ(rack.ToString(), "agentlabel.rack=7 label.run=R1");
  EXPECT_TRUE(rack.MatchesLabels({{"run", "R1"}}, {{"rack", "7"}}));
  EXPECT_FALSE(rack.MatchesLabels({{"run", "R1"}, {"rack", "7"}}, {}));  // a sweep's rack=7 is not the agent's
  EXPECT_FALSE(Select({"model=Pixel 8"}).has_label_terms());

  absl::StatusOr<Selector> bad = Selector::Parse({"agentlabel.Rack=7"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("agentlabel.Rack=7"));
}

}  // namespace
}  // namespace memfleet::selector
