// Baselines end to end, with the real binaries: memfleet-server on 127.0.0.1 over a SQLite file,
// memfleet-agent on each sample capture tree (tests/data/captures/*/tree), one sweep, then
// `memfleet baseline import` and `memfleet baseline check --sweep ID` against
// tests/data/baselines/sample-lab.json. Expected figures are the captures' expected.json values.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "memfleet/v1/query_service.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "server/core/clock.h"
#include "tests/support/load_tree.h"
#include "tests/support/memfleet_cli.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"
#include "tests/support/wait_for.h"

namespace memfleet {
namespace baseline_scenario {
namespace {

using nlohmann::json;
using testing::Subprocess;

const std::vector<std::string> kCaptures = {"generic-noddr", "mtk-mt6989", "qcom-edge", "qcom-sm8450", "xring-o1"};

using testing::Bin;
using testing::ProcessRun;

class BaselineIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-baseline-e2e-");
    ASSERT_FALSE(dir_.empty());
    server_ = std::make_unique<Subprocess>(
        std::vector<std::string>{Bin("memfleet-server"), "--listen", "127.0.0.1:0", "--db", dir_ + "/memfleet.db"},
        dir_ + "/server.log");
    std::string line = server_->WaitForLine("listening on", std::chrono::seconds(60));
    ASSERT_FALSE(line.empty()) << server_->Log();
    address_ = line.substr(line.rfind(' ') + 1);
    cli_ = testing::MemfleetCli(dir_, {"--server", address_}, std::chrono::seconds(60));
    stub_ = v1::QueryService::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
    // Every capture as the same model, so the check groups them together.
    for (const std::string& c : kCaptures) {
      agents_.push_back(std::make_unique<Subprocess>(
          std::vector<std::string>{Bin("memfleet-agent"), "--server", address_, "--root",
                                   testing::TestData("captures/" + c + "/tree"), "--device-id", c, "--interval", "3600",
                                   "--spool", dir_ + "/spool-" + c, "--model", "SIM"},
          dir_ + "/agent-" + c + ".log"));
    }
  }
  void TearDown() override {
    agents_.clear();
    server_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  // A copy of the qcom-sm8450 capture tree as another device on `build`, with `extra_bytes` added to the
  // KGSL unmapped memory of each pid in `grow` (gl_kb grows by extra_bytes / 1024).
  void StartCopy(const std::string& device_id, const std::string& build, const std::vector<int>& grow,
                 int64_t extra_bytes) {
    const std::string root = dir_ + "/tree-" + device_id;
    std::string cmd = "cp -r '" + testing::TestData("captures/qcom-sm8450/tree") + "' '" + root + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    Rewrite(device_id, build, grow, extra_bytes);
    agents_.push_back(std::make_unique<Subprocess>(AgentArgv(device_id), dir_ + "/agent-" + device_id + ".log"));
  }
  // The copy's capture.json names `build`; `extra_bytes` more KGSL unmapped memory for each pid in `grow`.
  void Rewrite(const std::string& device_id, const std::string& build, const std::vector<int>& grow,
               int64_t extra_bytes) {
    const std::string root = dir_ + "/tree-" + device_id;
    std::ofstream(root + "/capture.json", std::ios::trunc)
        << R"({"format": 1, "device_id": ")" << device_id
        << R"(", "captured_at": "2026-11-30T08:00:00Z", "page_size": 4096, "ddr_size_kb": 16777216, )"
        << R"("model": "REG", "build_fingerprint": ")" << build << "\"}\n";
    for (int pid : grow) {
      const std::string node = root + "/sys/class/kgsl/kgsl/proc/" + std::to_string(pid) + "/gpumem_unmapped";
      int64_t bytes = std::stoll(testing::ReadFileForTest(node));
      std::ofstream(node, std::ios::trunc) << (bytes + extra_bytes) << "\n";
    }
  }
  std::vector<std::string> AgentArgv(const std::string& device_id) {
    return {Bin("memfleet-agent"),
            "--server",
            address_,
            "--root",
            dir_ + "/tree-" + device_id,
            "--device-id",
            device_id,
            "--interval",
            "3600",
            "--spool",
            dir_ + "/spool-" + device_id};
  }

  // The server's device list; nullopt when the call failed (the server may still be starting).
  std::optional<v1::ListDevicesResponse> ListDevices() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListDevicesResponse resp;
    if (!stub_->ListDevices(&ctx, v1::ListDevicesRequest(), &resp).ok()) return std::nullopt;
    return resp;
  }

  // Polls until each of `device_ids` is online with `build` as its current build (its agent's Hello).
  bool WaitOnBuild(const std::vector<std::string>& device_ids, const std::string& build, std::chrono::seconds timeout) {
    return testing::WaitFor(
        [&] {
          std::optional<v1::ListDevicesResponse> resp = ListDevices();
          if (!resp) return false;
          size_t ready = 0;
          for (const v1::DeviceSummary& d : resp->devices()) {
            for (const std::string& id : device_ids) {
              if (d.device_id() == id && d.online() && d.build_fingerprint() == build) ++ready;
            }
          }
          return ready == device_ids.size();
        },
        timeout, /*every=*/std::chrono::milliseconds(200));
  }

  // Until at least `n` devices are online (`at_most`: until at most `n` are).
  bool WaitOnline(size_t n, std::chrono::seconds timeout, bool at_most = false) {
    return testing::WaitFor(
        [&] {
          std::optional<v1::ListDevicesResponse> resp = ListDevices();
          if (!resp) return false;
          size_t online = 0;
          for (const v1::DeviceSummary& d : resp->devices()) online += d.online() ? 1 : 0;
          return at_most ? online <= n : online >= n;
        },
        timeout, std::chrono::milliseconds(200));
  }

  // A sweep over every device; returns its id and expects every device stored.
  std::string Sweep() { return Sweep({}, kCaptures.size() + extra_devices_); }
  // A sweep over the devices matching every `where` term; expects `expected_stored` of them stored.
  std::string Sweep(const std::vector<std::string>& where, size_t expected_stored) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    v1::SweepRequest req;
    req.set_deadline_s(90);
    for (const std::string& term : where) req.mutable_selector()->add_where(term);
    auto reader = stub_->StartSweep(&ctx, req);
    std::string sweep_id;
    size_t stored = 0;
    v1::SweepProgress p;
    while (reader->Read(&p)) {
      if (!p.sweep_id().empty()) sweep_id = p.sweep_id();
      if (!p.device_id().empty() && p.state() == v1::SweepProgress::STORED) ++stored;
    }
    grpc::Status s = reader->Finish();
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(stored, expected_stored);
    return sweep_id;
  }

  std::string WriteFile(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  size_t extra_devices_ = 0;  // StartCopy devices, also in every sweep
  std::string dir_;
  std::string address_;
  testing::MemfleetCli cli_;
  std::unique_ptr<Subprocess> server_;
  std::vector<std::unique_ptr<Subprocess>> agents_;
  std::unique_ptr<v1::QueryService::Stub> stub_;
};

