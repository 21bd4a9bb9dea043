// What every view says when figures of the two tiers meet (report/tier_mix.h, docs/accounting.md section
// 9): a group of both tiers, one of a tier with devices of unknown tier beside it, and a history's change
// of tier, marked at the first point of the new tier (an unknown tier, stored before tiers, marks nothing).
#include "report/tier_mix.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "report/capture_marks.h"

namespace memfleet::report {
namespace {

TierCounts CountsOf(const std::vector<std::string>& tiers) {
  TierCounts counts;
  for (const std::string& tier : tiers) counts.Add(tier);
  return counts;
}

TEST(TierMixTest, AGroupOfBothTiersMixesThemWithItsUnknownsCounted) {
  const TierCounts counts = CountsOf({"dumpsys", "kernel", "dumpsys", ""});
  EXPECT_TRUE(counts.Mixed());
  EXPECT_FALSE(counts.PartlyUnknown()) << "the mix sentence already counts the unknown ones";
  EXPECT_EQ(MixedTiersSentence("Pixel 8", counts),
            "Pixel 8 mixes tiers (kernel 1, dumpsys 2, unknown 1): its figures do not compare");
  EXPECT_EQ(UnknownTiersSentence("Pixel 8", counts), "");
}

TEST(TierMixTest, AGroupOfOneTierWithDevicesOfUnknownTierSaysHowMany) {
  const TierCounts two = CountsOf({"kernel", "", ""});
  EXPECT_FALSE(two.Mixed());
  EXPECT_TRUE(two.PartlyUnknown());
  EXPECT_EQ(MixedTiersSentence("SM8450 HDK", two), "");
  EXPECT_EQ(UnknownTiersSentence("SM8450 HDK", two),
            "SM8450 HDK has 2 devices of unknown tier (stored before tiers): their figures may not compare");
  EXPECT_EQ(UnknownTiersSentence("SHIELD", CountsOf({"dumpsys", ""})),
            "SHIELD has 1 device of unknown tier (stored before tiers): its figures may not compare");
}

TEST(TierMixTest, AGroupOfOneTierOrOfUnknownsOnlySaysNothing) {
  for (const std::vector<std::string>& tiers :
       {std::vector<std::string>{"kernel", "kernel"}, std::vector<std::string>{"dumpsys"},
        std::vector<std::string>{"", ""}, std::vector<std::string>{}}) {
    const TierCounts counts = CountsOf(tiers);
    EXPECT_FALSE(counts.Mixed());
    EXPECT_FALSE(counts.PartlyUnknown());
    EXPECT_EQ(MixedTiersSentence("g", counts), "");
    EXPECT_EQ(UnknownTiersSentence("g", counts), "");
  }
}

TEST(TierMixTest, CountsAddByTheStoredName) {
  TierCounts counts;
  counts.Add("kernel", 3);
  counts.Add("dumpsys", 2);
  counts.Add("", 4);
  counts.Add("Kernel");  // not a tier's name: unknown, never guessed
  EXPECT_EQ(counts.kernel, 3u);
  EXPECT_EQ(counts.dumpsys, 2u);
  EXPECT_EQ(counts.unknown, 5u);
}

TEST(TierChangesTest, APhoneRootedLaterIsMarkedWhereItsTierChanges) {
  EXPECT_EQ(TierChanges({"dumpsys", "dumpsys", "kernel", "kernel"}),
            (std::vector<std::string>{"", "", "tier dumpsys -> kernel: figures before and after do not compare", ""}));
  EXPECT_EQ(TierChanges({"kernel", "dumpsys"}),
            (std::vector<std::string>{"", "tier kernel -> dumpsys: figures before and after do not compare"}));
}

TEST(TierChangesTest, UnknownTiersNeitherMarkNorEndARun) {
  // Stored before tiers, then of a tier: nothing to compare against, nothing marked.
  EXPECT_EQ(TierChanges({"", "", "kernel", "kernel"}), (std::vector<std::string>{"", "", "", ""}));
  // An unknown point between two tiers: the change is marked where the new tier shows.
  EXPECT_EQ(TierChanges({"kernel", "", "dumpsys"}),
            (std::vector<std::string>{"", "", "tier kernel -> dumpsys: figures before and after do not compare"}));
  EXPECT_EQ(TierChanges({"kernel", "", "kernel"}), (std::vector<std::string>{"", "", ""}));
  EXPECT_TRUE(TierChanges({}).empty());
}

TEST(TierChangesTest, ATierChangeIsACapturesFirstMark) {
  EXPECT_EQ(CaptureMarksText("sw-1", {{"run", "7"}}, {}, TierChangeText("dumpsys", "kernel")),
            "tier dumpsys -> kernel: figures before and after do not compare · sweep sw-1 · labels: run=7");
  const std::vector<CaptureMark> marks = CaptureMarks("", {}, {}, TierChangeText("kernel", "dumpsys"));
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0].kind, CaptureMark::Kind::kTierChange);
}

}  // namespace
}  // namespace memfleet::report
