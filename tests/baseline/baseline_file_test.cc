// The baseline file: the sample file parses to what it says; every kind of bad file is refused with a
// message that says what and where.
#include "baseline/baseline_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/support/load_tree.h"

namespace memfleet::baseline {
namespace {

using ::testing::HasSubstr;

std::string SampleText() { return testing::ReadFileForTest(testing::TestData("baselines/sample-lab.json")); }

// A minimal valid file with `departments` spliced in.
std::string WithDepartments(const std::string& departments) {
  return R"({"format": 1, "name": "t", "departments": )" + departments + "}";
}

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<Baseline> b = ParseBaselineFile(text);
  EXPECT_FALSE(b.ok()) << "accepted: " << text;
  if (b.ok()) return "";
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(b.status().message());
}

TEST(BaselineFileTest, SampleFileParses) {
  absl::StatusOr<Baseline> b = ParseBaselineFile(SampleText());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->name, "sample lab reference");
  EXPECT_EQ(b->version, "2026.11-1");
  ASSERT_EQ(b->departments.size(), 3u);
  const Department& framework = b->departments[1];
  EXPECT_EQ(framework.name, "Framework");
  EXPECT_EQ(framework.status, MetStatus::kUnmet);
  EXPECT_EQ(framework.target_total_kb, 500000);
  ASSERT_EQ(framework.processes.size(), 3u);
  EXPECT_TRUE(framework.processes[0].sr);
  EXPECT_EQ(framework.processes[0].status, MetStatus::kMet);
  EXPECT_EQ(framework.processes[0].graphics_dma_kb, 150000);
  EXPECT_EQ(framework.processes[1].status, MetStatus::kUnmet);
  EXPECT_EQ(framework.processes[1].target_total_kb, 170000);
  EXPECT_FALSE(framework.processes[2].sr);
  EXPECT_EQ(b->DepartmentOf("com.miui.home"), &b->departments[1]);
  EXPECT_EQ(b->DepartmentOf("nope"), nullptr);
  EXPECT_TRUE(b->AppliesTo("any", "thing"));  // no applies_to: every device
}

TEST(BaselineFileTest, CanonicalJsonParsesBackToTheSame) {
  absl::StatusOr<Baseline> b = ParseBaselineFile(SampleText());
  ASSERT_TRUE(b.ok());
  absl::StatusOr<Baseline> again = ParseBaselineFile(BaselineToJson(*b));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(BaselineToJson(*again), BaselineToJson(*b));
}

TEST(BaselineFileTest, AppliesToModelsAndBuildPrefixes) {
  absl::StatusOr<Baseline> b = ParseBaselineFile(
      R"({"format": 1, "name": "t", "applies_to": {"models": ["SM8450-QRD", "Pixel*"], "builds": ["UQ1A.*"]},
          "departments": [{"name": "D", "status": "met", "processes": [
            {"name": "p", "graphics_dma_kb": 1, "non_graphics_kb": 2}]}]})");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(b->AppliesTo("SM8450-QRD", "UQ1A.240105"));
  EXPECT_TRUE(b->AppliesTo("Pixel 8", "UQ1A.1"));
  EXPECT_FALSE(b->AppliesTo("SM8550", "UQ1A.1"));
  EXPECT_FALSE(b->AppliesTo("Pixel 8", "AP2A.1"));
}

TEST(BaselineFileTest, UnknownFieldSaysWhichAndWhere) {
  std::string e = ErrorOf(WithDepartments(R"([{"name": "D", "status": "met", "processes": [
      {"name": "p", "graphic_dma_kb": 1, "graphics_dma_kb": 1, "non_graphics_kb": 2}]}])"));
  EXPECT_THAT(e, HasSubstr("departments[0] (\"D\").processes[0] (\"p\"): unknown field \"graphic_dma_kb\""));
  EXPECT_THAT(ErrorOf(R"({"format": 1, "name": "t", "colour": "red", "departments": []})"),
              HasSubstr("top level: unknown field \"colour\""));
}

TEST(BaselineFileTest, NegativeBudgetIsRefused) {
  std::string e = ErrorOf(WithDepartments(R"([{"name": "D", "status": "met", "processes": [
      {"name": "p", "graphics_dma_kb": -5, "non_graphics_kb": 2}]}])"));
  EXPECT_THAT(e, HasSubstr("processes[0] (\"p\"): \"graphics_dma_kb\" is negative (-5)"));
  EXPECT_THAT(ErrorOf(WithDepartments(R"([{"name": "D", "status": "unmet", "target_total_kb": -1, "processes": [
      {"name": "p"}]}])")),
              HasSubstr("\"target_total_kb\" is negative"));
  EXPECT_THAT(ErrorOf(WithDepartments(R"([{"name": "D", "status": "met", "processes": [
      {"name": "p", "graphics_dma_kb": 1.5, "non_graphics_kb": 2}]}])")),
              HasSubstr("must be a whole number of kB"));
}

