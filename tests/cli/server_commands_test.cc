// The server commands against a fake QueryService on 127.0.0.1 (the real server is tested end to end in
// tests/integration): what each prints from a known answer, exit codes for "not found", and that flags
// such as --at / --since reach the server normalised. Reports are the fixtures' expected.json files, so
// the figures checked below are the ones those files document.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands/devices_command.h"
#include "cli/commands/fleet_command.h"
#include "cli/commands/process_command.h"
#include "cli/commands/report_command.h"
#include "cli/commands/sweep_command.h"
#include "cli/commands/trend_command.h"
#include "cli/report_table.h"
#include "grpcpp/grpcpp.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/support/load_tree.h"

namespace memfleet::cli {
namespace {

using nlohmann::json;

// 2026-12-02T16:15:00Z (see time_spec_test.cc for the arithmetic).
const std::chrono::system_clock::time_point kNow = std::chrono::system_clock::from_time_t(1796228100);

class FakeQueryService final : public v1::QueryService::Service {
 public:
  FakeQueryService() {
    qcom_edge_ = testing::ReadFileForTest(testing::TestData("captures/qcom-edge/expected.json"));
    mtk_ = testing::ReadFileForTest(testing::TestData("captures/mtk-mt6989/expected.json"));
    shield_shell_ = testing::ReadFileForTest(testing::TestData("captures-shell/shield-shell/expected.json"));
  }

  grpc::Status ListDevices(grpc::ServerContext*, const v1::ListDevicesRequest* request,
                           v1::ListDevicesResponse* response) override {
    Record(request->selector());
    const std::string where = request->selector().where().empty() ? "" : request->selector().where(0);
    if (where == "model=none" || (where.empty() && no_devices)) return grpc::Status::OK;
    if (where == "model=hostile") {
      // What a hostile agent can put in its Hello: a formula, terminal escapes, a bidi override.
      v1::DeviceSummary* d = response->add_devices();
      d->set_device_id("evil-1");
      d->set_model("=cmd|' /C calc'!A0");
      d->set_platform("\x1b[31mqcom");
      d->set_build_fingerprint("\x1b]0;owned\x07");
      d->set_kernel(
          "\xe2\x80\xae"
          "6.1");
      d->set_online(true);
      d->set_last_total_kb(-1);
      return grpc::Status::OK;
    }
    v1::DeviceSummary* a = response->add_devices();
    a->set_device_id("sim-qcom-505");
    a->set_model("Edge, \"Q\"");  // a comma and quotes: CSV must quote it
    a->set_platform("qcom");
    a->set_online(true);
    a->set_last_capture_at("2026-11-30T08:00:00Z");
    a->set_last_total_kb(3014795);
    a->set_capture_count(3);
    a->set_clock_skew_s(-3);
    a->set_build_fingerprint("google/panther/panther:14/UQ1A.240205.004/11269751:user/release-keys");
    a->set_manufacturer("Google");
    a->set_build_type("user");
    a->set_abi("arm64-v8a");
    a->set_android_sdk("34");
    a->set_access("shell");
    a->set_selinux("enforcing");
    v1::DeviceSummary* b = response->add_devices();
    b->set_device_id("sim-mtk-1");
    b->set_model("MT6989 board");
    b->set_platform("mtk");
    b->set_online(false);
    b->set_last_total_kb(-1);                        // nothing stored
    b->set_clock_skew_s(253402300800 - 1796342400);  // a clock at year 10000
    b->set_refused_streams(24);
    b->set_refused_stream_facts("model \"Pixel 8\", soc \"gs301\"");
    b->set_future_captures_refused(2);
    return grpc::Status::OK;
  }

  grpc::Status GetReport(grpc::ServerContext*, const v1::GetReportRequest* request,
                         v1::GetReportResponse* response) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_report_request_ = *request;
    }
    if (request->device_id() == "sim-qcom-505") {
      response->set_report_json(qcom_edge_);
    } else if (request->device_id() == "sim-mtk-1") {
      response->set_report_json(mtk_);
    } else if (request->device_id() == "sim-shield") {
      // A report of the dumpsys tier, stored with its tier as the server stores it: the report's own.
      response->set_report_json(shield_shell_);
      response->set_tier(json::parse(shield_shell_)["device"]["tier"].get<std::string>());
    } else if (request->device_id() == "sim-empty") {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "nothing stored for device \"sim-empty\" yet");
    } else {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown device \"" + request->device_id() + "\"");
    }
    response->set_device_id(request->device_id());
    response->set_capture_id(request->device_id() + "-20261130T080000Z-000003");
    response->set_captured_at("2026-11-30T08:00:00Z");
    return grpc::Status::OK;
  }

  grpc::Status GetProcessHistory(grpc::ServerContext*, const v1::ProcessHistoryRequest* request,
                                 v1::ProcessHistoryResponse* response) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_history_request_ = *request;
    }
    if (request->process_name() != "/system/bin/surfaceflinger") return grpc::Status::OK;  // no points
    struct P {
      const char* at;
      int pid;
      int64_t kb;
      bool known;
    };
    // Sent out of order on purpose: the CLI shows them in time order.
    for (const P& p : {P{"2026-12-01T10:00:00Z", 30830, 166989, true}, P{"2026-11-30T08:00:00Z", 30830, 150000, true},
                       P{"2026-12-02T09:00:00Z", 31002, 0, false}, P{"2026-12-02T12:00:00Z", 31002, 180000, true}}) {
      v1::HistoryPoint* h = response->add_points();
      h->set_captured_at(p.at);
      h->set_capture_id(std::string("cap-") + p.at);
      h->set_pid(p.pid);
      h->set_value_kb(p.kb);
      h->set_value_known(p.known);
    }
    return grpc::Status::OK;
  }

  grpc::Status GetFleet(grpc::ServerContext*, const v1::FleetRequest* request, v1::FleetResponse* response) override {
    Record(request->selector());
    if (request->process_name() == "nothing") return grpc::Status::OK;
    if (request->metric() == "device.bogus_kb") {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "unknown device figure \"bogus_kb\"");
    }
    v1::FleetGroup* g = response->add_groups();
    g->set_key("qcom");
    g->set_devices(2);
    g->set_min_kb(3014795);
    g->set_p50_kb(3014795);
    g->set_p90_kb(3567646);
    g->set_max_kb(3567646);
    g->set_unknown(1);                           // a third qcom device whose total is null
    (*g->mutable_tier_devices())["kernel"] = 2;  // the two known, of rooted phones
    v1::FleetGroup* none_known = response->add_groups();
    none_known->set_key("mtk");
    none_known->set_unknown(2);
    v1::FleetRow* r = response->add_rows();
    r->set_device_id("sim-qcom-8450");
    r->set_value_kb(3567646);
    r->set_value_known(true);
    return grpc::Status::OK;
  }

  grpc::Status StartSweep(grpc::ServerContext*, const v1::SweepRequest* request,
                          grpc::ServerWriter<v1::SweepProgress>* writer) override {
    Record(request->selector());
    if (!request->selector().where().empty() && request->selector().where(0) == "model=none") {
      v1::SweepProgress done;
      done.set_sweep_id("sweep-0");
      done.set_finished(true);
      writer->Write(done);
      return grpc::Status::OK;
    }
    auto send = [&](const char* device, v1::SweepProgress::State state, const char* capture, const char* msg) {
      v1::SweepProgress p;
      p.set_sweep_id("sweep-7");
      p.set_device_id(device);
      p.set_state(state);
      p.set_capture_id(capture);
      p.set_message(msg);
      p.set_devices_total(3);
      writer->Write(p);
    };
    send("sim-qcom-505", v1::SweepProgress::SENT, "", "");
    send("sim-mtk-1", v1::SweepProgress::SENT, "", "");
    send("sim-gone", v1::SweepProgress::OFFLINE, "", "not connected");
    send("sim-qcom-505", v1::SweepProgress::STORED, "sim-qcom-505-20261130T080000Z-000003", "");
    send("sim-mtk-1", v1::SweepProgress::STORED, "sim-mtk-1-20261130T080000Z-000003", "");
    v1::SweepProgress done;
    done.set_sweep_id("sweep-7");
    done.set_devices_total(3);
    done.set_devices_done(3);
    done.set_finished(true);
    writer->Write(done);
    return grpc::Status::OK;
  }

  std::atomic<bool> no_devices{false};  // the server knows no device at all

  v1::GetReportRequest last_report_request() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_report_request_;
  }
  v1::ProcessHistoryRequest last_history_request() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_history_request_;
  }
  v1::DeviceSelector last_selector() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_selector_;
  }

 private:
  void Record(const v1::DeviceSelector& s) {
    std::lock_guard<std::mutex> lock(mu_);
    last_selector_ = s;
  }

  std::string qcom_edge_, mtk_, shield_shell_;
  std::mutex mu_;
  v1::GetReportRequest last_report_request_;
  v1::ProcessHistoryRequest last_history_request_;
  v1::DeviceSelector last_selector_;
};

class ServerCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port, 0);
    common_.server = "127.0.0.1:" + std::to_string(port);
    common_.env_server = "";
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  FakeQueryService service_;
  std::unique_ptr<grpc::Server> server_;
  // `memfleet devices` with no --where: the table, --csv or --json.
  std::string Devices(bool csv, bool as_json) {
    DevicesArgs args;
    args.common = common_;
    args.common.csv = csv;
    args.common.json = as_json;
    std::ostringstream out;
    EXPECT_EQ(RunDevices(args, out, err_), kExitOk) << err_.str();
    return out.str();
  }

  ServerArgs common_;
  std::ostringstream out_, err_;
};

// `devices --retired`: the state says since when, the count says where their history is; --json and
// --csv carry retired_at (then its tier and its agent's, unknown here).
TEST(RenderDevicesTest, RetiredDevicesSayWhenTheyWereRetired) {
  v1::ListDevicesResponse response;
  v1::DeviceSummary* d = response.add_devices();
  d->set_device_id("lab-a-07");
  d->set_retired_at("2026-12-01T09:00:00.000Z");
  d->set_last_total_kb(-1);
  const std::string table = RenderDevices(response, OutputFormat::kTable, false, true);
  EXPECT_NE(table.find("retired 2026-12-01T09:00:00.000Z"), std::string::npos) << table;
  EXPECT_NE(table.find("1 retired devices"), std::string::npos) << table;
  EXPECT_EQ(table.find("online"), std::string::npos) << table;
  EXPECT_EQ(json::parse(RenderDevices(response, OutputFormat::kJson, false, true))[0]["retired_at"],
            "2026-12-01T09:00:00.000Z");
  EXPECT_NE(RenderDevices(response, OutputFormat::kCsv, false, true).find(",2026-12-01T09:00:00.000Z,,\r\n"),
            std::string::npos);
  EXPECT_EQ(RenderDevices(v1::ListDevicesResponse(), OutputFormat::kTable, false, true), "no retired devices\n");
  // Active devices have no retirement: null in JSON.
  d->clear_retired_at();
  EXPECT_TRUE(json::parse(RenderDevices(response, OutputFormat::kJson, false))[0]["retired_at"].is_null());
}

TEST_F(ServerCommandsTest, DevicesTable) {
  DevicesArgs args;
  args.common = common_;
  ASSERT_EQ(RunDevices(args, out_, err_), kExitOk) << err_.str();
  std::string t = out_.str();
  EXPECT_NE(t.find("sim-qcom-505"), std::string::npos);
  EXPECT_NE(t.find("online"), std::string::npos);
  EXPECT_NE(t.find("offline"), std::string::npos);
  EXPECT_NE(t.find("3,014,795"), std::string::npos);
  EXPECT_NE(t.find("2 devices, 1 online"), std::string::npos) << t;
  // sim-mtk-1 has stored nothing: its last capture is "never" (as the dashboard's fleet page writes it),
  // its total the "-" of no value. The total's column is named as `sweep`'s, beside the capture it is of.
  EXPECT_TRUE(std::regex_search(t, std::regex("\nsim-mtk-1 .* never +\\+2912106 days +- +0\n"))) << t;
  EXPECT_TRUE(std::regex_search(t, std::regex("^DEVICE .* LAST CAPTURE +CLOCK SKEW +TOTAL KB +CAPTURES\n"))) << t;
  EXPECT_EQ(t.find("LAST TOTAL"), std::string::npos) << t;
}

