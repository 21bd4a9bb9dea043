// `memfleet trend` marks a point whose capture answered a sweep or carries labels (RenderTrend,
// cli/commands/trend_command.h) as the dashboard's list of captures marks it (report/capture_marks.h):
// the table in a MARKS column (once per capture, only when some capture has a mark), JSON and CSV in
// fields named like the query API's (sweep_id, labels, agent_labels). A point whose stored tier is not
// that of the points before it (a phone rooted later) is marked first, in the table and in JSON
// (tier_change), since the figures before and after do not compare (docs/accounting.md section 9).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/commands/trend_command.h"
#include "nlohmann/json.hpp"

namespace memfleet::cli {
namespace {

using nlohmann::json;

void AddLabel(google::protobuf::RepeatedPtrField<v1::Label>* labels, const std::string& key, const std::string& value) {
  v1::Label* label = labels->Add();
  label->set_key(key);
  label->set_value(value);
}

v1::HistoryPoint* AddPoint(v1::ProcessHistoryResponse& history, const std::string& at, const std::string& capture_id,
                           int pid, int64_t kb) {
  v1::HistoryPoint* p = history.add_points();
  p->set_captured_at(at);
  p->set_capture_id(capture_id);
  p->set_pid(pid);
  p->set_value_kb(kb);
  p->set_value_known(true);
  return p;
}

// A periodic capture with its agent's label, a sweep's (labels run=1234, suite=camera, and the agent's),
// and a periodic one without labels — as a device's history of an agent started with --label rack=7,
// then without it.
v1::ProcessHistoryResponse DeviceHistory() {
  v1::ProcessHistoryResponse history;
  AddLabel(AddPoint(history, "2026-12-01T09:00:00.000Z", "c1", 0, 3000000)->mutable_agent_labels(), "rack", "7");
  v1::HistoryPoint* swept = AddPoint(history, "2026-12-01T10:00:00.000Z", "c2", 0, 3100000);
  swept->set_sweep_id("sw-42");
  AddLabel(swept->mutable_labels(), "run", "1234");
  AddLabel(swept->mutable_labels(), "suite", "camera");
  AddLabel(swept->mutable_agent_labels(), "rack", "7");
  AddPoint(history, "2026-12-01T11:00:00.000Z", "c3", 0, 3200000);
  return history;
}

TrendArgs DeviceArgs() {
  TrendArgs args;
  args.device_id = "lab-a";
  return args;
}

// The line of the table that shows `time`.
std::string LineOf(const std::string& text, const std::string& time) {
  const size_t at = text.find(time);
  if (at == std::string::npos) return "";
  return text.substr(at, text.find('\n', at) - at);
}

TEST(TrendMarksTest, TheTableMarksTheSweepsPointWithItsSweepAndLabels) {
  const std::string text = RenderTrend(DeviceArgs(), DeviceHistory(), OutputFormat::kTable);
  EXPECT_NE(text.find("MARKS"), std::string::npos) << text;
  const std::string swept = LineOf(text, "2026-12-01T10:00:00.000Z");
  EXPECT_NE(swept.find("3,100,000"), std::string::npos) << text;
  EXPECT_NE(swept.find("sweep sw-42 · labels: run=1234 suite=camera · agent labels: rack=7"), std::string::npos)
      << text;
  const std::string periodic = LineOf(text, "2026-12-01T09:00:00.000Z");
  EXPECT_NE(periodic.find("agent labels: rack=7"), std::string::npos) << text;
  EXPECT_EQ(periodic.find("sweep"), std::string::npos) << text;
  EXPECT_EQ(periodic.find("labels: run"), std::string::npos) << text;
  const std::string plain = LineOf(text, "2026-12-01T11:00:00.000Z");
  EXPECT_EQ(plain.find("labels"), std::string::npos) << text;
  EXPECT_EQ(plain.back(), '0') << "nothing after the figure: " << plain;
}

TEST(TrendMarksTest, AHistoryWithoutMarksHasNoMarksColumn) {
  v1::ProcessHistoryResponse history;
  AddPoint(history, "2026-12-01T09:00:00.000Z", "c1", 0, 3000000);
  const std::string text = RenderTrend(DeviceArgs(), history, OutputFormat::kTable);
  EXPECT_EQ(text.find("MARKS"), std::string::npos) << text;
}

TEST(TrendMarksTest, JsonPointsCarrySweepIdAndLabelsByTheirSource) {
  const json out = json::parse(RenderTrend(DeviceArgs(), DeviceHistory(), OutputFormat::kJson));
  ASSERT_EQ(out["points"].size(), 3u) << out.dump(1);
  const json& periodic = out["points"][0];
  const json& swept = out["points"][1];
  const json& plain = out["points"][2];
  EXPECT_TRUE(periodic["sweep_id"].is_null()) << "a periodic capture has no sweep: null, never \"\"";
  EXPECT_EQ(periodic["labels"], json::object());
  EXPECT_EQ(periodic["agent_labels"], (json{{"rack", "7"}}));
  EXPECT_EQ(swept["sweep_id"], "sw-42");
  EXPECT_EQ(swept["labels"], (json{{"run", "1234"}, {"suite", "camera"}}));
  EXPECT_EQ(swept["agent_labels"], (json{{"rack", "7"}}));
  EXPECT_TRUE(plain["sweep_id"].is_null());
  EXPECT_EQ(plain["labels"], json::object());
  EXPECT_EQ(plain["agent_labels"], json::object());
}

TEST(TrendMarksTest, CsvRowsCarrySweepIdAndLabelTerms) {
  const std::string csv = RenderTrend(DeviceArgs(), DeviceHistory(), OutputFormat::kCsv);
  EXPECT_EQ(csv,
            "captured_at,capture_id,pid,total_kb,sweep_id,labels,agent_labels\r\n"
            "2026-12-01T09:00:00.000Z,c1,0,3000000,,,rack=7\r\n"
            "2026-12-01T10:00:00.000Z,c2,0,3100000,sw-42,run=1234 suite=camera,rack=7\r\n"
            "2026-12-01T11:00:00.000Z,c3,0,3200000,,,\r\n");
}

// A process trend: a capture with two pids of the name is marked once, on its first row.
TEST(TrendMarksTest, AProcessTrendMarksEachCaptureOnce) {
  v1::ProcessHistoryResponse history;
  for (int pid : {100, 200}) {
    v1::HistoryPoint* p = AddPoint(history, "2026-12-01T10:00:00.000Z", "c2", pid, 50000 + pid);
    p->set_sweep_id("sw-42");
    AddLabel(p->mutable_labels(), "run", "1234");
  }
  TrendArgs args = DeviceArgs();
  args.process_name = "surfaceflinger";
  const std::string text = RenderTrend(args, history, OutputFormat::kTable);
  size_t marks = 0;
  for (size_t at = text.find("sweep sw-42 · labels: run=1234"); at != std::string::npos;
       at = text.find("sweep sw-42", at + 1)) {
    ++marks;
  }
  EXPECT_EQ(marks, 1u) << text;
  EXPECT_NE(LineOf(text, "2026-12-01T10:00:00.000Z").find("sweep sw-42"), std::string::npos) << text;
}

// A shell phone rooted later, then a process of it: two captures of the dumpsys tier, one stored before
// tiers, then two of the kernel tier, the first answering a sweep. The tiers and totals are those of the
// fixtures' expected.json (captures-shell/shield-shell: dumpsys, 966,011 kB; captures/qcom-sm8450, written
// before tiers: kernel, 3,567,646 kB).
v1::ProcessHistoryResponse RootedLater() {
  v1::ProcessHistoryResponse history;
  AddPoint(history, "2026-12-01T09:00:00.000Z", "c1", 0, 966011)->set_tier("dumpsys");
  AddPoint(history, "2026-12-01T10:00:00.000Z", "c2", 0, 966011)->set_tier("dumpsys");
  AddPoint(history, "2026-12-01T10:30:00.000Z", "c3", 0, 966011);  // stored before tiers: unknown
  v1::HistoryPoint* rooted = AddPoint(history, "2026-12-01T11:00:00.000Z", "c4", 0, 3567646);
  rooted->set_tier("kernel");
  rooted->set_sweep_id("sw-9");
  AddPoint(history, "2026-12-01T12:00:00.000Z", "c5", 0, 3567646)->set_tier("kernel");
  return history;
}

constexpr char kRootedMark[] = "tier dumpsys -> kernel: figures before and after do not compare";

TEST(TrendMarksTest, TheTableMarksThePointWhereTheTierChanges) {
  const std::string text = RenderTrend(DeviceArgs(), RootedLater(), OutputFormat::kTable);
  EXPECT_NE(text.find("MARKS"), std::string::npos) << text;
  EXPECT_NE(LineOf(text, "2026-12-01T11:00:00.000Z").find(std::string(kRootedMark) + " · sweep sw-9"),
            std::string::npos)
      << text;
  for (const char* at : {"2026-12-01T09:00:00.000Z", "2026-12-01T10:00:00.000Z", "2026-12-01T10:30:00.000Z",
                         "2026-12-01T12:00:00.000Z"}) {
    EXPECT_EQ(LineOf(text, at).find("tier"), std::string::npos) << at << " marks no change: " << text;
  }
}

TEST(TrendMarksTest, JsonPointsCarryTheirTierAndTheChange) {
  const json out = json::parse(RenderTrend(DeviceArgs(), RootedLater(), OutputFormat::kJson));
  ASSERT_EQ(out["points"].size(), 5u) << out.dump(1);
  EXPECT_EQ(out["points"][0]["tier"], "dumpsys");
  EXPECT_TRUE(out["points"][2]["tier"].is_null()) << "unknown: null, never \"\" nor a guess";
  EXPECT_EQ(out["points"][3]["tier"], "kernel");
  for (size_t i : {0u, 1u, 2u, 4u}) EXPECT_TRUE(out["points"][i]["tier_change"].is_null()) << i << out.dump(1);
  EXPECT_EQ(out["points"][3]["tier_change"], kRootedMark);
}

// A process trend: a capture of two pids marks the change once, and the reverse change (a phone whose
// root went away) is marked as well.
TEST(TrendMarksTest, AProcessTrendMarksTheChangeOncePerCapture) {
  v1::ProcessHistoryResponse history;
  AddPoint(history, "2026-12-01T09:00:00.000Z", "c1", 100, 161015)->set_tier("kernel");
  for (int pid : {100, 200}) AddPoint(history, "2026-12-01T10:00:00.000Z", "c2", pid, 161015)->set_tier("dumpsys");
  TrendArgs args = DeviceArgs();
  args.process_name = "surfaceflinger";
  const std::string text = RenderTrend(args, history, OutputFormat::kTable);
  const std::string mark = "tier kernel -> dumpsys: figures before and after do not compare";
  size_t marks = 0;
  for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at + 1)) ++marks;
  EXPECT_EQ(marks, 1u) << text;
  const json out = json::parse(RenderTrend(args, history, OutputFormat::kJson));
  EXPECT_EQ(out["points"][1]["tier_change"], mark);
  EXPECT_TRUE(out["points"][2]["tier_change"].is_null()) << "the same capture's second pid";
}

}  // namespace
}  // namespace memfleet::cli
