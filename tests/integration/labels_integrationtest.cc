// Labels end to end (docs/labels.md), with the real binaries: memfleet-server on 127.0.0.1 over a SQLite
// file (with /metrics), memfleet-agent on copies of the sample capture trees (one started with
// --label rack=7), and the memfleet CLI as a lab types it: a sweep labelled run=1234 suite=camera, the
// tree changed, a sweep labelled run=1235, then the run's capture asked for by its label (label.K= and
// --label for the sweep's, agentlabel.K= and --agent-label for the agent's). Expected figures are the
// trees' expected.json values.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/support/http_get.h"
#include "tests/support/load_tree.h"
#include "tests/support/memfleet_cli.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"
#include "tests/support/wait_for.h"

namespace memfleet {
namespace labels_scenario {
namespace {

using nlohmann::json;
using testing::Bin;
using testing::ProcessRun;
using testing::Subprocess;

int64_t ExpectedTotalKb(const std::string& capture) {
  json expected = json::parse(testing::ReadFileForTest(testing::TestData("captures/" + capture + "/expected.json")));
  return expected["device"]["total_kb"].get<int64_t>();
}

class LabelsIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-labels-e2e-");
    ASSERT_FALSE(dir_.empty());
    server_ = std::make_unique<testing::ServerProcess>(dir_, std::vector<std::string>{"--http-listen", "127.0.0.1:0"});
    ASSERT_FALSE(server_->address().empty());
    cli_ = testing::MemfleetCli(dir_, {"--server", server_->address()});
    const std::string line =
        server_->process().WaitForLine("memfleet-server metrics on http", std::chrono::seconds(30));
    // "... metrics on http://127.0.0.1:PORT/metrics"
    const size_t port_at = line.rfind(':');
    ASSERT_NE(port_at, std::string::npos) << server_->Log();
    http_port_ = std::atoi(line.c_str() + port_at + 1);
    ASSERT_GT(http_port_, 0) << line;
  }
  void TearDown() override {
    agents_.clear();
    server_.reset();
    const std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  // A private copy of a sample tree, so the test can change it under a running agent.
  std::string CopyTree(const std::string& capture, const std::string& device_id) {
    const std::string root = dir_ + "/tree-" + device_id;
    const std::string cmd = "cp -r '" + testing::TestData("captures/" + capture + "/tree") + "' '" + root + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    return root;
  }
  // The tree of `device_id` becomes a copy of `capture`'s, in place (the agent keeps its root folder).
  void ReplaceTree(const std::string& device_id, const std::string& capture) {
    const std::string root = dir_ + "/tree-" + device_id;
    const std::string cmd = "find '" + root + "' -mindepth 1 -delete && cp -r '" +
                            testing::TestData("captures/" + capture + "/tree") + "/.' '" + root + "/'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  void StartAgent(const std::string& capture, const std::string& device_id, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {Bin("memfleet-agent"),
                                     "--server",
                                     server_->address(),
                                     "--root",
                                     CopyTree(capture, device_id),
                                     "--device-id",
                                     device_id,
                                     "--interval",
                                     "3600",
                                     "--spool",
                                     dir_ + "/spool-" + device_id,
                                     "--model",
                                     "SIM"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    agents_.push_back(std::make_unique<Subprocess>(argv, dir_ + "/agent-" + device_id + ".log"));
  }

  // Polls `memfleet devices` until `n` devices are online (their agents said Hello).
  bool WaitOnline(size_t n) {
    return testing::WaitFor(
        [&] {
          json devices = cli_.Json({"devices", "--json"});
          size_t online = 0;
          if (devices.is_array()) {
            for (const json& d : devices) online += d.value("online", false) ? 1 : 0;
          }
          return online >= n;
        },
        std::chrono::seconds(60), std::chrono::milliseconds(200));
  }

  // Polls `memfleet devices` until the one device is online with its agent's first capture stored.
  bool WaitForFirstCapture() {
    return testing::WaitFor(
        [&] {
          json devices = cli_.Json({"devices", "--json"});
          return devices.is_array() && devices.size() == 1 && devices[0].value("online", false) &&
                 devices[0].value("capture_count", 0) == 1;
        },
        std::chrono::seconds(60), std::chrono::milliseconds(200));
  }

  // The id `memfleet sweep` printed for a sweep of one device that stored its capture
  // ("sweep ID: 1 of 1 devices stored a capture; ..."); "" when it printed no such line.
  static std::string StoredSweepId(const std::string& output) {
    const size_t stored = output.find(": 1 of 1 devices stored a capture");
    const size_t id_at = stored == std::string::npos ? std::string::npos : output.rfind("sweep ", stored);
    return id_at == std::string::npos ? "" : output.substr(id_at + 6, stored - id_at - 6);
  }

  std::string dir_;
  int http_port_ = 0;
  std::unique_ptr<testing::ServerProcess> server_;
  std::vector<std::unique_ptr<Subprocess>> agents_;
  testing::MemfleetCli cli_;
};

TEST_F(LabelsIntegrationTest, ASweepsLabelsFindTheCapturesOfThatRun) {
  StartAgent("qcom-sm8450", "lab-a", {"--label", "rack=7"});
  StartAgent("mtk-mt6989", "lab-b");
  ASSERT_TRUE(WaitOnline(2)) << server_->Log();

  ProcessRun first = cli_.Run({"sweep", "--label", "run=1234", "--label", "suite=camera", "--deadline", "90"});
  ASSERT_EQ(first.exit_code, 0) << first.output << server_->Log();
  ReplaceTree("lab-a", "qcom-edge");
  ProcessRun second = cli_.Run({"sweep", "--label", "run=1235", "--deadline", "90"});
  ASSERT_EQ(second.exit_code, 0) << second.output << server_->Log();

  // The capture of run 1234 is lab-a's sm8450 capture, though its latest is the edge tree's.
  json run_1234 = cli_.Json({"report", "lab-a", "--label", "run=1234", "--json"});
  EXPECT_EQ(run_1234["device"]["total_kb"], ExpectedTotalKb("qcom-sm8450"));
  EXPECT_EQ(run_1234["labels"], (json{{"run", "1234"}, {"suite", "camera"}}));
  EXPECT_EQ(run_1234["agent_labels"], (json{{"rack", "7"}}));
  json run_1235 = cli_.Json({"report", "lab-a", "--label", "run=1235", "--json"});
  EXPECT_EQ(run_1235["device"]["total_kb"], ExpectedTotalKb("qcom-edge"));
  EXPECT_EQ(run_1235["labels"], (json{{"run", "1235"}}));
  EXPECT_EQ(run_1235["agent_labels"], (json{{"rack", "7"}}));
  json lab_b = cli_.Json({"report", "lab-b", "--label", "run=1234", "--label", "suite=camera", "--json"});
  EXPECT_EQ(lab_b["device"]["total_kb"], ExpectedTotalKb("mtk-mt6989"));
  EXPECT_EQ(lab_b["labels"], (json{{"run", "1234"}, {"suite", "camera"}}));
  EXPECT_FALSE(lab_b.contains("agent_labels")) << "its agent has no labels";

  // --where label.run=... in fleet: each device's capture of that run.
  json fleet_1234 = cli_.Json({"fleet", "--where", "label.run=1234", "--json"});
  json fleet_1235 = cli_.Json({"fleet", "--where", "label.run=1235", "--json"});
  std::map<std::string, int64_t> of_1234, of_1235;
  for (const json& row : fleet_1234["rows"]) of_1234[row["device_id"]] = row["value_kb"];
  for (const json& row : fleet_1235["rows"]) of_1235[row["device_id"]] = row["value_kb"];
  EXPECT_EQ(of_1234, (std::map<std::string, int64_t>{{"lab-a", ExpectedTotalKb("qcom-sm8450")},
                                                     {"lab-b", ExpectedTotalKb("mtk-mt6989")}}));
  EXPECT_EQ(of_1235, (std::map<std::string, int64_t>{{"lab-a", ExpectedTotalKb("qcom-edge")},
                                                     {"lab-b", ExpectedTotalKb("mtk-mt6989")}}));
  json fleet_rack = cli_.Json({"fleet", "--where", "agentlabel.rack=7", "--where", "label.run=1234", "--json"});
  ASSERT_EQ(fleet_rack["rows"].size(), 1u) << fleet_rack.dump();
  EXPECT_EQ(fleet_rack["rows"][0]["value_kb"], ExpectedTotalKb("qcom-sm8450"));

  // baseline check --where label.run=1234 checks the run's captures, not the latest. surfaceflinger's
  // graphics_dma_kb against its 180000 budget (tests/data/baselines/sample-lab.json): 182161 on the
  // sm8450 tree and 394754 on the mtk tree, both over; in run 1235 lab-a's edge tree has 82185, within.
  ASSERT_EQ(cli_.Run({"baseline", "import", testing::TestData("baselines/sample-lab.json")}).exit_code, 0);
  for (const auto& [run, over] : {std::pair<std::string, int>{"1234", 2}, {"1235", 1}}) {
    ProcessRun check = cli_.Run({"baseline", "check", "--where", "label.run=" + run, "--json"});
    EXPECT_EQ(check.exit_code, 3) << check.output;
    json result = json::parse(check.output.substr(check.output.find('{')), nullptr, false);
    EXPECT_EQ(result["devices"], 2) << check.output;
    const json* surfaceflinger = nullptr;
    for (const json& row : result["rows"]) {
      if (row["process"] == "/system/bin/surfaceflinger" && row["budget"] == "graphics_dma_kb") surfaceflinger = &row;
    }
    ASSERT_NE(surfaceflinger, nullptr) << check.output;
    EXPECT_EQ((*surfaceflinger)["devices_over"], over) << run;
  }

  // The agent's own label is on its captures only, and is the agent's, not a run's.
  json racked = cli_.Json({"devices", "--where", "agentlabel.rack=7", "--json"});
  ASSERT_EQ(racked.size(), 1u) << racked.dump();
  EXPECT_EQ(racked[0]["device_id"], "lab-a");
  EXPECT_TRUE(cli_.Json({"devices", "--where", "label.rack=7", "--json"}).empty()) << "no sweep gave rack=7";
  json lab_a_rack = cli_.Json({"report", "lab-a", "--agent-label", "rack=7", "--json"});
  EXPECT_EQ(lab_a_rack["labels"], (json{{"run", "1235"}}));

  // The table names the labels of the capture it shows.
  ProcessRun table = cli_.Run({"report", "lab-a"});
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("labels: run=1235\nagent labels: rack=7"), std::string::npos) << table.output;