TEST(BaselineFileTest, ProcessInTwoDepartmentsIsRefused) {
  std::string e = ErrorOf(WithDepartments(R"([
      {"name": "A", "status": "met", "processes": [{"name": "p", "graphics_dma_kb": 1, "non_graphics_kb": 2}]},
      {"name": "B", "status": "met", "processes": [{"name": "p", "graphics_dma_kb": 1, "non_graphics_kb": 2}]}])"));
  EXPECT_THAT(e, HasSubstr("departments[1] (\"B\").processes[0] (\"p\"): process \"p\" is already listed at "
                           "departments[0] (\"A\").processes[0] (\"p\")"));
}

TEST(BaselineFileTest, MissingRequiredFields) {
  EXPECT_THAT(ErrorOf(R"({"format": 1, "departments": []})"), HasSubstr("missing required field \"name\""));
  EXPECT_THAT(ErrorOf(R"({"name": "t", "departments": [{}]})"), HasSubstr("missing required field \"format\""));
  EXPECT_THAT(ErrorOf(R"({"format": 1, "name": "t"})"), HasSubstr("missing required field \"departments\""));
  // A met department's process is held to its actual baseline: both budgets needed.
  EXPECT_THAT(ErrorOf(WithDepartments(R"([{"name": "D", "status": "met", "processes": [
      {"name": "p", "graphics_dma_kb": 1}]}])")),
              HasSubstr("missing required field \"non_graphics_kb\" (a process of a met department"));
  // An unmet department needs its target total (scheme 2).
  EXPECT_THAT(ErrorOf(WithDepartments(R"([{"name": "D", "status": "unmet", "processes": [{"name": "p"}]}])")),
              HasSubstr("departments[0] (\"D\"): missing required field \"target_total_kb\""));
  // An SR process needs its status; an unmet one its target total (scheme 1).
  EXPECT_THAT(ErrorOf(WithDepartments(R"([{"name": "D", "status": "unmet", "target_total_kb": 9, "processes": [
      {"name": "p", "sr": true}]}])")),
              HasSubstr("missing required field \"status\""));
  EXPECT_THAT(ErrorOf(WithDepartments(R"([{"name": "D", "status": "unmet", "target_total_kb": 9, "processes": [
      {"name": "p", "sr": true, "status": "unmet"}]}])")),
              HasSubstr("missing required field \"target_total_kb\" (scheme 1"));
  EXPECT_THAT(ErrorOf(WithDepartments(R"([{"name": "D", "status": "met", "processes": []}])")),
              HasSubstr("missing required field \"processes\""));
}

TEST(BaselineFileTest, InconsistentOrMalformedValues) {
  EXPECT_THAT(ErrorOf(WithDepartments(R"([{"name": "D", "status": "met", "processes": [
      {"name": "p", "sr": true, "status": "unmet", "graphics_dma_kb": 1, "non_graphics_kb": 2}]}])")),
              HasSubstr("is unmet but its department \"D\" is met"));
  EXPECT_THAT(ErrorOf(WithDepartments(R"([{"name": "D", "status": "done", "processes": [{"name": "p"}]}])")),
              HasSubstr("\"status\" is \"done\"; use \"met\" or \"unmet\""));
  EXPECT_THAT(ErrorOf(R"({"format": 2, "name": "t", "departments": []})"), HasSubstr("\"format\" must be 1"));
  EXPECT_THAT(ErrorOf("{\"format\": 1,\n \"name\": "), HasSubstr("not valid JSON"));
  EXPECT_THAT(ErrorOf("[1, 2]"), HasSubstr("top level must be an object"));
  EXPECT_THAT(
      ErrorOf(R"({"format": 1, "name": "t", "x": )" + std::string(100000, '[') + std::string(100000, ']') + "}"),
      HasSubstr("invalid baseline file: nested more than 64 levels deep (at byte 95)"));
  EXPECT_THAT(ErrorOf(WithDepartments(R"([{"name": "D", "status": "met", "processes": [
      {"name": "p", "sr": "yes", "graphics_dma_kb": 1, "non_graphics_kb": 2}]}])")),
              HasSubstr("\"sr\" must be true or false"));
}

TEST(BaselineFileTest, EveryProblemIsListed) {
  // Two unrelated mistakes in one file: both reported, one per line.
  std::string e = ErrorOf(WithDepartments(R"([{"name": "D", "status": "met", "processes": [
      {"name": "p", "graphics_dma_kb": -1, "non_graphics_kb": 2, "colour": 1}]}])"));
  EXPECT_THAT(e, HasSubstr("is negative"));
  EXPECT_THAT(e, HasSubstr("unknown field \"colour\""));
  EXPECT_NE(e.find('\n'), std::string::npos);
}

TEST(BaselineFileTest, OversizedFileIsRefusedBeforeParsing) {
  std::string big(kMaxBaselineFileBytes + 1, ' ');
  EXPECT_THAT(ErrorOf(big), HasSubstr("bytes, more than the"));
}

}  // namespace
}  // namespace memfleet::baseline
