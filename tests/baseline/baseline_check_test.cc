// The two schemes of docs/accounting.md section 6, one test per row of its table, on the sample captures'
// expected reports (tests/data/captures/*/expected.json) against tests/data/baselines/sample-lab.json.
// Figures quoted in comments are from those expected.json files (qcom-sm8450 unless named).
#include "baseline/baseline_check.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/baseline/baseline_test_util.h"

namespace memfleet::baseline {
namespace {

constexpr char kSurfaceflinger[] = "/system/bin/surfaceflinger";

Baseline SampleBaseline() {
  absl::StatusOr<Baseline> b =
      ParseBaselineFile(testing::ReadFileForTest(testing::TestData("baselines/sample-lab.json")));
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? *b : Baseline();
}

const Assignment* Find(const Assignments& a, const std::string& process, Budget budget) {
  for (const Assignment& x : a.budgets) {
    if (x.process == process && x.budget == budget) return &x;
  }
  return nullptr;
}

const Unbudgeted* FindNone(const Assignments& a, const std::string& process) {
  for (const Unbudgeted& u : a.none) {
    if (u.process == process) return &u;
  }
  return nullptr;
}

const CheckRow* Row(const CheckResult& r, const std::string& process, Budget budget,
                    const std::string& department = "") {
  for (const CheckRow& row : r.rows) {
    if (row.item.process == process && row.item.budget == budget &&
        (department.empty() || row.item.department == department)) {
      return &row;
    }
  }
  return nullptr;
}

std::vector<DeviceSample> Sm8450Only() { return {testing::Sample("qcom-sm8450", "sim-qcom-101", "SM8450", "B1")}; }

// Both schemes give a met department's processes their actual baseline in both budgets, nothing else.
void ExpectMetDepartmentRow(Scheme scheme) {
  Baseline b = SampleBaseline();
  Assignments a = AssignBudgets(b, scheme);
  for (const char* p : {kSurfaceflinger, "/vendor/bin/hw/android.hardware.graphics.composer3-service",
                        "/vendor/bin/hw/vendor.qti.hardware.display.allocator-service", "com.android.camera",
                        "/system/bin/cameraserver"}) {
    EXPECT_NE(Find(a, p, Budget::kGraphicsDma), nullptr) << p;
    EXPECT_NE(Find(a, p, Budget::kNonGraphics), nullptr) << p;
    EXPECT_EQ(Find(a, p, Budget::kTargetTotal), nullptr) << p;
    EXPECT_EQ(FindNone(a, p), nullptr) << p;
  }
  EXPECT_EQ(Find(a, kSurfaceflinger, Budget::kGraphicsDma)->budget_kb, 180000);
  EXPECT_EQ(Find(a, kSurfaceflinger, Budget::kNonGraphics)->budget_kb, 60000);
  // No department-wide budget for a met department.
  for (const Assignment& x : a.budgets) EXPECT_FALSE(x.is_department() && x.department != "Framework");

  CheckResult r = CheckBaseline(b, scheme, Sm8450Only());
  // surfaceflinger graphics_dma_kb 182161 > 180000: over by 2161 on the one device.
  const CheckRow* sf_gfx = Row(r, kSurfaceflinger, Budget::kGraphicsDma);
  ASSERT_NE(sf_gfx, nullptr);
  EXPECT_EQ(sf_gfx->devices_checked, 1u);
  EXPECT_EQ(sf_gfx->devices_over, 1u);
  EXPECT_EQ(sf_gfx->worst_value_kb, 182161);
  EXPECT_EQ(sf_gfx->worst_over_kb, 2161);
  EXPECT_EQ(sf_gfx->worst_device, "sim-qcom-101");
  // non_graphics_kb 58475 <= 60000: within, 1525 of headroom.
  const CheckRow* sf_non = Row(r, kSurfaceflinger, Budget::kNonGraphics);
  ASSERT_NE(sf_non, nullptr);
  EXPECT_EQ(sf_non->devices_over, 0u);
  EXPECT_EQ(sf_non->worst_over_kb, -1525);
  // com.android.camera graphics_dma_kb 87029 > 80000 (by 7029); non_graphics_kb 169223 <= 170000.
  EXPECT_EQ(Row(r, "com.android.camera", Budget::kGraphicsDma)->worst_over_kb, 7029);
  EXPECT_EQ(Row(r, "com.android.camera", Budget::kNonGraphics)->devices_over, 0u);
  // cameraserver: graphics_dma_kb 90 <= 1000, non_graphics_kb 131788 <= 135000.
  EXPECT_FALSE(Row(r, "/system/bin/cameraserver", Budget::kGraphicsDma)->over());
  EXPECT_FALSE(Row(r, "/system/bin/cameraserver", Budget::kNonGraphics)->over());
}

TEST(BaselineCheckTest, Scheme1MetDepartmentEveryProcessActualBaselineBothBudgets) {
  ExpectMetDepartmentRow(Scheme::k1);
}

TEST(BaselineCheckTest, Scheme2MetDepartmentEveryProcessActualBaselineBothBudgets) {
  ExpectMetDepartmentRow(Scheme::k2);
}

TEST(BaselineCheckTest, Scheme1UnmetDepartmentSrProcessesOnly) {
  Baseline b = SampleBaseline();
  Assignments a = AssignBudgets(b, Scheme::k1);
  // Met SR process (system_server): actual baseline, both budgets.
  ASSERT_NE(Find(a, "system_server", Budget::kGraphicsDma), nullptr);
  EXPECT_EQ(Find(a, "system_server", Budget::kGraphicsDma)->budget_kb, 150000);
  EXPECT_EQ(Find(a, "system_server", Budget::kNonGraphics)->budget_kb, 130000);
  EXPECT_EQ(Find(a, "system_server", Budget::kTargetTotal), nullptr);
  // Unmet SR process (systemui): its target total only.
  ASSERT_NE(Find(a, "com.android.systemui", Budget::kTargetTotal), nullptr);
  EXPECT_EQ(Find(a, "com.android.systemui", Budget::kTargetTotal)->budget_kb, 170000);
  EXPECT_EQ(Find(a, "com.android.systemui", Budget::kGraphicsDma), nullptr);
  // No department-wide budget under scheme 1; the non-SR process gets none.
  for (const Assignment& x : a.budgets) EXPECT_FALSE(x.is_department());
  ASSERT_NE(FindNone(a, "com.miui.home"), nullptr);
  EXPECT_EQ(Find(a, "com.miui.home", Budget::kTargetTotal), nullptr);

  CheckResult r = CheckBaseline(b, Scheme::k1, Sm8450Only());
  // system_server graphics_dma_kb 156576 > 150000 (by 6576); non_graphics_kb 123568 <= 130000.
  EXPECT_EQ(Row(r, "system_server", Budget::kGraphicsDma)->worst_over_kb, 6576);
  EXPECT_TRUE(Row(r, "system_server", Budget::kGraphicsDma)->over());
  EXPECT_FALSE(Row(r, "system_server", Budget::kNonGraphics)->over());
  // systemui total_kb 176249 > target 170000 (by 6249).
  const CheckRow* ui = Row(r, "com.android.systemui", Budget::kTargetTotal);
  ASSERT_NE(ui, nullptr);
  EXPECT_EQ(ui->worst_value_kb, 176249);
  EXPECT_EQ(ui->worst_over_kb, 6249);
  EXPECT_EQ(Row(r, "", Budget::kTargetTotal, "Framework"), nullptr);
  EXPECT_TRUE(r.AnyOver());
}

TEST(BaselineCheckTest, Scheme2UnmetDepartmentWholeTargetAndMetSrProcesses) {
  Baseline b = SampleBaseline();
  Assignments a = AssignBudgets(b, Scheme::k2);
  // The department as a whole: its target total.
  bool department_budget = false;
  for (const Assignment& x : a.budgets) {
    if (x.is_department()) {
      EXPECT_EQ(x.department, "Framework");
      EXPECT_EQ(x.budget, Budget::kTargetTotal);
      EXPECT_EQ(x.budget_kb, 500000);
      department_budget = true;
    }
  }
  EXPECT_TRUE(department_budget);
  // Met SR processes: actual baseline, both budgets.
  EXPECT_EQ(Find(a, "system_server", Budget::kGraphicsDma)->budget_kb, 150000);
  EXPECT_EQ(Find(a, "system_server", Budget::kNonGraphics)->budget_kb, 130000);
  // Unmet SR processes: no baseline yet (its target total is not used under scheme 2).
  EXPECT_EQ(Find(a, "com.android.systemui", Budget::kTargetTotal), nullptr);
  ASSERT_NE(FindNone(a, "com.android.systemui"), nullptr);
  EXPECT_NE(FindNone(a, "com.android.systemui")->reason.find("no baseline yet"), std::string::npos);

  CheckResult r = CheckBaseline(b, Scheme::k2, Sm8450Only());
  // Framework on sim-qcom-101: system_server 280144 + systemui 176249 + miui.home 343358 = 799751 total_kb,
  // over the 500000 target by 299751.
  const CheckRow* dept = Row(r, "", Budget::kTargetTotal, "Framework");
  ASSERT_NE(dept, nullptr);
  EXPECT_EQ(dept->worst_value_kb, 799751);
  EXPECT_EQ(dept->worst_over_kb, 299751);
  EXPECT_EQ(dept->devices_over, 1u);
  EXPECT_EQ(Row(r, "system_server", Budget::kGraphicsDma)->worst_over_kb, 6576);
  EXPECT_EQ(Row(r, "com.android.systemui", Budget::kTargetTotal), nullptr);
  // Over-budget rows come first, the largest excess first: the department's 299751.
  ASSERT_FALSE(r.rows.empty());
  EXPECT_EQ(r.rows.front().item.department, "Framework");
  EXPECT_TRUE(r.rows.front().item.is_department());
}

TEST(BaselineCheckTest, CountsDevicesOverAndTheWorstPerModelAndBuild) {
  Baseline b = SampleBaseline();
  // All five sample captures as one model and build: surfaceflinger graphics_dma_kb is 47347 (generic),
  // 394754 (mtk), 82185 (qcom-edge), 182161 (sm8450), 65051 (xring); over 180000 on mtk (by 214754)
  // and sm8450 (by 2161).
  std::vector<DeviceSample> fleet = {
      testing::Sample("generic-noddr", "sim-generic-404", "SIM", "B1"),
      testing::Sample("mtk-mt6989", "sim-mtk-202", "SIM", "B1"),
      testing::Sample("qcom-edge", "sim-qcom-505", "SIM", "B1"),
      testing::Sample("qcom-sm8450", "sim-qcom-101", "SIM", "B1"),
      testing::Sample("xring-o1", "sim-xring-303", "SIM", "B1"),
  };
  CheckResult r = CheckBaseline(b, Scheme::k1, fleet);
  EXPECT_EQ(r.devices, 5u);
  const CheckRow* sf = Row(r, kSurfaceflinger, Budget::kGraphicsDma);
  ASSERT_NE(sf, nullptr);
  EXPECT_EQ(sf->devices_checked, 5u);
  EXPECT_EQ(sf->devices_over, 2u);
  EXPECT_EQ(sf->worst_device, "sim-mtk-202");
  EXPECT_EQ(sf->worst_over_kb, 214754);
  // The allocator-service runs on every sample; composer3 only on mtk, qcom-edge, sm8450, xring.
  EXPECT_EQ(Row(r, "/vendor/bin/hw/android.hardware.graphics.composer3-service", Budget::kGraphicsDma)->devices_checked,
            4u);

  // Split by model: one group per device, each row carries its model.
  fleet[1].model = "MT6989";
  CheckResult split = CheckBaseline(b, Scheme::k1, fleet);
  size_t sf_rows = 0;
  for (const CheckRow& row : split.rows) {
    if (row.item.process == kSurfaceflinger && row.item.budget == Budget::kGraphicsDma) {
      ++sf_rows;
      if (row.model == "MT6989") {
        EXPECT_EQ(row.devices_over, 1u);
      }
      if (row.model == "SIM") {
        EXPECT_EQ(row.devices_checked, 4u);
        EXPECT_EQ(row.worst_device, "sim-qcom-101");
      }
    }
  }
  EXPECT_EQ(sf_rows, 2u);
}

TEST(BaselineCheckTest, AppliesToLeavesOtherModelsOut) {
  Baseline b = SampleBaseline();
  b.models = {"SM8450"};
  std::vector<DeviceSample> fleet = {testing::Sample("qcom-sm8450", "sim-qcom-101", "SM8450", "B1"),
                                     testing::Sample("mtk-mt6989", "sim-mtk-202", "MT6989", "B1")};
  CheckResult r = CheckBaseline(b, Scheme::k1, fleet);
  EXPECT_EQ(r.devices, 1u);
  EXPECT_EQ(r.devices_not_applicable, 1u);
  EXPECT_EQ(Row(r, kSurfaceflinger, Budget::kGraphicsDma)->worst_device, "sim-qcom-101");
}

TEST(BaselineCheckTest, InstancesAreSummedAndNullIsUnknownNotZero) {
  Baseline b = SampleBaseline();
  DeviceSample s = testing::Sample("qcom-sm8450", "sim-qcom-101", "SM8450", "B1");
  // A second surfaceflinger instance with graphics_dma_kb 1000: 182161 + 1000 = 183161.
  report::ProcessReport extra;
  extra.pid = 99999;
  extra.name = kSurfaceflinger;
  extra.graphics_dma_kb = 1000;
  extra.non_graphics_kb = 10;
  extra.total_kb = 1010;
  s.report.processes[extra.pid] = extra;
  // systemui's total unknown (a device-wide GPU node failed, say).
  for (auto& [pid, p] : s.report.processes) {
    if (p.name == "com.android.systemui") p.total_kb.reset();
  }
  CheckResult r = CheckBaseline(b, Scheme::k1, {s});
  EXPECT_EQ(Row(r, kSurfaceflinger, Budget::kGraphicsDma)->worst_value_kb, 183161);
  const CheckRow* ui = Row(r, "com.android.systemui", Budget::kTargetTotal);
  ASSERT_NE(ui, nullptr);
  EXPECT_EQ(ui->devices_unknown, 1u);
  EXPECT_EQ(ui->devices_checked, 0u);
  EXPECT_FALSE(ui->over());
  // Scheme 2: the Framework total cannot be summed with one member unknown.
  CheckResult r2 = CheckBaseline(b, Scheme::k2, {s});
  EXPECT_EQ(Row(r2, "", Budget::kTargetTotal, "Framework")->devices_unknown, 1u);
}

// An over-budget process shows where its memory is on the worst device, when that capture has its heaps:
// surfaceflinger over its graphics+DMA budget on sim-qcom-101, whose App Summary (expected-heaps.json, pid
// 6225) has native heap 30805 kB and graphics 16201 kB. Without heaps (the plain sample): no breakdown.
TEST(BaselineCheckTest, OverBudgetRowsCarryTheWorstDevicesAppSummary) {
  std::vector<DeviceSample> samples = Sm8450Only();
  EXPECT_FALSE(Row(CheckBaseline(SampleBaseline(), Scheme::k1, samples), kSurfaceflinger, Budget::kGraphicsDma)
                   ->worst_app_summary.has_value());
  testing::AddExpectedHeaps(samples[0].report, "qcom-sm8450");
  CheckResult r = CheckBaseline(SampleBaseline(), Scheme::k1, samples);
  const CheckRow* sf = Row(r, kSurfaceflinger, Budget::kGraphicsDma);
  ASSERT_NE(sf, nullptr);
  ASSERT_TRUE(sf->over());
  ASSERT_TRUE(sf->worst_app_summary.has_value());
  EXPECT_EQ(sf->worst_app_summary->native_heap_kb, 30805);
  EXPECT_EQ(sf->worst_app_summary->graphics_kb, 16201);
  EXPECT_EQ(sf->worst_app_summary->total_pss_kb, 79341);
}

TEST(BaselineCheckTest, AllWithinIsNotOver) {
  Baseline b = SampleBaseline();
  // Raise every budget far above the samples.
  for (Department& d : b.departments) {
    d.target_total_kb = 10000000;
    for (ProcessBaseline& p : d.processes) {
      if (p.graphics_dma_kb) p.graphics_dma_kb = 10000000;
      if (p.non_graphics_kb) p.non_graphics_kb = 10000000;
      if (p.target_total_kb) p.target_total_kb = 10000000;
    }
  }
  EXPECT_FALSE(CheckBaseline(b, Scheme::k1, Sm8450Only()).AnyOver());
  EXPECT_FALSE(CheckBaseline(b, Scheme::k2, Sm8450Only()).AnyOver());
}

// A dumpsys-tier report (tests/data/captures-shell/shield-shell/expected.json: an agent reading as shell,
// figures from the Shield's dumpsys lines) knows only total_kb: a process's graphics/DMA and non-graphics
// budgets are listed as not checkable, never passed; a target_total_kb budget is checked on the line's
// figure (com.google.android.tts: 128382 > 120000, by 8382).
TEST(BaselineCheckTest, ADumpsysTierReportChecksOnlyTotals) {
  absl::StatusOr<Baseline> b = ParseBaselineFile(R"({"format": 1, "name": "shell lab", "version": "1",
    "departments": [
      {"name": "System", "status": "met", "processes": [
        {"name": "system", "graphics_dma_kb": 10000, "non_graphics_kb": 500000}]},
      {"name": "Speech", "status": "unmet", "target_total_kb": 200000, "processes": [
        {"name": "com.google.android.tts", "sr": true, "status": "unmet", "target_total_kb": 120000}]}]})");
  ASSERT_TRUE(b.ok()) << b.status();
  absl::StatusOr<report::Report> shell =
      report::ReportFromJson(testing::ReadFileForTest(testing::TestData("captures-shell/shield-shell/expected.json")));
  ASSERT_TRUE(shell.ok()) << shell.status();
  DeviceSample s;
  s.device_id = "shield-shell";
  s.model = "SHIELD Android TV";
  s.build = "B1";
  s.capture_id = "shield-shell-capture";
  s.report = *shell;
  CheckResult r = CheckBaseline(*b, Scheme::k1, {s});
  for (Budget budget : {Budget::kGraphicsDma, Budget::kNonGraphics}) {
    const CheckRow* row = Row(r, "system", budget);
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(row->devices_checked, 0u);
    EXPECT_EQ(row->devices_unknown, 1u);
    EXPECT_FALSE(row->over());
  }
  ASSERT_EQ(r.unchecked.size(), 2u);
  for (const Unchecked& u : r.unchecked) {
    EXPECT_EQ(u.item.process, "system");
    EXPECT_NE(u.reason.find("is not checkable: the reports that have the process are of the dumpsys tier"),
              std::string::npos)
        << u.reason;
  }
  const CheckRow* tts = Row(r, "com.google.android.tts", Budget::kTargetTotal);
  ASSERT_NE(tts, nullptr);
  EXPECT_EQ(tts->devices_checked, 1u);
  EXPECT_EQ(tts->worst_value_kb, 128382);
  EXPECT_EQ(tts->worst_over_kb, 8382);
}

TEST(BaselineCheckTest, SchemeFromInt) {
  EXPECT_EQ(*SchemeFromInt(1), Scheme::k1);
  EXPECT_EQ(*SchemeFromInt(2), Scheme::k2);
  EXPECT_EQ(SchemeFromInt(3).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace memfleet::baseline