TEST_F(ServerCommandsTest, DevicesShowClockSkewAndWhatIngestRefused) {
  std::string t = Devices(false, false);
  EXPECT_NE(t.find("CLOCK SKEW"), std::string::npos) << t;
  EXPECT_NE(t.find(" -3 s "), std::string::npos) << t;
  EXPECT_NE(t.find(" +2912106 days "), std::string::npos) << t;
  EXPECT_NE(t.find("sim-mtk-1: 24 agent streams refused: another device uses this device id (model \"Pixel 8\", "
                   "soc \"gs301\"); give each device its own memfleet-agent --device-id\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("sim-mtk-1: 2 captures refused for a time ahead of the server's clock (clock skew "
                   "+2912106 days); fix the device's clock\n"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("sim-qcom-505: "), std::string::npos) << t;  // nothing refused there

  const std::string csv = Devices(true, false);
  EXPECT_NE(csv.find(",dropped_captures,clock_skew_s,refused_streams,future_captures_refused,"), std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",0,-3,0,0,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",0,251605958400,24,2,"), std::string::npos) << csv;

  json j = json::parse(Devices(false, true));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["clock_skew_s"], -3);
  EXPECT_EQ(j[1]["clock_skew_s"], 251605958400);
  EXPECT_EQ(j[1]["refused_streams"], 24);
  EXPECT_EQ(j[1]["future_captures_refused"], 2);
}

// The Android facts of the Hello: model, build (its brand/product/device head left to the MODEL column)
// and access level in the table, every fact in CSV and JSON.
TEST_F(ServerCommandsTest, DevicesShowBuildAndAccess) {
  const std::string t = Devices(false, false);
  EXPECT_NE(t.find("BUILD"), std::string::npos) << t;
  EXPECT_NE(t.find("ACCESS"), std::string::npos) << t;
  EXPECT_NE(t.find(" 14/UQ1A.240205.004/11269751:user/release-keys  shell "), std::string::npos) << t;
  EXPECT_EQ(t.find("google/panther"), std::string::npos) << t;

  const std::string csv = Devices(true, false);
  // The columns server (a server alone with its database names none), retired_at (active), tier (no
  // capture stored) and agent_tier (not said) are empty.
  EXPECT_NE(csv.find(",future_captures_refused,manufacturer,build_type,abi,android_sdk,access,selinux,server,"
                     "retired_at,tier,agent_tier\r\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",0,-3,0,0,Google,user,arm64-v8a,34,shell,enforcing,,,,\r\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",0,251605958400,24,2,,,,,,,,,,\r\n"), std::string::npos) << csv;  // an older agent
  EXPECT_EQ(t.find("SERVER"), std::string::npos) << t;

  json j = json::parse(Devices(false, true));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["build_fingerprint"], "google/panther/panther:14/UQ1A.240205.004/11269751:user/release-keys");
  EXPECT_EQ(j[0]["manufacturer"], "Google");
  EXPECT_EQ(j[0]["build_type"], "user");
  EXPECT_EQ(j[0]["abi"], "arm64-v8a");
  EXPECT_EQ(j[0]["android_sdk"], "34");
  EXPECT_EQ(j[0]["access"], "shell");
  EXPECT_EQ(j[0]["selinux"], "enforcing");
  EXPECT_EQ(j[1]["access"], "");
}

TEST_F(ServerCommandsTest, DevicesCsvAndJson) {
  DevicesArgs args;
  args.common = common_;
  args.common.csv = true;
  args.where = {"platform=qcom"};
  ASSERT_EQ(RunDevices(args, out_, err_), kExitOk) << err_.str();
  EXPECT_EQ(service_.last_selector().where(0), "platform=qcom");
  std::string csv = out_.str();
  EXPECT_EQ(csv.rfind("device_id,model,platform,soc,online,last_capture_at,last_total_kb,capture_count,", 0), 0u)
      << csv;
  EXPECT_NE(csv.find("sim-qcom-505,\"Edge, \"\"Q\"\"\",qcom,,true,2026-11-30T08:00:00Z,3014795,3,"), std::string::npos)
      << csv;
  EXPECT_NE(csv.find("sim-mtk-1,MT6989 board,mtk,,false,,,0,"), std::string::npos) << csv;  // unknown = empty

  std::ostringstream out;
  args.common.csv = false;
  args.common.json = true;
  ASSERT_EQ(RunDevices(args, out, err_), kExitOk);
  json j = json::parse(out.str());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["last_total_kb"], 3014795);
  EXPECT_TRUE(j[1]["last_total_kb"].is_null());
  EXPECT_EQ(j[1]["online"], false);
}

TEST_F(ServerCommandsTest, DevicesWhereMatchingNothingSaysSoNotThatNoDeviceIsKnown) {
  DevicesArgs args;
  args.common = common_;
  args.where = {"model=none"};
  ASSERT_EQ(RunDevices(args, out_, err_), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "no device matches the --where terms (`memfleet devices` lists them all)\n");

  std::ostringstream out;
  service_.no_devices = true;
  args.where.clear();
  ASSERT_EQ(RunDevices(args, out, err_), kExitOk) << err_.str();
  EXPECT_EQ(out.str(), "no devices known to the server yet (start memfleet-agent on a device)\n");
}

TEST_F(ServerCommandsTest, HostileDeviceTextIsEscapedInTheTableAndNeutralisedInCsv) {
  DevicesArgs args;
  args.common = common_;
  args.where = {"model=hostile"};
  ASSERT_EQ(RunDevices(args, out_, err_), kExitOk) << err_.str();
  const std::string table = out_.str();
  EXPECT_EQ(table.find('\x1b'), std::string::npos) << table;
  EXPECT_NE(table.find("\\x1b[31mqcom"), std::string::npos) << table;
  EXPECT_NE(table.find("=cmd|' /C calc'!A0"), std::string::npos) << table;  // harmless on a terminal

  std::ostringstream csv;
  args.common.csv = true;
  ASSERT_EQ(RunDevices(args, csv, err_), kExitOk) << err_.str();
  // The formula is text to a spreadsheet; the rest of the bytes are kept, quoted where RFC 4180 says.
  EXPECT_NE(csv.str().find("\r\nevil-1,\"'=cmd|' /C calc'!A0\",\x1b[31mqcom,,true,,,0,\x1b]0;owned\x07,"),
            std::string::npos)
      << csv.str();

  std::ostringstream js;
  args.common.csv = false;
  args.common.json = true;
  ASSERT_EQ(RunDevices(args, js, err_), kExitOk) << err_.str();
  // JSON stays exact: the writer escapes control characters, a reader gets the same bytes back.
  EXPECT_EQ(js.str().find('\x1b'), std::string::npos) << js.str();
  EXPECT_NE(js.str().find("\\u001b]0;owned\\u0007"), std::string::npos) << js.str();
  json j = json::parse(js.str());
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["model"], "=cmd|' /C calc'!A0");
  EXPECT_EQ(j[0]["platform"], "\x1b[31mqcom");
  EXPECT_EQ(j[0]["build_fingerprint"], "\x1b]0;owned\x07");
  EXPECT_EQ(j[0]["kernel"],
            "\xe2\x80\xae"
            "6.1");
}

