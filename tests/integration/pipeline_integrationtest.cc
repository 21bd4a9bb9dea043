// End to end, with the real binaries: memfleet-server on 127.0.0.1 with a SQLite file in a temp dir,
// memfleet-agent on each bundled capture tree and on this machine's "/", a sweep, and the stored reports
// checked against the captures' expected.json. Then a trend over several captures, and an agent that
// starts while the server is down delivering its spooled capture exactly once.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "memfleet/v1/query_service.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "report/report_json.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/expected_report.h"
#include "tests/support/load_tree.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"
#include "tests/support/wait_for.h"

namespace memfleet {
namespace pipeline_scenario {
namespace {

using nlohmann::json;
using testing::Subprocess;

const std::vector<std::string> kCaptures = {"generic-noddr", "mtk-mt6989", "qcom-edge", "qcom-sm8450", "xring-o1"};
constexpr char kLiveDevice[] = "this-machine";

using testing::Bin;

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-e2e-");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    agents_.clear();
    server_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  // Starts memfleet-server; returns its address.
  std::string StartServer(const std::string& listen = "127.0.0.1:0") {
    server_ = std::make_unique<Subprocess>(
        std::vector<std::string>{Bin("memfleet-server"), "--listen", listen, "--db", dir_ + "/memfleet.db"},
        dir_ + "/server.log");
    std::string line = server_->WaitForLine("listening on", std::chrono::seconds(60));
    EXPECT_FALSE(line.empty()) << server_->Log();
    std::string address = line.substr(line.rfind(' ') + 1);
    channel_ = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    stub_ = v1::QueryService::NewStub(channel_);
    return address;
  }

  Subprocess& StartAgent(const std::string& address, const std::string& root, const std::string& device_id,
                         std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {Bin("memfleet-agent"),
                                     "--server",
                                     address,
                                     "--root",
                                     root,
                                     "--device-id",
                                     device_id,
                                     "--interval",
                                     "3600",
                                     "--spool",
                                     dir_ + "/spool-" + device_id};
    argv.insert(argv.end(), extra.begin(), extra.end());
    agents_.push_back(std::make_unique<Subprocess>(argv, dir_ + "/agent-" + device_id + ".log"));
    return *agents_.back();
  }

  std::vector<v1::DeviceSummary> Devices() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListDevicesRequest req;
    v1::ListDevicesResponse resp;
    grpc::Status s = stub_->ListDevices(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return {resp.devices().begin(), resp.devices().end()};
  }

  bool WaitOnline(size_t n, std::chrono::seconds timeout) {
    return testing::WaitFor(
        [&] {
          size_t online = 0;
          for (const v1::DeviceSummary& d : Devices()) online += d.online() ? 1 : 0;
          return online >= n;
        },
        timeout, std::chrono::milliseconds(200));
  }

  // Runs a sweep over every device and returns the final state of each.
  std::map<std::string, v1::SweepProgress::State> Sweep(const std::vector<std::string>& where = {}) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    v1::SweepRequest req;
    for (const std::string& w : where) req.mutable_selector()->add_where(w);
    req.set_deadline_s(90);
    auto reader = stub_->StartSweep(&ctx, req);
    std::map<std::string, v1::SweepProgress::State> states;
    v1::SweepProgress p;
    bool finished = false;
    while (reader->Read(&p)) {
      if (!p.device_id().empty()) states[p.device_id()] = p.state();
      if (p.finished()) finished = true;
    }
    grpc::Status s = reader->Finish();
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_TRUE(finished);
    return states;
  }

  json Report(const std::string& device_id) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::GetReportRequest req;
    req.set_device_id(device_id);
    v1::GetReportResponse resp;
    grpc::Status s = stub_->GetReport(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << device_id << ": " << s.error_message();
    return s.ok() ? json::parse(resp.report_json()) : json();
  }