const json* FindRow(const json& check, const std::string& process, const std::string& budget,
                    const std::string& department = "") {
  for (const json& row : check["rows"]) {
    bool is_process = row["process"].is_string();
    if (process.empty() ? (!is_process && row["department"] == department)
                        : (is_process && row["process"] == process)) {
      if (row["budget"] == budget) return &row;
    }
  }
  return nullptr;
}

TEST_F(BaselineIntegrationTest, ImportThenCheckASweepThroughTheCli) {
  ASSERT_TRUE(WaitOnline(kCaptures.size(), std::chrono::seconds(60))) << server_->Log();
  std::string sweep_id = Sweep();
  ASSERT_FALSE(sweep_id.empty());

  // Nothing imported yet: not found (4), saying what to run.
  ProcessRun none = cli_.Run({"baseline", "check", "--sweep", sweep_id});
  EXPECT_EQ(none.exit_code, 4) << none.output;
  EXPECT_NE(none.output.find("baseline import"), std::string::npos) << none.output;

  ProcessRun import = cli_.Run({"baseline", "import", testing::TestData("baselines/sample-lab.json")});
  ASSERT_EQ(import.exit_code, 0) << import.output;
  EXPECT_NE(import.output.find("as baseline version 1"), std::string::npos) << import.output;

  // Scheme 1 over the sweep: over budget, exit 3.
  ProcessRun check = cli_.Run({"baseline", "check", "--sweep", sweep_id, "--json"});
  ASSERT_EQ(check.exit_code, 3) << check.output;
  json r = json::parse(check.output);
  EXPECT_EQ(r["baseline_version"], 1);
  EXPECT_EQ(r["scheme"], 1);
  EXPECT_EQ(r["devices"], 5);
  EXPECT_TRUE(r["any_over"].get<bool>());
  // surfaceflinger graphics_dma_kb: 47347 generic, 394754 mtk, 82185 qcom-edge, 182161 sm8450, 65051 xring
  // against 180000: over on 2 of 5, the worst mtk-mt6989 by 214754.
  const json* sf = FindRow(r, "/system/bin/surfaceflinger", "graphics_dma_kb");
  ASSERT_NE(sf, nullptr) << check.output;
  EXPECT_EQ((*sf)["model"], "SIM");
  EXPECT_EQ((*sf)["devices_checked"], 5);
  EXPECT_EQ((*sf)["devices_over"], 2);
  EXPECT_EQ((*sf)["worst_device"], "mtk-mt6989");
  EXPECT_EQ((*sf)["worst_value_kb"], 394754);
  EXPECT_EQ((*sf)["worst_over_kb"], 214754);
  // systemui (unmet SR) against its 170000 target total: total_kb 87479 generic, 364155 mtk, 176249 sm8450,
  // 220168 xring (not on qcom-edge): over on 3 of 4, the worst mtk by 194155.
  const json* ui = FindRow(r, "com.android.systemui", "target_total_kb");
  ASSERT_NE(ui, nullptr);
  EXPECT_EQ((*ui)["devices_checked"], 4);
  EXPECT_EQ((*ui)["devices_over"], 3);
  EXPECT_EQ((*ui)["worst_over_kb"], 194155);
  EXPECT_EQ(FindRow(r, "", "target_total_kb", "Framework"), nullptr);

  // Scheme 2: the Framework department as a whole against 500000. mtk: system_server 217760 + systemui
  // 364155 + miui.home 442826 = 1024741, the worst, over by 524741.
  ProcessRun check2 = cli_.Run({"baseline", "check", "--scheme", "2", "--sweep", sweep_id, "--json"});
  ASSERT_EQ(check2.exit_code, 3) << check2.output;
  json r2 = json::parse(check2.output);
  const json* dept = FindRow(r2, "", "target_total_kb", "Framework");
  ASSERT_NE(dept, nullptr) << check2.output;
  EXPECT_EQ((*dept)["worst_device"], "mtk-mt6989");
  EXPECT_EQ((*dept)["worst_value_kb"], 1024741);
  EXPECT_EQ((*dept)["worst_over_kb"], 524741);
  EXPECT_EQ(FindRow(r2, "com.android.systemui", "target_total_kb"), nullptr);

  // The table form names the over-budget rows; --where narrows the devices.
  ProcessRun table = cli_.Run({"baseline", "check", "--since", "3650d", "--where", "device_id=qcom-sm8450"});
  EXPECT_EQ(table.exit_code, 3) << table.output;
  EXPECT_NE(table.output.find("1 devices checked"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("/system/bin/surfaceflinger"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("+2,161"), std::string::npos) << table.output;
  ProcessRun nobody = cli_.Run({"baseline", "check", "--sweep", sweep_id, "--where", "model=NOPE"});
  EXPECT_EQ(nobody.exit_code, 4) << nobody.output;

  // A baseline every device meets: version 2, exit 0.
  json generous = json::parse(testing::ReadFileForTest(testing::TestData("baselines/sample-lab.json")));
  for (json& d : generous["departments"]) {
    if (d.contains("target_total_kb")) d["target_total_kb"] = 9000000;
    for (json& p : d["processes"]) {
      for (const char* budget : {"graphics_dma_kb", "non_graphics_kb", "target_total_kb"}) {
        if (p.contains(budget)) p[budget] = 9000000;
      }
    }
  }
  ProcessRun import2 = cli_.Run({"baseline", "import", WriteFile("generous.json", generous.dump(2))});
  ASSERT_EQ(import2.exit_code, 0) << import2.output;
  ProcessRun ok = cli_.Run({"baseline", "check", "--sweep", sweep_id, "--scheme", "2"});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("all within budget"), std::string::npos) << ok.output;
  // The first version is still there and still over.
  EXPECT_EQ(cli_.Run({"baseline", "check", "--sweep", sweep_id, "--version", "1"}).exit_code, 3);

  ProcessRun show = cli_.Run({"baseline", "show", "--version", "1"});
  EXPECT_EQ(show.exit_code, 0) << show.output;
  EXPECT_NE(show.output.find("version 1 of 2"), std::string::npos) << show.output;
  EXPECT_NE(show.output.find("com.android.systemui"), std::string::npos) << show.output;

  // A bad file: usage error naming the problem, nothing stored.
  ProcessRun bad = cli_.Run({"baseline", "import", WriteFile("bad.json", R"({"format": 1, "name": "x", "departments": [
      {"name": "D", "status": "met", "processes": [{"name": "p", "graphics_dma_kb": -3, "non_graphics_kb": 1}]}]})")});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("is negative"), std::string::npos) << bad.output;
  EXPECT_NE(cli_.Run({"baseline", "show"}).output.find("version 2 of 2"), std::string::npos);

  // The fleet table against the baseline (version 2: every budget 9000000).
  ProcessRun fleet = cli_.Run({"fleet", "--baseline", "--metric", "process.graphics_dma_kb", "--process",
                               "/system/bin/surfaceflinger", "--json"});
  ASSERT_EQ(fleet.exit_code, 0) << fleet.output;
  json f = json::parse(fleet.output);
  EXPECT_EQ(f["budget_kb"], 9000000);
  ASSERT_EQ(f["rows"].size(), 5u);
  for (const json& row : f["rows"]) {
    EXPECT_TRUE(row["applies"].get<bool>()) << row.dump();
    if (row["device_id"] == "mtk-mt6989") {
      EXPECT_EQ(row["over_kb"], 394754 - 9000000);
    }
  }

  // A baseline for other builds: the same models, but no sample device's build matches, so no row gets
  // a budget (as `baseline check` would count them not applicable).
  json other_builds = generous;
  other_builds["applies_to"] = {{"builds", {"UQ1A.*"}}};
  ASSERT_EQ(cli_.Run({"baseline", "import", WriteFile("other-builds.json", other_builds.dump(2))}).exit_code, 0);
  ProcessRun fleet3 = cli_.Run({"fleet", "--baseline", "--metric", "process.graphics_dma_kb", "--process",
                                "/system/bin/surfaceflinger", "--json"});
  ASSERT_EQ(fleet3.exit_code, 0) << fleet3.output;
  json f3 = json::parse(fleet3.output);
  ASSERT_EQ(f3["rows"].size(), 5u);
  for (const json& row : f3["rows"]) {
    EXPECT_FALSE(row["applies"].get<bool>()) << row.dump();
    EXPECT_TRUE(row["budget_kb"].is_null()) << row.dump();
    EXPECT_TRUE(row["over_kb"].is_null()) << row.dump();
  }
}

// A gate that cannot check is not a pass (README "Exit codes"): budgets on names no report has (the short
// name `process` accepts, a typo) are warned about at import with the name meant, listed by `check` in its
// text and JSON, and fail it with the partial code 5 unless --allow-unchecked; `sweep` exits by what the
// devices stored.
TEST_F(BaselineIntegrationTest, BudgetsThatMatchNoProcessFailTheCheck) {
  ASSERT_TRUE(WaitOnline(kCaptures.size(), std::chrono::seconds(60))) << server_->Log();
  ProcessRun swept = cli_.Run({"sweep"});
  EXPECT_EQ(swept.exit_code, 0) << swept.output;  // all 5 stored
  std::string sweep_id = Sweep();
  ASSERT_FALSE(sweep_id.empty());

  json typos = json::parse(R"({"format": 1, "name": "typos", "departments": [{"name": "Display", "status": "met",
      "processes": [
        {"name": "/system/bin/surfaceflinger", "graphics_dma_kb": 9000000, "non_graphics_kb": 9000000},
        {"name": "systemui", "graphics_dma_kb": 9000000, "non_graphics_kb": 9000000},
        {"name": "com.android.systemuii", "graphics_dma_kb": 9000000, "non_graphics_kb": 9000000}]}]})");
  ProcessRun import = cli_.Run({"baseline", "import", WriteFile("typos.json", typos.dump(2))});
  ASSERT_EQ(import.exit_code, 0) << import.output;
  EXPECT_NE(import.output.find("warning: \"systemui\" (Display) is no process name of the stored reports; they name "
                               "it \"com.android.systemui\""),
            std::string::npos)
      << import.output;
  EXPECT_NE(import.output.find("warning: \"com.android.systemuii\" (Display): no process named "
                               "\"com.android.systemuii\" in the stored reports"),
            std::string::npos)
      << import.output;
  EXPECT_NE(import.output.find("closest: \"com.android.systemui\""), std::string::npos) << import.output;

  // 2 of 6 budgets checked on no device per process: 4 budgets unchecked, 2 within.
  ProcessRun check = cli_.Run({"baseline", "check", "--sweep", sweep_id});
  EXPECT_EQ(check.exit_code, 5) << check.output;
  EXPECT_NE(check.output.find("2 budgets checked, all within, 4 not checked"), std::string::npos) << check.output;
  EXPECT_EQ(check.output.find("all within budget"), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("systemui graphics_dma_kb: no process named \"systemui\" in the 5 reports checked; "
                              "the baseline names processes in full: \"com.android.systemui\""),
            std::string::npos)
      << check.output;
  EXPECT_NE(check.output.find("4 budgets could not be checked; --allow-unchecked to pass anyway"), std::string::npos)
      << check.output;

  ProcessRun as_json = cli_.Run({"baseline", "check", "--sweep", sweep_id, "--json"});
  EXPECT_EQ(as_json.exit_code, 5) << as_json.output;
  // The JSON on stdout; stderr's one line (no braces) may come before it in the shared log.
  const size_t open = as_json.output.find('{');
  ASSERT_NE(open, std::string::npos) << as_json.output;
  json r = json::parse(as_json.output.substr(open, as_json.output.rfind('}') + 1 - open));
  ASSERT_EQ(r["unchecked"].size(), 4u) << as_json.output;
  EXPECT_EQ(r["unchecked"][0]["process"], "systemui");
  EXPECT_EQ(r["unchecked"][0]["budget"], "graphics_dma_kb");
  EXPECT_EQ(r["unchecked"][2]["process"], "com.android.systemuii");
  EXPECT_EQ(r["rows"].size(), 2u);

  ProcessRun allowed = cli_.Run({"baseline", "check", "--sweep", sweep_id, "--allow-unchecked"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
  EXPECT_NE(allowed.output.find("4 not checked"), std::string::npos) << allowed.output;  // still said

  // No budget checkable at all: nothing to check (4).
  json none = json::parse(R"({"format": 1, "name": "none", "departments": [{"name": "D", "status": "met",
      "processes": [{"name": "no.such.process", "graphics_dma_kb": 1, "non_graphics_kb": 1}]}]})");
  ASSERT_EQ(cli_.Run({"baseline", "import", WriteFile("none.json", none.dump(2))}).exit_code, 0);
  ProcessRun nothing = cli_.Run({"baseline", "check", "--sweep", sweep_id});
  EXPECT_EQ(nothing.exit_code, 4) << nothing.output;

  // A sweep where some devices store nothing is partial (5); where none do, nothing was checked (4).
  agents_[0].reset();  // generic-noddr and mtk-mt6989 go offline
  agents_[1].reset();
  ASSERT_TRUE(WaitOnline(kCaptures.size() - 2, std::chrono::seconds(30), /*at_most=*/true));
  ProcessRun partial = cli_.Run({"sweep", "--deadline", "30"});
  EXPECT_EQ(partial.exit_code, 5) << partial.output;
  EXPECT_NE(partial.output.find("memfleet sweep: 3 of 5 devices stored a capture"), std::string::npos)
      << partial.output;
  ProcessRun offline = cli_.Run({"sweep", "--deadline", "30", "--where", "device_id=" + kCaptures[0]});
  EXPECT_EQ(offline.exit_code, 4) << offline.output;
  EXPECT_NE(offline.output.find("memfleet sweep: 0 of 1 devices stored a capture"), std::string::npos)
      << offline.output;
}

