// The whole-device figures' rules (docs/accounting.md section 3), each from the values it takes, so a
// wrong rounding, a missing term or a silent 0 shows without a whole capture.
#include <map>

#include "gtest/gtest.h"
#include "accounting/ddr_kb.h"
#include "accounting/kernel_kb.h"
#include "accounting/processes_kb.h"
#include "accounting/static_reserved_kb.h"

namespace memfleet::accounting {
namespace {

constexpr int64_t kGiB = 1048576;  // in kB
const AndroidEvidence kPhone{true, "capture.json android_sdk"};

TEST(DdrKbTest, EstimateIsTheSmallestStandardSizeAtLeastWhatTheKernelSees) {
  // 11,400,000 kB of MemTotal + 300,000 kB of GCMA is above 10 GiB: a 12 GiB phone, not 11.
  DdrFigure ddr = DdrKb(CaptureHeader{}, 11'400'000, 300'000, kPhone);
  EXPECT_EQ(ddr.ddr_kb, 12 * kGiB);
  EXPECT_TRUE(ddr.estimated);
  EXPECT_FALSE(ddr.warning.has_value());
  // Exactly 8 GiB seen is an 8 GiB phone.
  EXPECT_EQ(DdrKb(CaptureHeader{}, 8 * kGiB, 0, kPhone).ddr_kb, 8 * kGiB);
  // 18 GiB exists between 16 and 24.
  EXPECT_EQ(DdrKb(CaptureHeader{}, 16 * kGiB + 1, 0, kPhone).ddr_kb, 18 * kGiB);
}

TEST(DdrKbTest, TheHeadersSizeWinsAndAnImplausibleOneIsNullNotEstimated) {
  CaptureHeader given;
  given.ddr_size_kb = 16 * kGiB;
  DdrFigure ddr = DdrKb(given, 11'400'000, 0, kPhone);
  EXPECT_EQ(ddr.ddr_kb, 16 * kGiB);
  EXPECT_FALSE(ddr.estimated);

  CaptureHeader wrong;
  wrong.ddr_size_kb_problem = "capture.json: ddr_size_kb 9223372036854775807 is above 64 TiB";
  DdrFigure none = DdrKb(wrong, 11'400'000, 0, kPhone);
  EXPECT_FALSE(none.ddr_kb.has_value());
  EXPECT_FALSE(none.estimated);
  ASSERT_TRUE(none.warning.has_value());
  EXPECT_NE(none.warning->find("ddr_size_kb"), std::string::npos) << *none.warning;
}

TEST(DdrKbTest, AboveTheLargestStandardSizeOrUnknownInputsIsNull) {
  DdrFigure huge = DdrKb(CaptureHeader{}, 64 * kGiB + 1, 0, kPhone);
  EXPECT_FALSE(huge.ddr_kb.has_value());
  EXPECT_TRUE(huge.warning.has_value());
  DdrFigure unknown = DdrKb(CaptureHeader{}, std::nullopt, 0, kPhone);
  EXPECT_FALSE(unknown.ddr_kb.has_value());
  EXPECT_FALSE(unknown.warning.has_value());  // the missing MemTotal has its own warning
}

TEST(DdrKbTest, AHostThatIsNoAndroidDeviceGetsNoEstimate) {
  // A PC with 7.6 GB of MemTotal: rounding it up to 8 GiB would make up a static reserved figure.
  DdrFigure host = DdrKb(CaptureHeader{}, 7'623'304, 0, AndroidEvidence{});
  EXPECT_FALSE(host.ddr_kb.has_value());
  EXPECT_FALSE(host.estimated);
  ASSERT_TRUE(host.warning.has_value());
  EXPECT_NE(host.warning->find("no Android device"), std::string::npos) << *host.warning;
  // A size the header gives is a known size, Android or not.
  CaptureHeader given;
  given.ddr_size_kb = 16 * kGiB;
  EXPECT_EQ(DdrKb(given, 11'400'000, 0, AndroidEvidence{}).ddr_kb, 16 * kGiB);
}

TEST(StaticReservedKbTest, IsDdrMinusMemTotalMinusGcmaAndNeverNegative) {
  StaticReservedFigure r = StaticReservedKb(12 * kGiB, 11'400'000, 300'000);
  EXPECT_EQ(r.static_reserved_kb, 12 * kGiB - 11'400'000 - 300'000);
  EXPECT_FALSE(r.warning.has_value());
  StaticReservedFigure below = StaticReservedKb(8 * kGiB, 8 * kGiB, 1);
  EXPECT_FALSE(below.static_reserved_kb.has_value());
  ASSERT_TRUE(below.warning.has_value());
  EXPECT_NE(below.warning->find("DDR size"), std::string::npos);
  EXPECT_FALSE(StaticReservedKb(std::nullopt, 1, 0).static_reserved_kb.has_value());
}

Meminfo KernelLines() {
  Meminfo m;
  m.values = {{"Shmem", 100}, {"SUnreclaim", 20}, {"VmallocUsed", 3}, {"PageTables", 4000}, {"KernelStack", 50000}};
  return m;
}

TEST(KernelKbTest, KernelStackCountsOnlyWithoutVmapStack) {
  Meminfo m = KernelLines();
  EXPECT_EQ(KernelKb(&m, /*vmap_stack=*/true, 7).kernel_kb, 100 + 20 + 3 + 4000 + 7);
  EXPECT_EQ(KernelKb(&m, /*vmap_stack=*/false, 7).kernel_kb, 100 + 20 + 3 + 4000 + 50000 + 7);
}

TEST(KernelKbTest, SecPageTablesAddsWhenPrintedAndIsNoGapWhenNot) {
  Meminfo m = KernelLines();
  m.values["SecPageTables"] = 600000;
  EXPECT_EQ(KernelKb(&m, true, 0).kernel_kb, 100 + 20 + 3 + 4000 + 600000);
  Meminfo old = KernelLines();  // a kernel before 6.0 has no such line
  KernelFigure k = KernelKb(&old, true, 0);
  EXPECT_EQ(k.kernel_kb, 100 + 20 + 3 + 4000);
  EXPECT_FALSE(k.warning.has_value());
}

TEST(KernelKbTest, AMissingRequiredLineOrUnknownCmaIsNullWithTheLineNamed) {
  Meminfo m = KernelLines();
  m.values.erase("SUnreclaim");
  KernelFigure k = KernelKb(&m, true, 0);
  EXPECT_FALSE(k.kernel_kb.has_value());
  ASSERT_TRUE(k.warning.has_value());
  EXPECT_NE(k.warning->find("SUnreclaim"), std::string::npos) << *k.warning;
  Meminfo full = KernelLines();
  EXPECT_FALSE(KernelKb(&full, true, std::nullopt).kernel_kb.has_value());  // hidden CMA is not 0
  EXPECT_FALSE(KernelKb(nullptr, true, 0).kernel_kb.has_value());
}

ProcessReport Process(Kb total_kb, bool cached) {
  ProcessReport p;
  p.total_kb = total_kb;
  p.cached = cached;
  return p;
}

TEST(ProcessesKbTest, CachedProcessesAreLeftOutAndUnknownTotalsAreCountedInTheWarning) {
  std::map<int, ProcessReport> processes = {{1, Process(1000, false)},
                                            {2, Process(20000, true)},
                                            {3, Process(300, false)},
                                            {4, Process(std::nullopt, false)}};
  ProcessesFigure f = ProcessesKb(processes, false);
  EXPECT_EQ(f.processes_kb, 1300);
  ASSERT_TRUE(f.warning.has_value());
  EXPECT_EQ(f.warning->rfind("1 processes", 0), 0u) << *f.warning;
}

TEST(ProcessesKbTest, AnUnusableDeviceWideGpuNodeMakesItNullNotAnUndercount) {
  std::map<int, ProcessReport> processes = {{1, Process(1000, false)}};
  EXPECT_FALSE(ProcessesKb(processes, /*device_wide_gpu_unknown=*/true).processes_kb.has_value());
}

}  // namespace
}  // namespace memfleet::accounting