  std::string dir_;
  std::unique_ptr<Subprocess> server_;
  std::vector<std::unique_ptr<Subprocess>> agents_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::QueryService::Stub> stub_;
};

TEST_F(PipelineTest, SweepStoresReportsThatMatchTheExpectedOnes) {
  std::string address = StartServer();
  for (const std::string& c : kCaptures) StartAgent(address, testing::TestData("captures/" + c + "/tree"), c);
  StartAgent(address, "/", kLiveDevice);
  ASSERT_TRUE(WaitOnline(kCaptures.size() + 1, std::chrono::seconds(60))) << server_->Log();

  std::map<std::string, v1::SweepProgress::State> states = Sweep();
  for (const std::string& c : kCaptures) EXPECT_EQ(states[c], v1::SweepProgress::STORED) << c;
  EXPECT_EQ(states[kLiveDevice], v1::SweepProgress::STORED);

  for (const std::string& c : kCaptures) testing::ExpectReportMatchesExpected(Report(c), c);
  json live = Report(kLiveDevice);
  EXPECT_EQ(live["platform"], "generic");
  EXPECT_GT(live["processes"].size(), 1u);
  EXPECT_TRUE(live["device"]["mem_total_kb"].is_number());
  // This host is no phone and its capture gives no DDR size: no static reserved figure guessed from
  // MemTotal, so no device total either (docs/accounting.md section 3).
  EXPECT_TRUE(live["device"]["static_reserved_kb"].is_null()) << live["device"];
  EXPECT_TRUE(live["device"]["ddr_kb"].is_null()) << live["device"];
  EXPECT_EQ(live["device"]["ddr_estimated"], false);

  // The fleet view ranks the latest device totals.
  grpc::ClientContext ctx;
  v1::FleetRequest freq;
  freq.set_metric("device.total_kb");
  freq.set_group_by("platform");
  v1::FleetResponse fresp;
  ASSERT_TRUE(stub_->GetFleet(&ctx, freq, &fresp).ok());
  ASSERT_GE(fresp.rows_size(), 6);
  for (int i = 1; i < fresp.rows_size(); ++i) {
    if (fresp.rows(i).value_known()) {
      EXPECT_GE(fresp.rows(i - 1).value_kb(), fresp.rows(i).value_kb());
    }
  }
  bool qcom_group = false;
  for (const v1::FleetGroup& g : fresp.groups()) {
    if (g.key() == "qcom") {
      qcom_group = true;
      EXPECT_EQ(g.devices(), 2u);
      EXPECT_EQ(g.min_kb(), 3014795);  // qcom-edge's expected device total
      EXPECT_EQ(g.max_kb(), 3567646);  // qcom-sm8450's
    }
  }
  EXPECT_TRUE(qcom_group);
}

TEST_F(PipelineTest, TrendOverSeveralCapturesComesBackInOrder) {
  std::string address = StartServer();
  StartAgent(address, testing::TestData("captures/qcom-sm8450/tree"), "trend-phone");
  ASSERT_TRUE(WaitOnline(1, std::chrono::seconds(60)));
  // The agent's own first capture, then one per sweep, each stored before the next is asked for.
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        std::vector<v1::DeviceSummary> d = Devices();
        return !d.empty() && d[0].capture_count() >= 1;
      },
      std::chrono::seconds(60), /*every=*/std::chrono::milliseconds(100)));
  constexpr int kSweeps = 3;
  for (int i = 0; i < kSweeps; ++i) {
    EXPECT_EQ(Sweep({"device_id=trend-phone"})["trend-phone"], v1::SweepProgress::STORED);
  }
  // system_server of qcom-sm8450: pick it from the expected report.
  json expected = json::parse(testing::ReadFileForTest(testing::TestData("captures/qcom-sm8450/expected.json")));
  std::string name;
  int64_t total = 0;
  for (auto p = expected["processes"].begin(); p != expected["processes"].end(); ++p) {
    if (p.value()["total_kb"].is_number() && p.value()["total_kb"].get<int64_t>() > total) {
      total = p.value()["total_kb"].get<int64_t>();
      name = p.value()["name"].get<std::string>();
    }
  }
  grpc::ClientContext ctx;
  v1::ProcessHistoryRequest req;
  req.set_device_id("trend-phone");
  req.set_process_name(name);
  req.set_metric("total_kb");
  v1::ProcessHistoryResponse resp;
  ASSERT_TRUE(stub_->GetProcessHistory(&ctx, req, &resp).ok());
  // The agent's first capture at start plus one per sweep, each stamped to the millisecond.
  ASSERT_EQ(resp.points_size(), kSweeps + 1);
  for (int i = 0; i < resp.points_size(); ++i) {
    EXPECT_EQ(resp.points(i).captured_at().size(), std::string("2026-12-02T16:15:00.123Z").size())
        << resp.points(i).captured_at();
    EXPECT_TRUE(resp.points(i).value_known());
    EXPECT_EQ(resp.points(i).value_kb(), total) << name;  // the same tree every time: the same figure
    if (i > 0) {
      EXPECT_LT(resp.points(i - 1).captured_at(), resp.points(i).captured_at());
    }
  }
}

TEST_F(PipelineTest, SpooledCaptureIsDeliveredOnceWhenTheServerComesUp) {
  testing::LoopbackPortReservation port;  // held until the server binds it: no one else can take it
  const std::string address = port.address();
  Subprocess& agent = StartAgent(address, testing::TestData("captures/xring-o1/tree"), "late-server",
                                 {"--once", "--once-timeout", "90"});
  // The server is not there: the capture waits in the spool while the agent backs off, twice.
  ASSERT_FALSE(agent.WaitForLine("capture ", std::chrono::seconds(60)).empty()) << agent.Log();
  ASSERT_TRUE(agent.WaitForLines("cannot connect to ipv4:" + address, 2, std::chrono::seconds(60))) << agent.Log();
  ASSERT_FALSE(agent.Exited()) << agent.Log();
  EXPECT_EQ(StartServer(address), address);
  EXPECT_EQ(agent.WaitExit(std::chrono::seconds(90)), 0) << agent.Log();
  server_->Kill(SIGTERM);

  // Exactly one capture of that device in the database file.
  absl::StatusOr<std::unique_ptr<storage::Store>> store = storage::OpenSqliteStore(dir_ + "/memfleet.db");
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::vector<storage::DeviceSummaryRow>> devices = (*store)->ListDevices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].device.device_id, "late-server");
  EXPECT_EQ((*devices)[0].capture_count, 1u);
  EXPECT_EQ((*devices)[0].last_total_kb, 3014900);  // xring-o1 expected device total
}

}  // namespace
}  // namespace pipeline_scenario
}  // namespace memfleet