  // A label matching nothing is "not found" (exit 4); a bad one a usage error (exit 2).
  ProcessRun none = cli_.Run({"report", "lab-b", "--agent-label", "rack=7"});
  EXPECT_EQ(none.exit_code, 4) << none.output;
  EXPECT_NE(none.output.find("carrying agent label rack=7"), std::string::npos) << none.output;
  ProcessRun no_run = cli_.Run({"fleet", "--where", "label.run=9999"});
  EXPECT_EQ(no_run.exit_code, 4) << no_run.output;
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"sweep", "--label", "Run=1"},
                                              {"sweep", "--label", "run=1", "--label", "run=2"},
                                              {"report", "lab-a", "--label", "run"},
                                              {"report", "lab-a", "--label", "run=a\tb"},
                                              {"fleet", "--where", "label.run="},
                                              {"devices", "--where", "label.bad key=1"},
                                              {"devices", "--where", "agentlabel.Rack=7"},
                                              {"report", "lab-a", "--agent-label", "rack"}}) {
    ProcessRun run = cli_.Run(bad);
    EXPECT_EQ(run.exit_code, 2) << bad[0] << " " << bad[1] << " " << bad[2] << ": " << run.output;
  }

  // /metrics never carries labels: no series has a label named like one of them or valued like one of
  // them, though every stored capture has some (a process may be named "...camera...": only whole label
  // values count).
  testing::HttpReply scrape = testing::HttpGet("127.0.0.1", http_port_, "/metrics");
  ASSERT_EQ(scrape.status, 200) << scrape.error;
  std::vector<testing::PromSample> samples = testing::ParsePrometheusText(scrape.body);
  size_t of_lab_a = 0;
  for (const testing::PromSample& sample : samples) {
    for (const auto& [name, value] : sample.labels) {
      EXPECT_TRUE(name != "rack" && name != "run" && name != "suite" && name.find("label") == std::string::npos)
          << sample.name << " has label " << name;
      EXPECT_TRUE(value != "7" && value != "1234" && value != "1235" && value != "camera")
          << sample.name << " has " << name << "=\"" << value << "\"";
      if (name == "device_id" && value == "lab-a") ++of_lab_a;
    }
  }
  EXPECT_GT(of_lab_a, 0u) << scrape.body;  // the labelled device is there, as a device
  for (const char* text : {"rack=", "suite=", "run="}) {
    EXPECT_EQ(scrape.body.find(text), std::string::npos) << text;
  }
}

