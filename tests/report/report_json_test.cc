// Tests for ReportFromJson (report/report_json.h), the parser the CLI runs on the report JSON a
// server sends: a fixture report parses to its numbers, and hostile JSON (found by
// tests/fuzz/report_json_fuzzer) gives a status or a report, never an exception.
#include "report/report_json.h"

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/test_data.h"

namespace memfleet::report {
namespace {

using memfleet::testing::ReadTestData;

TEST(ReportFromJsonTest, FixtureReportParsesToItsNumbers) {
  // tests/data/captures/qcom-sm8450/expected.json: ddr_kb 16777216, total_kb 3567646, and pid 12083 (the
  // display allocator) with dma_kb 5403 and oom_score_adj -1000.
  absl::StatusOr<Report> r = ReportFromJson(ReadTestData("captures/qcom-sm8450/expected.json"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->platform, Platform::kQcom);
  EXPECT_EQ(r->device.ddr_kb, 16777216);
  EXPECT_EQ(r->device.total_kb, 3567646);
  ASSERT_EQ(r->processes.count(12083), 1u);
  EXPECT_EQ(r->processes.at(12083).dma_kb, 5403);
  EXPECT_EQ(r->processes.at(12083).oom_score_adj, -1000);
}

// The mali platform and Android's GPU counters survive the round trip the server and the CLI make.
TEST(ReportFromJsonTest, MaliReportKeepsItsPlatformAndGpuMemFields) {
  absl::StatusOr<Report> r = ReportFromJson(ReadTestData("captures/mali-rockchip/expected.json"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->platform, Platform::kMali);
  EXPECT_EQ(r->device.gpu_mem_global_kb, 2103537);
  EXPECT_EQ(r->processes.at(27447).gpu_mem_total_kb, 234324);
  EXPECT_FALSE(r->processes.at(10738).gpu_mem_total_kb.has_value());
  absl::StatusOr<Report> again = ReportFromJson(ReportToJson(*r));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->platform, Platform::kMali);
  EXPECT_EQ(again->device.gpu_mem_global_kb, 2103537);
  EXPECT_EQ(again->processes.at(27447).gpu_mem_total_kb, 234324);
}

TEST(ReportFromJsonTest, NotAReportIsInvalidArgument) {
  for (const char* text : {"", "not json", "[]", "{\"platform\":\"qcom\"}",
                           "{\"platform\":\"qcom\",\"device\":{},"
                           "\"processes\":{\"x\":{}}}",
                           "{\"platform\":\"amiga\",\"device\":{},\"processes\":{}}"}) {
    EXPECT_EQ(ReportFromJson(text).status().code(), absl::StatusCode::kInvalidArgument) << text;
  }
}

// A server (or a file) may send a valid report nested 100,000 levels deep: refused before any recursive
// walk of it (the CLI re-indents reports with dump()) could overflow the stack.
TEST(ReportFromJsonTest, DeeplyNestedReportIsInvalidArgument) {
  const std::string text = R"({"platform":"qcom","device":{},"processes":{"7":{"name":)" + std::string(100000, '[') +
                           std::string(100000, ']') + "}}}";
  absl::StatusOr<Report> r = ReportFromJson(text);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "not a memfleet report: nested more than 64 levels deep (at byte 117)");
}

// Regression (report_json_fuzzer): a boolean field holding another type threw nlohmann::json::type_error
// out of ReportFromJson, which ended the CLI. A field of the wrong type is now read as absent, like a
// non-integer figure, and the rest of the report is kept.
TEST(ReportFromJsonTest, WrongTypedBooleansAreReadAsAbsent) {
  absl::StatusOr<Report> r = ReportFromJson(R"({"platform":"qcom","device":{"ddr_kb":100,"ddr_estimated":1},)"
                                            R"("processes":{"7":{"name":"init","cached":"yes","pss_kb":12}},)"
                                            R"("dumpsys":{"identity_holds":"no","processes":{"7":[1,2]}}})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->device.ddr_estimated);
  EXPECT_EQ(r->device.ddr_kb, 100);
  ASSERT_EQ(r->processes.count(7), 1u);
  EXPECT_FALSE(r->processes.at(7).cached);
  EXPECT_EQ(r->processes.at(7).pss_kb, 12);
  EXPECT_FALSE(r->processes.at(7).gl_mtrack_kb.has_value());
}

// heaps, app_summary and dma_by_exporter_kb (docs/capture-format.md) come back as they were written; null
// stays null, and an App Summary missing a field is null rather than a silent 0.
TEST(ReportFromJsonTest, HeapsAppSummaryAndDmaByExporterRoundTrip) {
  Report r;
  ProcessReport with;
  with.pid = 7;
  with.heaps = Heaps{{"native", HeapFigures{10, 1, 2, 8}}, {"jit_app_code_cache", HeapFigures{3, 0, 0, 3}}};
  with.app_summary = AppSummary{1, 2, 3, 4, 5, 6, 7, 8, 9};
  with.dma_by_exporter_kb = std::map<std::string, int64_t>{{"qcom,system", 9248}, {"unknown", 0}};
  r.processes.emplace(7, with);
  ProcessReport without;
  without.pid = 8;
  r.processes.emplace(8, without);
  absl::StatusOr<Report> back = ReportFromJson(ReportToJson(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->processes.at(7).heaps, with.heaps);
  EXPECT_EQ(back->processes.at(7).app_summary, with.app_summary);
  EXPECT_EQ(back->processes.at(7).dma_by_exporter_kb, with.dma_by_exporter_kb);
  EXPECT_FALSE(back->processes.at(8).heaps.has_value());
  EXPECT_FALSE(back->processes.at(8).app_summary.has_value());
  EXPECT_FALSE(back->processes.at(8).dma_by_exporter_kb.has_value());

  absl::StatusOr<Report> partial = ReportFromJson(
      R"({"platform":"qcom","device":{},"processes":{"7":{"app_summary":{"java_heap_kb":1},"heaps":[1]}}})");
  ASSERT_TRUE(partial.ok()) << partial.status();
  EXPECT_FALSE(partial->processes.at(7).app_summary.has_value());
  EXPECT_FALSE(partial->processes.at(7).heaps.has_value());
}

// The compact report is written without a document (report/json_text_writer.h), in the text the JSON
// library dumps for it: its keys sorted (pids as text: "10" before "9"), the library's own dump of the
// parsed text being the same bytes; the pretty form is that dump indented; and it reads back.
std::string LibraryDump(const std::string& text, int indent) {
  return nlohmann::json::parse(text).dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

TEST(ReportToJsonTest, EveryFixtureReportIsWrittenAsTheJsonLibraryDumpsIt) {
  const std::vector<std::string> fixtures = {
      "captures/generic-noddr/expected.json", "captures/legacy-419/expected.json",
      "captures/mali-rockchip/expected.json", "captures/mtk-mt6989/expected.json",
      "captures/qcom-edge/expected.json",     "captures/qcom-sm8450/expected.json",
      "captures/xring-o1/expected.json",
  };
  for (const std::string& fixture : fixtures) {
    absl::StatusOr<Report> r = ReportFromJson(ReadTestData(fixture));
    ASSERT_TRUE(r.ok()) << fixture << ": " << r.status();
    const std::string compact = ReportToJson(*r, -1);
    EXPECT_EQ(compact, LibraryDump(compact, -1)) << fixture;
    EXPECT_EQ(ReportToJson(*r, 1), LibraryDump(compact, 1)) << fixture;
    absl::StatusOr<Report> back = ReportFromJson(compact);
    ASSERT_TRUE(back.ok()) << fixture << ": " << back.status();
    EXPECT_EQ(ReportToJson(*back, -1), compact) << fixture;
  }
}

TEST(ReportToJsonTest, PidsSortAsTextAndOddBytesAreEscapedAsTheLibraryDoes) {
  Report r;
  r.device_id = "lab \"7\"";
  r.warnings = {"a warning", "bytes \xff\x01 from a node"};
  r.sources["device.total_kb"] = "meminfo";
  r.dumpsys.device_text_kb = {{"Total RAM", 100}};
  r.dumpsys.difference_kb = {{"Total RAM", -4}};
  r.dumpsys.identity_holds = false;
  for (int pid : {9, 10, 100, 1}) {
    ProcessReport p;
    p.pid = pid;
    p.name = pid == 10 ? std::string("name\xc3(") : "p" + std::to_string(pid);
    p.oom_score_adj = -1000;
    p.pss_kb = pid * 4;
    if (pid == 9) {
      p.heaps = Heaps{{"native", HeapFigures{10, 1, 2, 8}}, {"dalvik", HeapFigures{3, 0, 0, 3}}};
      p.app_summary = AppSummary{1, 2, 3, 4, 5, 6, 7, 8, 9};
      p.dma_by_exporter_kb = std::map<std::string, int64_t>{{"system", 9248}, {"qcom,system", 4}};
    }
    r.processes.emplace(pid, p);
  }
  const std::string compact = ReportToJson(r, -1);
  EXPECT_EQ(compact, LibraryDump(compact, -1));
  EXPECT_LT(compact.find("\"1\":"), compact.find("\"10\":"));
  EXPECT_LT(compact.find("\"10\":"), compact.find("\"100\":"));
  EXPECT_LT(compact.find("\"100\":"), compact.find("\"9\":"));
  EXPECT_NE(compact.find(R"("device_id":"lab \"7\"")"), std::string::npos) << compact;
  EXPECT_NE(compact.find("\"name\xef\xbf\xbd(\""), std::string::npos) << "the invalid byte replaced by U+FFFD";
  EXPECT_NE(compact.find(R"("device_text":{"Total RAM":100})"), std::string::npos);
  EXPECT_NE(compact.find(R"("difference_kb":{"Total RAM":-4})"), std::string::npos);
  absl::StatusOr<Report> back = ReportFromJson(compact);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->processes.at(10).name, "name\xef\xbf\xbd(");
  EXPECT_EQ(back->processes.at(9).pss_kb, 36);
  EXPECT_EQ(back->processes.at(9).heaps, r.processes.at(9).heaps);
  EXPECT_EQ(back->processes.at(9).app_summary, r.processes.at(9).app_summary);
  EXPECT_EQ(ReportToJson(r, 1), LibraryDump(compact, 1));
  EXPECT_EQ(back->warnings.size(), 2u);
}

}  // namespace
}  // namespace memfleet::report