// A value nobody knows is spelled one way in every table ("-"), and CSV leaves its cell empty.
TEST(NoValueTest, TablesSpellItOneWayAndCsvLeavesTheCellEmpty) {
  report::Report r;
  r.device_id = "dev";
  report::ProcessReport p;
  p.pid = 42;
  p.name = "com.example";  // every figure and oom_score_adj unknown
  r.processes[42] = p;
  const std::string t = RenderReportTable(r);
  EXPECT_EQ(t.find("null"), std::string::npos) << t;
  EXPECT_NE(t.find("  total                        -   device memory footprint\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  com.example                                   -          -         -         -           -"
                   "        -      -\n"),
            std::string::npos)
      << t;

  // A group of devices that did not report the key, and a row without a model.
  v1::FleetResponse fleet;
  v1::FleetGroup* g = fleet.add_groups();
  g->set_devices(1);
  g->set_min_kb(10);
  g->set_p50_kb(10);
  g->set_p90_kb(10);
  g->set_max_kb(10);
  v1::FleetRow* row = fleet.add_rows();
  row->set_device_id("d1");
  FleetArgs args;
  args.rows = true;
  const std::string table = RenderFleet(args, fleet, OutputFormat::kTable);
  EXPECT_NE(table.find("\n  -            1   10   10   10   10\n"), std::string::npos) << table;
  EXPECT_NE(table.find("\n  d1      -      -         "), std::string::npos) << table;
  EXPECT_EQ(table.find("(none)"), std::string::npos) << table;
  args.rows = false;
  EXPECT_EQ(RenderFleet(args, fleet, OutputFormat::kCsv),
            "model,devices,unknown,min_kb,p50_kb,p90_kb,max_kb,devices_kernel,devices_dumpsys,devices_unknown\r\n"
            ",1,0,10,10,10,10,0,0,0\r\n");

  // A trend whose only sample has the figure null.
  v1::ProcessHistoryResponse history;
  v1::HistoryPoint* point = history.add_points();
  point->set_captured_at("2026-11-30T08:00:00Z");
  point->set_capture_id("c1");
  point->set_pid(7);
  TrendArgs trend_args;
  trend_args.device_id = "d1";
  trend_args.process_name = "x";
  const std::string trend = RenderTrend(trend_args, history, OutputFormat::kTable);
  EXPECT_EQ(trend.find("null"), std::string::npos) << trend;
  EXPECT_NE(trend.find("  2026-11-30T08:00:00Z    7         -  figure unknown in that report\n"), std::string::npos)
      << trend;
  EXPECT_NE(trend.find("min -   max -   last -"), std::string::npos) << trend;
}

TEST(ReportTableTest, HostileNamesAndWarningsAreEscaped) {
  report::Report r;
  r.device_id = "dev\x1b[2J";
  report::ProcessReport p;
  p.name =
      "\x1b]0;owned\x07"
      "com.evil\xe2\x80\xae";
  p.total_kb = 1000;
  r.processes[42] = p;
  r.warnings = {"proc/42/cmdline: \x1b[31mred\nsecond line"};
  const std::string t = RenderReportTable(r);
  EXPECT_EQ(t.find('\x1b'), std::string::npos) << t;
  EXPECT_EQ(t.find('\x07'), std::string::npos) << t;
  EXPECT_EQ(t.find("\xe2\x80\xae"), std::string::npos) << t;
  EXPECT_NE(t.find("device dev\\x1b[2J"), std::string::npos) << t;
  EXPECT_NE(t.find("\\x1b]0;owned\\x07com.evil\\u202e"), std::string::npos) << t;
  // One warning, one line: its newline is kept by the whole-text pass, so the table reads as before.
  EXPECT_NE(t.find("  - proc/42/cmdline: \\x1b[31mred\nsecond line\n"), std::string::npos) << t;
}

TEST_F(ServerCommandsTest, ReportTableIsTheAccountTable) {
  ReportArgs args;
  args.common = common_;
  args.device_id = "sim-qcom-505";
  ASSERT_EQ(RunReport(args, out_, err_), kExitOk) << err_.str();
  std::string t = out_.str();
  EXPECT_NE(t.find("capture sim-qcom-505-20261130T080000Z-000003"), std::string::npos) << t;
  EXPECT_NE(t.find("platform qcom"), std::string::npos);
  EXPECT_NE(t.find("3,014,795"), std::string::npos);   // device total_kb of expected.json
  EXPECT_NE(t.find("546,300"), std::string::npos);     // static_reserved_kb
  EXPECT_EQ(service_.last_report_request().at(), "");  // latest
}

