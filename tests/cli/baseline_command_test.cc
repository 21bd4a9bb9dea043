// `memfleet baseline check` / `regressions` flags and output, without a server (the integration test
// runs them against one).
#include "cli/commands/baseline_command.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "nlohmann/json.hpp"

namespace memfleet::cli {
namespace {

TEST(BaselineCommandTest, CheckFlagsMakeTheRequest) {
  BaselineCheckArgs args;
  args.scheme = 2;
  args.since = "24h";
  args.where = {"model=SM8450"};
  args.now = std::chrono::system_clock::time_point(std::chrono::seconds(1764691200));  // 2025-12-02T16:00:00Z
  absl::StatusOr<v1::CheckBaselineRequest> r = MakeCheckRequest(args);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->scheme(), 2u);
  EXPECT_EQ(r->since(), "2025-12-01T16:00:00Z");
  ASSERT_EQ(r->selector().where_size(), 1);
  EXPECT_EQ(r->selector().where(0), "model=SM8450");
}

TEST(BaselineCommandTest, BadCheckFlagsAreUsageErrors) {
  BaselineCheckArgs args;
  args.scheme = 3;
  EXPECT_EQ(MakeCheckRequest(args).status().code(), absl::StatusCode::kInvalidArgument);
  args.scheme = 1;
  args.sweep_id = "sweep-1";
  args.since = "24h";
  EXPECT_EQ(MakeCheckRequest(args).status().code(), absl::StatusCode::kInvalidArgument);
  args.since = "";
  args.where = {"colour=red"};
  EXPECT_EQ(MakeCheckRequest(args).status().code(), absl::StatusCode::kInvalidArgument);
  args.where = {};
  args.since = "yesterday";
  args.sweep_id = "";
  EXPECT_EQ(MakeCheckRequest(args).status().code(), absl::StatusCode::kInvalidArgument);
}

v1::CheckBaselineResponse OneOverOneWithin() {
  v1::CheckBaselineResponse r;
  r.set_version(3);
  r.set_name("lab");
  r.set_scheme(1);
  r.set_devices(5);
  r.set_any_over(true);
  v1::BaselineRow* over = r.add_rows();
  over->set_model("SM8450");
  over->set_build("B1");
  over->set_department("Display");
  over->set_process("/system/bin/surfaceflinger");
  over->set_budget("graphics_dma_kb");
  over->set_budget_kb(180000);
  over->set_devices_checked(5);
  over->set_devices_over(2);
  over->set_worst_value_kb(182161);
  over->set_worst_over_kb(2161);
  over->set_worst_device("sim-qcom-101");
  v1::BaselineRow* within = r.add_rows();
  within->set_model("SM8450");
  within->set_department("Display");
  within->set_process("/system/bin/surfaceflinger");
  within->set_budget("non_graphics_kb");
  within->set_budget_kb(60000);
  within->set_devices_checked(5);
  within->set_worst_value_kb(58475);
  within->set_worst_over_kb(-1525);
  v1::UnbudgetedProcess* none = r.add_unbudgeted();
  none->set_department("Framework");
  none->set_process("com.android.systemui");
  none->set_reason("unmet SR process: no baseline yet (scheme 2)");
  return r;
}

TEST(BaselineCommandTest, TableListsWhatIsOverByHowMuchAndWhere) {
  std::string t = RenderCheck(OneOverOneWithin(), OutputFormat::kTable);
  EXPECT_NE(t.find("1 over budget (kB), 1 within"), std::string::npos) << t;
  EXPECT_NE(t.find(" 2 of 5 "), std::string::npos) << t;
  EXPECT_NE(t.find("+2,161"), std::string::npos) << t;
  EXPECT_NE(t.find("sim-qcom-101"), std::string::npos) << t;
  EXPECT_EQ(t.find("-1,525"), std::string::npos) << t;  // rows within budget are counted, not listed
  EXPECT_NE(t.find("com.android.systemui (Framework): unmet SR process"), std::string::npos) << t;
}

// Devices whose figure is unknown are counted beside the checked ones, spelled as the dashboard's
// baselines page and the fleet groups spell them.
TEST(BaselineCommandTest, DevicesWithAnUnknownFigureAreCountedBesideTheChecked) {
  v1::CheckBaselineResponse r = OneOverOneWithin();
  r.mutable_rows(0)->set_devices_checked(3);
  r.mutable_rows(0)->set_devices_unknown(1);
  const std::string t = RenderCheck(r, OutputFormat::kTable);
  EXPECT_NE(t.find(" 2 of 3 (+1 unknown) "), std::string::npos) << t;
}

TEST(BaselineCommandTest, OverBudgetRowsSayWhereTheMemoryIs) {
  v1::CheckBaselineResponse r = OneOverOneWithin();
  (*r.mutable_rows(0)->mutable_worst_app_summary_kb())["native_heap_kb"] = 30805;
  (*r.mutable_rows(0)->mutable_worst_app_summary_kb())["graphics_kb"] = 16201;
  std::string t = RenderCheck(r, OutputFormat::kTable);
  EXPECT_NE(t.find("where the memory is on the worst device (App Summary):"), std::string::npos) << t;
  EXPECT_NE(t.find("on sim-qcom-101: native heap 30.1 M"), std::string::npos) << t;
  EXPECT_NE(t.find("graphics 15.8 M"), std::string::npos) << t;
  nlohmann::json j = nlohmann::json::parse(RenderCheck(r, OutputFormat::kJson));
  EXPECT_EQ(j["rows"][0]["worst_app_summary"]["native_heap_kb"], 30805);
  EXPECT_TRUE(j["rows"][1]["worst_app_summary"].is_null());
}

TEST(BaselineCommandTest, JsonHasEveryRow) {
  nlohmann::json j = nlohmann::json::parse(RenderCheck(OneOverOneWithin(), OutputFormat::kJson));
  EXPECT_EQ(j["baseline_version"], 3);
  EXPECT_TRUE(j["any_over"].get<bool>());
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_TRUE(j["rows"][0]["over"].get<bool>());
  EXPECT_FALSE(j["rows"][1]["over"].get<bool>());
  EXPECT_EQ(j["rows"][1]["worst_over_kb"], -1525);
}

TEST(BaselineCommandTest, RegressionVerdicts) {
  v1::RegressionsResponse r;
  r.set_process_name("surfaceflinger");
  r.set_build_a("A");
  r.set_build_b("B");
  v1::ModelRegressions* m = r.add_models();
  m->set_model("SM8450");
  v1::FigureChange* up = m->add_figures();
  up->set_figure("graphics_dma_kb");
  up->set_delta_kb(27324);
  up->set_flagged(true);
  v1::FigureChange* flat = m->add_figures();
  flat->set_figure("non_graphics_kb");
  flat->set_delta_kb(911);
  std::string t = RenderRegressions(r, OutputFormat::kTable);
  EXPECT_NE(t.find("REGRESSION"), std::string::npos) << t;
  EXPECT_NE(t.find("+27,324"), std::string::npos) << t;
  EXPECT_NE(t.find("within noise"), std::string::npos) << t;
  EXPECT_EQ(t.find("which part moved"), std::string::npos) << t;  // no App Summary field flagged
}

// Each comparison names the tier of the figures it compares (docs/accounting.md section 9): a model
// whose devices report in both tiers is two comparisons, each saying which.
TEST(BaselineCommandTest, RegressionsNameTheTierOfEachComparison) {
  v1::RegressionsResponse r;
  r.set_process_name("system_server");
  for (const char* tier : {"kernel", "dumpsys"}) {
    v1::ModelRegressions* m = r.add_models();
    m->set_model("SHIELD Android TV");
    m->set_tier(tier);
    m->add_figures()->set_figure("total_kb");
  }
  const std::string t = RenderRegressions(r, OutputFormat::kTable);
  EXPECT_NE(t.find("\nmodel SHIELD Android TV, kernel tier\n"), std::string::npos) << t;
  EXPECT_NE(t.find("\nmodel SHIELD Android TV, dumpsys tier\n"), std::string::npos) << t;
  nlohmann::json j = nlohmann::json::parse(RenderRegressions(r, OutputFormat::kJson));
  EXPECT_EQ(j["models"][0]["tier"], "kernel");
  EXPECT_EQ(j["models"][1]["tier"], "dumpsys");
}

// With heaps on both builds, the flagged App Summary parts are said in words.
TEST(BaselineCommandTest, RegressionsSayWhichSummaryPartMoved) {
  v1::RegressionsResponse r;
  v1::ModelRegressions* m = r.add_models();
  m->set_model("SM8450");
  v1::FigureChange* native = m->add_figures();
  native->set_figure("app_summary.native_heap_kb");
  native->set_delta_kb(12698);  // 12.4 MiB
  native->set_devices_b(6);
  native->set_devices_moved(5);
  native->set_flagged(true);
  v1::FigureChange* java = m->add_figures();
  java->set_figure("app_summary.java_heap_kb");
  java->set_delta_kb(200);
  java->set_devices_b(6);
  std::string t = RenderRegressions(r, OutputFormat::kTable);
  EXPECT_NE(t.find("native heap +12.4 M"), std::string::npos) << t;
  EXPECT_NE(t.find("on 5 of 6 devices"), std::string::npos) << t;
  EXPECT_EQ(t.find("java heap +"), std::string::npos) << t;  // within the noise: no sentence
  nlohmann::json j = nlohmann::json::parse(RenderRegressions(r, OutputFormat::kJson));
  EXPECT_EQ(j["models"][0]["figures"][0]["devices_moved"], 5);
}

}  // namespace
}  // namespace memfleet::cli