TEST_F(BaselineIntegrationTest, RegressionsAcrossBuildsThroughTheCli) {
  // Model REG: six copies of qcom-sm8450, three on build A and three on build B. On B, surfaceflinger
  // (pid 6225) has 100 MiB more unmapped KGSL memory on every device; system_server (pid 5240) on one
  // device only.
  constexpr int64_t kExtra = 100 << 20;  // 104857600 bytes = 102400 kB of gl_kb
  for (int i = 1; i <= 3; ++i) StartCopy("reg-a" + std::to_string(i), "A", {}, 0);
  StartCopy("reg-b1", "B", {6225, 5240}, kExtra);
  StartCopy("reg-b2", "B", {6225}, kExtra);
  StartCopy("reg-b3", "B", {6225}, kExtra);
  extra_devices_ = 6;
  ASSERT_TRUE(WaitOnline(kCaptures.size() + extra_devices_, std::chrono::seconds(60))) << server_->Log();
  ASSERT_FALSE(Sweep().empty());

  // surfaceflinger graphics_dma_kb: 182161 on every A device, 182161 + 102400 = 284561 on every B device.
  // No device-to-device spread: the threshold is the 1024 kB floor; +102400 is flagged (exit 3).
  ProcessRun sf = cli_.Run({"regressions", "--process", "/system/bin/surfaceflinger", "--build", "A", "--vs", "B",
                            "--model", "REG", "--json"});
  ASSERT_EQ(sf.exit_code, 3) << sf.output;
  json r = json::parse(sf.output);
  ASSERT_EQ(r["models"].size(), 1u);
  EXPECT_EQ(r["models"][0]["model"], "REG");
  bool seen = false;
  for (const json& f : r["models"][0]["figures"]) {
    if (f["figure"] == "graphics_dma_kb" || f["figure"] == "gl_kb" || f["figure"] == "total_kb") {
      EXPECT_TRUE(f["flagged"].get<bool>()) << f.dump();
      EXPECT_EQ(f["delta_kb"], 102400.0) << f.dump();
    }
    if (f["figure"] == "graphics_dma_kb") {
      seen = true;
      EXPECT_EQ(f["median_a_kb"], 182161.0);
      EXPECT_EQ(f["median_b_kb"], 284561.0);
      EXPECT_EQ(f["devices_a"], 3);
      EXPECT_EQ(f["devices_b"], 3);
    }
    if (f["figure"] == "non_graphics_kb") {
      EXPECT_FALSE(f["flagged"].get<bool>());
    }
  }
  EXPECT_TRUE(seen);

  // system_server graphics_dma_kb: 156576 on five devices, 258976 on reg-b1 alone. B's median stays
  // 156576: one device is noise (exit 0), though B's p90 (3rd of 3) shows it.
  ProcessRun ss =
      cli_.Run({"regressions", "--process", "system_server", "--build", "A", "--vs", "B", "--model", "REG", "--json"});
  ASSERT_EQ(ss.exit_code, 0) << ss.output;
  json r2 = json::parse(ss.output);
  for (const json& f : r2["models"][0]["figures"]) {
    EXPECT_FALSE(f["flagged"].get<bool>()) << f.dump();
    if (f["figure"] == "graphics_dma_kb") {
      EXPECT_EQ(f["delta_kb"], 0.0);
      EXPECT_EQ(f["p90_b_kb"], 258976);
    }
  }
  // Without --build/--vs the newest build is compared with the one before it, each by its devices' newest
  // report. One sweep stamps both builds within the same milliseconds in any order, so B's devices are
  // captured once more, after it, to make B the newer. (The sample devices have no build, so they are left
  // out by --model.)
  ASSERT_FALSE(Sweep({"build=B"}, 3).empty());
  ProcessRun table = cli_.Run({"regressions", "--process", "/system/bin/surfaceflinger", "--model", "REG"});
  EXPECT_EQ(table.exit_code, 3) << table.output;
  EXPECT_NE(table.output.find("REGRESSION"), std::string::npos) << table.output;
}