// `memfleet trend` marks the captures as the dashboard's device page does (report/capture_marks.h): an
// agent started with --label rack=7 stores a periodic capture, then a sweep labelled run=1234 stores
// another; the device trend and the process trend show the sweep and its labels on the sweep's point
// only, the agent's label on both, in the table, the JSON and the CSV.
TEST_F(LabelsIntegrationTest, TrendMarksTheSweepsPointWithItsSweepAndLabels) {
  StartAgent("qcom-sm8450", "lab-a", {"--label", "rack=7"});
  ASSERT_TRUE(WaitForFirstCapture()) << server_->Log();
  ProcessRun sweep = cli_.Run({"sweep", "--label", "run=1234", "--deadline", "90"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.output << server_->Log();
  const std::string sweep_id = StoredSweepId(sweep.output);
  ASSERT_FALSE(sweep_id.empty()) << sweep.output;

  const int64_t total = ExpectedTotalKb("qcom-sm8450");
  json device = cli_.Json({"trend", "lab-a", "--json"});
  ASSERT_EQ(device["points"].size(), 2u) << device.dump(1);
  const json& periodic = device["points"][0];
  const json& swept = device["points"][1];
  EXPECT_EQ(periodic["value_kb"], total);
  EXPECT_TRUE(periodic["sweep_id"].is_null()) << periodic.dump();
  EXPECT_EQ(periodic["labels"], json::object());
  EXPECT_EQ(periodic["agent_labels"], (json{{"rack", "7"}}));
  EXPECT_EQ(swept["value_kb"], total);
  EXPECT_EQ(swept["sweep_id"], sweep_id);
  EXPECT_EQ(swept["labels"], (json{{"run", "1234"}}));
  EXPECT_EQ(swept["agent_labels"], (json{{"rack", "7"}}));

  ProcessRun table = cli_.Run({"trend", "lab-a"});
  ASSERT_EQ(table.exit_code, 0) << table.output;
  const auto line_of = [](const std::string& text, const std::string& time) {
    const size_t at = text.find(time);
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  const std::string swept_line = line_of(table.output, swept["captured_at"].get<std::string>());
  const std::string periodic_line = line_of(table.output, periodic["captured_at"].get<std::string>());
  EXPECT_NE(swept_line.find("sweep " + sweep_id + " · labels: run=1234 · agent labels: rack=7"), std::string::npos)
      << table.output;
  EXPECT_NE(periodic_line.find("agent labels: rack=7"), std::string::npos) << table.output;
  EXPECT_EQ(periodic_line.find("sweep"), std::string::npos) << table.output;
  EXPECT_EQ(periodic_line.find("run=1234"), std::string::npos) << table.output;

  // The process trend: surfaceflinger's points carry their capture's marks as the device's do.
  json process = cli_.Json({"trend", "lab-a", "--process", "/system/bin/surfaceflinger", "--json"});
  ASSERT_FALSE(process["points"].empty()) << process.dump(1);
  size_t swept_points = 0;
  for (const json& p : process["points"]) {
    const bool of_sweep = p["capture_id"] == swept["capture_id"];
    swept_points += of_sweep ? 1 : 0;
    EXPECT_EQ(p["sweep_id"], of_sweep ? json(sweep_id) : json(nullptr)) << p.dump();
    EXPECT_EQ(p["labels"], (of_sweep ? json{{"run", "1234"}} : json::object())) << p.dump();
    EXPECT_EQ(p["agent_labels"], (json{{"rack", "7"}})) << p.dump();
  }
  EXPECT_GE(swept_points, 1u) << process.dump(1);
  ProcessRun csv = cli_.Run({"trend", "lab-a", "--process", "/system/bin/surfaceflinger", "--csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_NE(csv.output.find("captured_at,capture_id,pid,total_kb,sweep_id,labels,agent_labels\r\n"), std::string::npos)
      << csv.output;
  EXPECT_NE(csv.output.find("," + sweep_id + ",run=1234,rack=7\r\n"), std::string::npos) << csv.output;
}

// A label value with a space, as a lab types it (`--label "suite=camera smoke"`): `memfleet report` heads
// the sweep's capture with its sweep and the label quoted (`suite="camera smoke"`), its --json names the
// sweep, and the term as printed, pasted back into --label or --where, selects that capture again. The
// agent's own first capture answered no sweep and says so.
TEST_F(LabelsIntegrationTest, ReportNamesTheSweepAndALabelWithASpaceReadsBackAsPrinted) {
  StartAgent("qcom-sm8450", "lab-a");
  ASSERT_TRUE(WaitForFirstCapture()) << server_->Log();
  json periodic = cli_.Json({"report", "lab-a", "--json"});
  ASSERT_TRUE(periodic.is_object()) << periodic.dump();
  EXPECT_TRUE(periodic["sweep_id"].is_null()) << "the agent's first capture answered no sweep";

  ProcessRun sweep = cli_.Run({"sweep", "--label", "suite=camera smoke", "--label", "run=77", "--deadline", "90"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.output << server_->Log();
  const std::string sweep_id = StoredSweepId(sweep.output);
  ASSERT_FALSE(sweep_id.empty()) << sweep.output;

  json swept = cli_.Json({"report", "lab-a", "--json"});
  EXPECT_EQ(swept["sweep_id"], sweep_id) << swept.dump();
  EXPECT_EQ(swept["labels"], (json{{"run", "77"}, {"suite", "camera smoke"}}));
  EXPECT_EQ(swept["device"]["total_kb"], ExpectedTotalKb("qcom-sm8450"));
  EXPECT_NE(swept["capture_id"], periodic["capture_id"]);

  ProcessRun table = cli_.Run({"report", "lab-a"});
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("\nsweep " + sweep_id + "\nlabels: run=77 suite=\"camera smoke\"\n"), std::string::npos)
      << table.output;
  ProcessRun periodic_table = cli_.Run({"report", "lab-a", "--capture", periodic["capture_id"].get<std::string>()});
  ASSERT_EQ(periodic_table.exit_code, 0) << periodic_table.output;
  EXPECT_EQ(periodic_table.output.find("\nsweep "), std::string::npos) << periodic_table.output;
  EXPECT_EQ(periodic_table.output.find("labels:"), std::string::npos) << periodic_table.output;

  // The term as the table printed it (the last of its line: terms go in key order).
  const size_t term_at = table.output.find("suite=\"");
  ASSERT_NE(term_at, std::string::npos) << table.output;
  const std::string printed = table.output.substr(term_at, table.output.find('\n', term_at) - term_at);
  ASSERT_EQ(printed, "suite=\"camera smoke\"");
  json by_label = cli_.Json({"report", "lab-a", "--label", printed, "--json"});
  EXPECT_EQ(by_label["capture_id"], swept["capture_id"]) << by_label.dump();
  json fleet = cli_.Json({"fleet", "--where", "label." + printed, "--json"});
  ASSERT_EQ(fleet["rows"].size(), 1u) << fleet.dump();
  EXPECT_EQ(fleet["rows"][0]["device_id"], "lab-a");
  EXPECT_EQ(fleet["rows"][0]["value_kb"], ExpectedTotalKb("qcom-sm8450"));
  // Typed bare, the value with its space is the same label.
  json bare = cli_.Json({"report", "lab-a", "--label", "suite=camera smoke", "--json"});
  EXPECT_EQ(bare["capture_id"], swept["capture_id"]) << bare.dump();

  // `memfleet trend` marks the point the same way.
  ProcessRun trend = cli_.Run({"trend", "lab-a"});
  ASSERT_EQ(trend.exit_code, 0) << trend.output;
  EXPECT_NE(trend.output.find("sweep " + sweep_id + " · labels: run=77 suite=\"camera smoke\""), std::string::npos)
      << trend.output;
}

TEST_F(LabelsIntegrationTest, AnAgentWithABadLabelDoesNotStart) {
  for (const char* label : {"bad key=1", "rack", "rack=", "Rack=7"}) {
    Subprocess agent({Bin("memfleet-agent"), "--server", server_->address(), "--root",
                      testing::TestData("captures/qcom-sm8450/tree"), "--device-id", "lab-x", "--spool",
                      dir_ + "/spool-x", "--label", label},
                     dir_ + "/agent-bad.log");
    EXPECT_EQ(agent.WaitExit(std::chrono::seconds(30)), 2) << label << ": " << agent.Log();
    EXPECT_NE(agent.Log().find("--label"), std::string::npos) << agent.Log();
  }
}

}  // namespace
}  // namespace labels_scenario
}  // namespace memfleet