// The header names the tier stored with the capture (docs/accounting.md section 9): the shell phone's
// report is of the dumpsys tier, as its expected.json says; qcom-edge's, stored before tiers (its
// expected.json has none), has no stored tier and reads as unknown, not as kernel.
TEST_F(ServerCommandsTest, ReportHeaderNamesTheStoredTier) {
  const json shield =
      json::parse(testing::ReadFileForTest(testing::TestData("captures-shell/shield-shell/expected.json")));
  ASSERT_EQ(shield["device"]["tier"], "dumpsys");
  ReportArgs args;
  args.common = common_;
  args.device_id = "sim-shield";
  ASSERT_EQ(RunReport(args, out_, err_), kExitOk) << err_.str();
  std::string t = out_.str();
  EXPECT_NE(t.find("capture sim-shield-20261130T080000Z-000003 of sim-shield at 2026-11-30T08:00:00Z"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("\ntier dumpsys\n"), std::string::npos) << t;
  EXPECT_LT(t.find("\ntier dumpsys\n"), t.find("Device                        kB"))
      << t;  // a header line, before the table

  std::ostringstream out, err;
  args.device_id = "sim-qcom-505";
  ASSERT_EQ(RunReport(args, out, err), kExitOk) << err.str();
  const json qcom_edge = json::parse(testing::ReadFileForTest(testing::TestData("captures/qcom-edge/expected.json")));
  ASSERT_FALSE(qcom_edge["device"].contains("tier"));
  EXPECT_NE(out.str().find("\ntier unknown\n"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("tier kernel"), std::string::npos) << out.str();
}

TEST_F(ServerCommandsTest, ReportJsonAndRelativeAt) {
  ReportArgs args;
  args.common = common_;
  args.common.json = true;
  args.device_id = "sim-qcom-505";
  args.at = "24h";
  args.now = kNow;
  ASSERT_EQ(RunReport(args, out_, err_), kExitOk) << err_.str();
  EXPECT_EQ(service_.last_report_request().at(), "2026-12-01T16:15:00Z");
  json j = json::parse(out_.str());
  EXPECT_EQ(j["device"]["total_kb"], 3014795);
  EXPECT_EQ(j["processes"]["30830"]["name"], "/system/bin/surfaceflinger");
  EXPECT_EQ(j["capture_id"], "sim-qcom-505-20261130T080000Z-000003");  // the capture it read
}

TEST_F(ServerCommandsTest, ReportCsvHasEveryProcess) {
  ReportArgs args;
  args.common = common_;
  args.common.csv = true;
  args.device_id = "sim-qcom-505";
  ASSERT_EQ(RunReport(args, out_, err_), kExitOk) << err_.str();
  std::string csv = out_.str();
  size_t lines = 0;
  for (size_t p = csv.find("\r\n"); p != std::string::npos; p = csv.find("\r\n", p + 2)) ++lines;
  EXPECT_EQ(lines, 1u + 14u);  // header + the 14 processes of qcom-edge's expected.json
  // pid 30830 surfaceflinger: pss 87192, swap 3215, gfxdev 2432, gl 78940, dma 74, native 3171, total 166989.
  EXPECT_NE(csv.find(",30830,/system/bin/surfaceflinger,-1000,false,87192,3215,2432,78940,74,3171,heap_dump,84804,"
                     "82185,166989,"),
            std::string::npos)
      << csv;
}

// --top means one thing in the table and the CSV: the N largest totals. qcom-edge's expected.json's three
// largest are com.taobao.taobao (299,256 kB, cached: listed, marked C), com.android.camera (264,753) and
// the composer (253,269); the CSV's three rows are those, as the table's are.
TEST_F(ServerCommandsTest, ReportTopCutsTheCsvAsItCutsTheTable) {
  ReportArgs args;
  args.common = common_;
  args.common.csv = true;
  args.device_id = "sim-qcom-505";
  args.top = 3;
  ASSERT_EQ(RunReport(args, out_, err_), kExitOk) << err_.str();
  const std::string csv = out_.str();
  std::vector<std::string> csv_pids;
  for (size_t start = csv.find("\r\n") + 2; start < csv.size();) {
    const size_t end = csv.find("\r\n", start);
    const size_t pid_at = csv.find(',', csv.find(',', start) + 1) + 1;  // the third field
    csv_pids.push_back(csv.substr(pid_at, csv.find(',', pid_at) - pid_at));
    start = end + 2;
  }
  EXPECT_EQ(csv_pids, (std::vector<std::string>{"16160", "22459", "8499"})) << csv;

  std::ostringstream table;
  args.common.csv = false;
  ASSERT_EQ(RunReport(args, table, err_), kExitOk) << err_.str();
  EXPECT_NE(table.str().find("Processes by total_kb (kB), top 3;"), std::string::npos) << table.str();
  for (const std::string& pid : csv_pids) {
    EXPECT_NE(table.str().find(" " + pid + "  "), std::string::npos) << pid << "\n" << table.str();
  }

  std::ostringstream all;
  args.common.csv = true;
  args.top = 0;
  ASSERT_EQ(RunReport(args, all, err_), kExitOk) << err_.str();
  size_t lines = 0;
  for (size_t p = all.str().find("\r\n"); p != std::string::npos; p = all.str().find("\r\n", p + 2)) ++lines;
  EXPECT_EQ(lines, 1u + 14u) << all.str();  // 0 = all
}

TEST_F(ServerCommandsTest, UnknownDeviceAndNothingStoredAreNotFound) {
  ReportArgs args;
  args.common = common_;
  args.device_id = "pixel-9";
  EXPECT_EQ(RunReport(args, out_, err_), kExitNothingToCheck);
  EXPECT_EQ(err_.str(), "memfleet: unknown device \"pixel-9\"\n");
  std::ostringstream err;
  args.device_id = "sim-empty";
  EXPECT_EQ(RunReport(args, out_, err), kExitNothingToCheck);
  EXPECT_EQ(err.str(), "memfleet: nothing stored for device \"sim-empty\" yet\n");
  EXPECT_EQ(out_.str(), "");
}

TEST_F(ServerCommandsTest, ProcessShowsEveryFieldAndItsMemtrack) {
  ProcessArgs args;
  args.common = common_;
  args.device_id = "sim-qcom-505";
  args.process_name = "/system/bin/surfaceflinger";
  ASSERT_EQ(RunProcess(args, out_, err_), kExitOk) << err_.str();
  std::string t = out_.str();
  EXPECT_NE(t.find("(pid 30830)"), std::string::npos) << t;
  for (const char* field : {"oom_score_adj", "cached", "pss_kb", "swap_pss_kb", "gfxdev_kb", "gl_kb", "dma_kb",
                            "native_graphics_kb", "native_graphics_source", "non_graphics_kb", "graphics_dma_kb",
                            "total_kb", "dumpsys gl_mtrack_kb", "dumpsys egl_mtrack_kb"}) {
    EXPECT_NE(t.find(field), std::string::npos) << field;
  }
  EXPECT_NE(t.find("166,989"), std::string::npos);  // total_kb
  EXPECT_NE(t.find("78,940"), std::string::npos);   // gl_kb

  std::ostringstream out;
  args.common.json = true;
  ASSERT_EQ(RunProcess(args, out, err_), kExitOk);
  json j = json::parse(out.str());
  ASSERT_EQ(j["processes"].size(), 1u);
  EXPECT_EQ(j["processes"][0]["pid"], 30830);
  EXPECT_EQ(j["processes"][0]["graphics_dma_kb"], 82185);
  // expected.json has no dumpsys view: the memtrack values are null, not 0.
  EXPECT_TRUE(j["processes"][0]["dumpsys"]["gl_mtrack_kb"].is_null());
}

// The same figure has the same column name in `report --csv` and `process --csv`: the report JSON's.
TEST_F(ServerCommandsTest, ReportAndProcessCsvNameTheDumpsysFiguresAlike) {
  const auto header = [](const std::string& csv) {
    std::vector<std::string> columns;
    std::stringstream line(csv.substr(0, csv.find("\r\n")));
    for (std::string c; std::getline(line, c, ',');) columns.push_back(c);
    return columns;
  };
  ReportArgs report;
  report.common = common_;
  report.common.csv = true;
  report.device_id = "sim-qcom-505";
  ASSERT_EQ(RunReport(report, out_, err_), kExitOk) << err_.str();
  const std::vector<std::string> report_columns = header(out_.str());
  ProcessArgs process;
  process.common = common_;
  process.common.csv = true;
  process.device_id = "sim-qcom-505";
  process.process_name = "/system/bin/surfaceflinger";
  std::ostringstream out;
  ASSERT_EQ(RunProcess(process, out, err_), kExitOk) << err_.str();
  const std::vector<std::string> process_columns = header(out.str());
  for (const char* column : {"gl_mtrack_kb", "egl_mtrack_kb", "dumpsys_total_pss_kb", "total_kb", "pss_kb"}) {
    EXPECT_EQ(std::count(report_columns.begin(), report_columns.end(), column), 1) << column << " in report";
    EXPECT_EQ(std::count(process_columns.begin(), process_columns.end(), column), 1) << column << " in process";
  }
  EXPECT_EQ(out.str().find("dumpsys_gl_mtrack_kb"), std::string::npos) << out.str();
}

// Names are cmdlines verbatim; people type base names or ends of them.
TEST_F(ServerCommandsTest, ProcessNamesMatchExactlyThenByBaseNameThenBySuffix) {
  ProcessArgs args;
  args.common = common_;
  args.common.json = true;
  args.device_id = "sim-qcom-505";
  for (const auto& [typed, full] : std::vector<std::pair<std::string, std::string>>{
           {"surfaceflinger", "/system/bin/surfaceflinger"},
           {"tencent.mm", "com.tencent.mm"},
           {"composer3-service", "/vendor/bin/hw/android.hardware.graphics.composer3-service"}}) {
    std::ostringstream out, err;
    args.process_name = typed;
    ASSERT_EQ(RunProcess(args, out, err), kExitOk) << typed << ": " << err.str();
    json j = json::parse(out.str());
    ASSERT_EQ(j["processes"].size(), 1u) << typed;
    EXPECT_EQ(j["processes"][0]["name"], full);
    EXPECT_EQ(err.str(), "memfleet process: \"" + typed + "\" is \"" + full + "\"\n");
  }
}

TEST_F(ServerCommandsTest, AnUnknownOrAmbiguousProcessListsTheClosestNames) {
  ProcessArgs args;
  args.common = common_;
  args.device_id = "sim-qcom-505";
  args.process_name = "surfaceflinga";
  EXPECT_EQ(RunProcess(args, out_, err_), kExitNothingToCheck);
  EXPECT_NE(err_.str().find("no process named \"surfaceflinga\" in the report of sim-qcom-505 captured at "
                            "2026-11-30T08:00:00Z (14 processes; closest: \"/system/bin/surfaceflinger\", "),
            std::string::npos)
      << err_.str();

  std::ostringstream err;
  args.process_name = "-service";
  EXPECT_EQ(RunProcess(args, out_, err), kExitUsage);
  EXPECT_NE(err.str().find("\"-service\" is the end of 2 processes in the report of sim-qcom-505 captured at "
                           "2026-11-30T08:00:00Z: "
                           "\"/vendor/bin/hw/android.hardware.graphics.composer3-service\", "
                           "\"/vendor/bin/hw/vendor.qti.hardware.display.allocator-service\"; give the full name"),
            std::string::npos)
      << err.str();
  EXPECT_EQ(out_.str(), "");
}

TEST_F(ServerCommandsTest, TrendFindsAProcessByItsBaseNameAmongTheLatestReportsNames) {
  TrendArgs args;
  args.common = common_;
  args.common.csv = true;
  args.device_id = "sim-qcom-505";
  args.process_name = "surfaceflinger";
  ASSERT_EQ(RunTrend(args, out_, err_), kExitOk) << err_.str();
  EXPECT_EQ(service_.last_history_request().process_name(), "/system/bin/surfaceflinger");
  EXPECT_EQ(err_.str(), "memfleet trend: \"surfaceflinger\" is \"/system/bin/surfaceflinger\"\n");
  EXPECT_NE(out_.str().find(",30830,"), std::string::npos) << out_.str();

  std::ostringstream out, err;
  args.process_name = "-service";
  EXPECT_EQ(RunTrend(args, out, err), kExitUsage);
  EXPECT_NE(err.str().find("\"-service\" is the end of 2 processes in the latest report of sim-qcom-505"),
            std::string::npos)
      << err.str();
}

TEST_F(ServerCommandsTest, TrendTableSparklineAndSvg) {
  std::string svg_path = ::testing::TempDir() + "/trend_test.svg";
  std::remove(svg_path.c_str());
  TrendArgs args;
  args.common = common_;
  args.device_id = "sim-qcom-505";
  args.process_name = "/system/bin/surfaceflinger";
  args.since = "7d";
  args.now = kNow;
  args.svg_path = svg_path;
  ASSERT_EQ(RunTrend(args, out_, err_), kExitOk) << err_.str();
  EXPECT_EQ(service_.last_history_request().since(), "2026-11-25T16:15:00Z");
  EXPECT_EQ(service_.last_history_request().metric(), "total_kb");
  std::string t = out_.str();
  // Time order although the server sent them shuffled.
  size_t a = t.find("2026-11-30T08:00:00Z"), b = t.find("2026-12-01T10:00:00Z"), c = t.find("2026-12-02T12:00:00Z");
  ASSERT_NE(a, std::string::npos);
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_NE(t.find("new pid"), std::string::npos);  // 30830 -> 31002
  // 150000, 166989, unknown, 180000 over min 150000 .. max 180000: levels 0, 16989/30000*7 = 3.96 -> 4, gap, 7.
  EXPECT_NE(t.find("▁▅ █"), std::string::npos) << t;
  EXPECT_NE(t.find("min 150,000 kB"), std::string::npos) << t;
  EXPECT_NE(t.find("max 180,000 kB"), std::string::npos) << t;
  EXPECT_NE(t.find("last 180,000 kB"), std::string::npos) << t;
  std::string svg = testing::ReadFileForTest(svg_path);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_NE(err_.str().find("wrote the chart to"), std::string::npos);
}

TEST_F(ServerCommandsTest, TrendCsvAndNoHistory) {
  TrendArgs args;
  args.common = common_;
  args.common.csv = true;
  args.device_id = "sim-qcom-505";
  args.process_name = "/system/bin/surfaceflinger";
  args.metric = "process.gl_kb";
  ASSERT_EQ(RunTrend(args, out_, err_), kExitOk) << err_.str();
  EXPECT_EQ(service_.last_history_request().metric(), "gl_kb");
  EXPECT_EQ(service_.last_history_request().since(), "");
  EXPECT_EQ(
      out_.str().rfind("captured_at,capture_id,pid,gl_kb,sweep_id,labels,agent_labels\r\n2026-11-30T08:00:00Z,", 0), 0u)
      << out_.str();
  // The unknown value is an empty field, and so are a periodic capture's sweep and labels.
  EXPECT_NE(out_.str().find(",31002,,,,\r\n"), std::string::npos) << out_.str();

  std::ostringstream out, err;
  args.process_name = "com.absent";
  EXPECT_EQ(RunTrend(args, out, err), kExitNothingToCheck);
  EXPECT_NE(err.str().find("no stored capture of sim-qcom-505 has a process named \"com.absent\"; closest names in "
                           "its latest report: \"com.tencent.mm\", "),
            std::string::npos)
      << err.str();
}

TEST_F(ServerCommandsTest, FleetGroups) {
  FleetArgs args;
  args.common = common_;
  args.group_by = "platform";
  ASSERT_EQ(RunFleet(args, out_, err_), kExitOk) << err_.str();
  std::string t = out_.str();
  EXPECT_NE(t.find("PLATFORM"), std::string::npos);
  EXPECT_NE(t.find("3,567,646"), std::string::npos);
  // Unknowns are counted beside the known, never dropped; a group of unknowns only has no figures.
  EXPECT_NE(t.find(" 2 (+1 unknown) "), std::string::npos) << t;
  EXPECT_NE(t.find(" 0 (+2 unknown) "), std::string::npos) << t;

  std::ostringstream csv;
  args.common.csv = true;
  ASSERT_EQ(RunFleet(args, csv, err_), kExitOk);
  EXPECT_EQ(csv.str(),
            "platform,devices,unknown,min_kb,p50_kb,p90_kb,max_kb,devices_kernel,devices_dumpsys,devices_unknown\r\n"
            "qcom,2,1,3014795,3014795,3567646,3567646,2,0,0\r\n"
            "mtk,0,2,,,,,0,0,0\r\n");

  std::ostringstream out, err;
  args.common.csv = false;
  args.metric = "device.bogus_kb";
  EXPECT_EQ(RunFleet(args, out, err), kExitUsage);  // the server's INVALID_ARGUMENT, its message
  EXPECT_EQ(err.str(), "memfleet: unknown device figure \"bogus_kb\"\n");

  std::ostringstream err2;
  args.metric = "process.total_kb";
  args.process_name = "nothing";
  EXPECT_EQ(RunFleet(args, out, err2), kExitNothingToCheck);
}

// A group of `key` whose devices are of these tiers ("" unknown), as GetFleet gives it.
v1::FleetGroup* AddTierGroup(v1::FleetResponse& response, const std::string& key,
                             const std::map<std::string, uint32_t>& tiers) {
  v1::FleetGroup* g = response.add_groups();
  g->set_key(key);
  for (const auto& [tier, devices] : tiers) {
    g->set_devices(g->devices() + devices);
    (*g->mutable_tier_devices())[tier] = devices;
  }
  return g;
}

// A group whose figures come from devices of both tiers (docs/accounting.md section 9) says so under the
// table and in --json, naming the way to split it; a group of one tier says nothing.
TEST(RenderFleetTest, AGroupMixingTiersSaysSoInTheTextAndTheJson) {
  v1::FleetResponse response;
  v1::FleetGroup* mixed = AddTierGroup(response, "SHIELD Android TV", {{"kernel", 1}, {"dumpsys", 2}});
  mixed->set_min_kb(966011);
  mixed->set_p50_kb(966011);
  mixed->set_p90_kb(3567646);
  mixed->set_max_kb(3567646);
  AddTierGroup(response, "SM8450 HDK", {{"kernel", 1}, {"", 1}});  // "": a capture stored before tiers
  FleetArgs args;
  args.metric = "device.total_kb";
  args.group_by = "model";

  const std::string text = RenderFleet(args, response, OutputFormat::kTable);
  EXPECT_NE(text.find("\nSHIELD Android TV mixes tiers (kernel 1, dumpsys 2): its figures do not compare; split it "
                      "with --where tier=kernel or --where tier=dumpsys\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("SM8450 HDK mixes"), std::string::npos) << text;

  const json j = json::parse(RenderFleet(args, response, OutputFormat::kJson));
  EXPECT_EQ(j["groups"][0]["mixed_tiers"], true);
  EXPECT_EQ(j["groups"][0]["tiers"], json({{"dumpsys", 2}, {"kernel", 1}}));
  EXPECT_EQ(j["groups"][1]["mixed_tiers"], false);
  EXPECT_EQ(j["groups"][1]["tiers"], json({{"kernel", 1}, {"unknown", 1}}));
}

// A group of one tier with devices of unknown tier beside it (stored before tiers) is not a mix of the two
// tiers, but its figures may not compare: said under the table, and `unknown_tiers` in --json. A group of
// both tiers says only that it mixes them (its unknowns counted there); one of one tier says nothing.
TEST(RenderFleetTest, AGroupWithDevicesOfUnknownTierSaysSo) {
  v1::FleetResponse response;
  AddTierGroup(response, "SM8450 HDK", {{"kernel", 1}, {"", 2}});
  AddTierGroup(response, "SHIELD Android TV", {{"kernel", 1}, {"dumpsys", 1}, {"", 1}});
  AddTierGroup(response, "Pixel 8", {{"kernel", 2}});
  FleetArgs args;
  args.metric = "device.total_kb";
  args.group_by = "model";

  const std::string text = RenderFleet(args, response, OutputFormat::kTable);
  EXPECT_NE(text.find("\nSM8450 HDK has 2 devices of unknown tier (stored before tiers): their figures may not "
                      "compare (memfleet-server --reaccount stores their tier)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nSHIELD Android TV mixes tiers (kernel 1, dumpsys 1, unknown 1): its figures do not "
                      "compare; split it with --where tier=kernel or --where tier=dumpsys\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("SHIELD Android TV has"), std::string::npos) << text;
  EXPECT_EQ(text.find("Pixel 8 has"), std::string::npos) << text;
  EXPECT_EQ(text.find("Pixel 8 mixes"), std::string::npos) << text;

  const json j = json::parse(RenderFleet(args, response, OutputFormat::kJson));
  EXPECT_EQ(j["groups"][0]["unknown_tiers"], true);
  EXPECT_EQ(j["groups"][0]["mixed_tiers"], false);
  EXPECT_EQ(j["groups"][1]["unknown_tiers"], false);
  EXPECT_EQ(j["groups"][1]["mixed_tiers"], true);
  EXPECT_EQ(j["groups"][2]["unknown_tiers"], false);
  EXPECT_EQ(j["groups"][2]["mixed_tiers"], false);
}

// --csv: each group's devices by tier in three columns after max_kb.
TEST(RenderFleetTest, CsvGroupsEndWithTheirDevicesByTier) {
  v1::FleetResponse response;
  AddTierGroup(response, "SHIELD Android TV", {{"kernel", 1}, {"dumpsys", 2}, {"", 1}});
  v1::FleetGroup* g = response.mutable_groups(0);
  g->set_min_kb(966011);
  g->set_p50_kb(966011);
  g->set_p90_kb(3567646);
  g->set_max_kb(3567646);
  FleetArgs args;
  args.group_by = "model";
  EXPECT_EQ(RenderFleet(args, response, OutputFormat::kCsv),
            "model,devices,unknown,min_kb,p50_kb,p90_kb,max_kb,devices_kernel,devices_dumpsys,devices_unknown\r\n"
            "SHIELD Android TV,4,0,966011,966011,3567646,3567646,1,2,1\r\n");
}

TEST_F(ServerCommandsTest, SweepRanksStoredDevicesAndListsTheRest) {
  SweepArgs args;
  args.common = common_;
  args.deadline_s = 5;
  // One of the three devices stored nothing: partial (README "Exit codes"), said on stderr.
  ASSERT_EQ(RunSweep(args, out_, err_), kExitPartial) << err_.str();
  EXPECT_NE(err_.str().find("memfleet sweep: 2 of 3 devices stored a capture\n"), std::string::npos) << err_.str();
  // Not a terminal: one plain line per change.
  EXPECT_NE(err_.str().find("sim-gone: offline: not connected\n"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("sweep sweep-7: 3/3 devices done, finished\n"), std::string::npos) << err_.str();
  EXPECT_EQ(err_.str().find('\r'), std::string::npos);
  std::string t = out_.str();
  // mtk-mt6989 total 4,125,309 ranks above qcom-edge 3,014,795.
  size_t mtk = t.find("sim-mtk-1"), qcom = t.find("sim-qcom-505");
  ASSERT_NE(mtk, std::string::npos) << t;
  ASSERT_NE(qcom, std::string::npos) << t;
  EXPECT_LT(mtk, qcom);
  EXPECT_NE(t.find("4,125,309"), std::string::npos);
  EXPECT_NE(t.find("2,970,090"), std::string::npos);     // mtk processes_kb
  EXPECT_NE(t.find("MT6989 board"), std::string::npos);  // model from ListDevices
  // Its headers are spelled as every other table's: words apart, "KB" last (`devices`: "TOTAL KB").
  EXPECT_NE(t.find("TOTAL KB  PROCESSES KB  KERNEL KB  STATIC RESERVED KB"), std::string::npos) << t;
  EXPECT_EQ(t.find("_KB"), std::string::npos) << t;
  // qcom-edge's largest process is com.taobao.taobao (299,256) but it is cached; the top counted one is
  // com.android.camera at 264,753.
  EXPECT_NE(t.find("com.android.camera"), std::string::npos) << t;
  EXPECT_NE(t.find("264,753"), std::string::npos);
  EXPECT_EQ(t.find("com.taobao.taobao"), std::string::npos);
  size_t under = t.find("without a new report:");
  ASSERT_NE(under, std::string::npos);
  EXPECT_GT(t.find("sim-gone: offline: not connected"), under);
}

TEST_F(ServerCommandsTest, SweepOnATerminalRedrawsOneLine) {
  SweepArgs args;
  args.common = common_;
  args.deadline_s = 5;
  args.progress_tty = true;
  args.common.json = true;
  ASSERT_EQ(RunSweep(args, out_, err_), kExitPartial) << err_.str();  // 2 of 3 stored
  std::string e = err_.str();
  EXPECT_EQ(e.find("sim-gone: offline"), std::string::npos);               // no plain lines
  EXPECT_NE(e.find("\r[          ] 0/3 stored"), std::string::npos) << e;  // drawn in place
  // Final state: 2 of 3 stored (6 cells), 1 offline (to 10 cells).
  EXPECT_NE(e.find("[======xxxx] 2/3 stored, 0 failed, 1 offline"), std::string::npos) << e;
  EXPECT_EQ(e.back(), '\n');
  // Redrawn only when the line reads differently: 0/3; 1 offline; 1/3 stored; 2/3 stored. The second
  // "sent" and the summary change nothing on screen.
  EXPECT_EQ(std::count(e.begin(), e.end(), '\r'), 4) << e;
  json j = json::parse(out_.str());
  EXPECT_EQ(j["sweep_id"], "sweep-7");
  ASSERT_EQ(j["devices"].size(), 3u);
  EXPECT_EQ(j["devices"][0]["device_id"], "sim-mtk-1");
  EXPECT_EQ(j["devices"][0]["total_kb"], 4125309);
  EXPECT_EQ(j["devices"][0]["static_reserved_kb"], 530360);
  EXPECT_EQ(j["devices"][2]["state"], "offline");
  EXPECT_EQ(j["devices"][2]["has_report"], false);
}

TEST_F(ServerCommandsTest, SweepMatchingNothingIsNotFound) {
  SweepArgs args;
  args.common = common_;
  args.where = {"model=none"};
  EXPECT_EQ(RunSweep(args, out_, err_), kExitNothingToCheck);
  EXPECT_NE(err_.str().find("no device matches the --where terms"), std::string::npos) << err_.str();
}

}  // namespace
}  // namespace memfleet::cli