TEST_F(BaselineIntegrationTest, RegressionsAfterTheFleetUpgraded) {
  // Model REG: three copies of qcom-sm8450 captured on build A; then each is upgraded to B (its
  // capture.json names B and its agent restarts, so every device's current build is B) with 100 MiB more
  // unmapped KGSL memory for surfaceflinger (pid 6225), and captured again. A's samples are the devices'
  // A captures: comparing by the devices' current build would have found no device on A.
  constexpr int64_t kExtra = 100 << 20;  // 104857600 bytes = 102400 kB of gl_kb
  const std::vector<std::string> reg = {"reg-1", "reg-2", "reg-3"};
  const size_t first = agents_.size();
  for (const std::string& id : reg) StartCopy(id, "A", {}, 0);
  extra_devices_ = reg.size();
  ASSERT_TRUE(WaitOnBuild(reg, "A", std::chrono::seconds(60))) << server_->Log();
  ASSERT_TRUE(WaitOnline(kCaptures.size() + extra_devices_, std::chrono::seconds(60))) << server_->Log();
  ASSERT_FALSE(Sweep().empty());
  // Every A capture was stored, so stamped, before this (times are in milliseconds); every B capture is
  // taken by an agent started after it.
  const std::string after_a = server::NowRfc3339();

  for (size_t i = 0; i < reg.size(); ++i) {
    agents_[first + i].reset();
    Rewrite(reg[i], "B", {6225}, kExtra);
    agents_[first + i] = std::make_unique<Subprocess>(AgentArgv(reg[i]), dir_ + "/agent-" + reg[i] + "-b.log");
  }
  ASSERT_TRUE(WaitOnBuild(reg, "B", std::chrono::seconds(60))) << server_->Log();
  ASSERT_TRUE(WaitOnline(kCaptures.size() + extra_devices_, std::chrono::seconds(60))) << server_->Log();
  ASSERT_FALSE(Sweep().empty());

  // surfaceflinger graphics_dma_kb: 182161 on each device's A capture, 182161 + 102400 = 284561 on its B
  // capture; three devices on each build, no spread, so the 1024 kB floor is the threshold: flagged.
  ProcessRun sf = cli_.Run({"regressions", "--process", "/system/bin/surfaceflinger", "--build", "A", "--vs", "B",
                            "--model", "REG", "--json"});
  ASSERT_EQ(sf.exit_code, 3) << sf.output;
  json r = json::parse(sf.output);
  ASSERT_EQ(r["models"].size(), 1u) << sf.output;
  bool seen = false;
  for (const json& f : r["models"][0]["figures"]) {
    if (f["figure"] == "graphics_dma_kb") {
      seen = true;
      EXPECT_TRUE(f["flagged"].get<bool>()) << f.dump();
      EXPECT_EQ(f["devices_a"], 3) << f.dump();
      EXPECT_EQ(f["devices_b"], 3) << f.dump();
      EXPECT_EQ(f["median_a_kb"], 182161.0);
      EXPECT_EQ(f["median_b_kb"], 284561.0);
      EXPECT_EQ(f["delta_kb"], 102400.0);
    }
    if (f["figure"] == "non_graphics_kb") {
      EXPECT_FALSE(f["flagged"].get<bool>()) << f.dump();
    }
  }
  EXPECT_TRUE(seen) << sf.output;

  // --since after the A captures: B's three devices remain and A has none, so nothing can be compared
  // (and nothing is flagged: exit 0) — the window, not the builds, decides which reports count.
  ProcessRun recent = cli_.Run({"regressions", "--process", "/system/bin/surfaceflinger", "--build", "A", "--vs", "B",
                                "--model", "REG", "--since", after_a, "--json"});
  ASSERT_EQ(recent.exit_code, 0) << recent.output;
  json rr = json::parse(recent.output);
  ASSERT_EQ(rr["models"].size(), 1u) << recent.output;
  for (const json& f : rr["models"][0]["figures"]) {
    EXPECT_FALSE(f["flagged"].get<bool>()) << f.dump();
    if (f["figure"] == "graphics_dma_kb") {
      EXPECT_EQ(f["devices_a"], 0) << f.dump();
      EXPECT_EQ(f["devices_b"], 3) << f.dump();
    }
  }
  ProcessRun bad_since = cli_.Run({"regressions", "--process", "system_server", "--since", "yesterday"});
  EXPECT_EQ(bad_since.exit_code, 2) << bad_since.output;

  // system_server did not change with the upgrade: the same figures on A and B, delta 0, noise (exit 0).
  ProcessRun ss =
      cli_.Run({"regressions", "--process", "system_server", "--build", "A", "--vs", "B", "--model", "REG", "--json"});
  ASSERT_EQ(ss.exit_code, 0) << ss.output;
  json r2 = json::parse(ss.output);
  ASSERT_EQ(r2["models"].size(), 1u) << ss.output;
  for (const json& f : r2["models"][0]["figures"]) {
    EXPECT_FALSE(f["flagged"].get<bool>()) << f.dump();
    if (f["figure"] == "graphics_dma_kb") {
      EXPECT_EQ(f["devices_a"], 3);
      EXPECT_EQ(f["devices_b"], 3);
      EXPECT_EQ(f["median_a_kb"], 156576.0);
      EXPECT_EQ(f["delta_kb"], 0.0);
    }
  }
  // Without --build/--vs: B (the newest capture) against A.
  ProcessRun table = cli_.Run({"regressions", "--process", "/system/bin/surfaceflinger", "--model", "REG", "--json"});
  ASSERT_EQ(table.exit_code, 3) << table.output;
  json r3 = json::parse(table.output);
  EXPECT_EQ(r3["build_a"], "A") << table.output;
  EXPECT_EQ(r3["build_b"], "B") << table.output;
}

}  // namespace
}  // namespace baseline_scenario
}  // namespace memfleet
