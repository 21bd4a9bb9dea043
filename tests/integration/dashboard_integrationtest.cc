// The browser dashboard end to end, with the real binaries and a real browser: memfleet-server
// --http-listen 127.0.0.1:0 --dashboard, real memfleet-agent --once on three sample capture trees, then
// Debian's headless Chromium loads each page (fleet, each device, a process, the baselines) and its DOM must show the
// stored figures — the sample's expected report, written as the pages write kB — and PNG screenshots go
// to <build>/dashboard-screenshots/ for people to look at. Over HTTPS with tokens, the login flow: no
// cookie is sent to /login, a read token POSTed there gives a Secure HttpOnly session cookie, and the
// cookie opens the pages. The browser tests are skipped (with a message) only when the `chromium`
// package is not installed; scripts/setup-deps installs it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/support/http_get.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_data.h"
#include "tests/support/test_paths.h"
#include "tests/support/wait_for.h"

namespace memfleet {
namespace dashboard_scenario {
namespace {

using nlohmann::json;
using testing::Bin;
using testing::HttpGet;
using testing::HttpOptions;
using testing::HttpReply;
using testing::Subprocess;

// legacy-419's total is null: its pages must write it as the CLI does ("-", muted), never 0.
const std::vector<std::string> kCaptures = {"legacy-419", "mtk-mt6989", "qcom-sm8450"};
const std::string kTls = testing::TestData("tls");
constexpr char kChromium[] = "/usr/bin/chromium";

// "3,567,646": how a reader expects a kB figure written (the test's own grouping, not the page's).
std::string Grouped(int64_t kb) {
  std::string digits = std::to_string(kb);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

std::string FigureText(const json& kb) { return kb.is_null() ? "-" : Grouped(kb.get<int64_t>()); }

// The table cell of a figure as the pages write it: a null one is the CLI's "-" in a muted cell.
std::string FigureCell(const json& kb) {
  return kb.is_null() ? "<td class=\"num unset\">-</td>" : ">" + FigureText(kb) + "</td>";
}

json Expected(const std::string& capture) {
  return json::parse(testing::ReadTestData("captures/" + capture + "/expected.json"));
}

std::string ScreenshotDir() { return testing::GetTestPaths().bin_dir + "/../dashboard-screenshots"; }

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-dashboard-");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    server_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  // memfleet-server with --http-listen 127.0.0.1:0 --dashboard; the port from its "dashboard on" line.
  void StartServer(std::vector<std::string> extra = {}) {
    extra.insert(extra.end(), {"--http-listen", "127.0.0.1:0", "--dashboard"});
    server_ = std::make_unique<testing::ServerProcess>(dir_, extra);
    const std::string line =
        server_->process().WaitForLine("memfleet-server dashboard on http", std::chrono::seconds(30));
    const size_t colon = line.rfind(':');
    ASSERT_NE(colon, std::string::npos) << server_->Log();
    base_url_ = line.substr(line.find("http"));
    base_url_.pop_back();  // the trailing '/'
    port_ = std::atoi(line.substr(colon + 1).c_str());
    ASSERT_GT(port_, 0) << server_->Log();
  }

  void RunAgent(const std::string& capture, const std::vector<std::string>& extra = {}) {
    testing::RunAgentOnce(*server_, dir_, capture, extra);
  }

  // Headless Chromium on `url` with a fresh profile, given `modes` (--dump-dom, --screenshot=FILE, or both:
  // one launch serves both); its output (the DOM for --dump-dom, with Chromium's own log lines) from its
  // log file.
  std::string Chromium(const std::vector<std::string>& modes, const std::string& url, const std::string& name) {
    const std::string profile = dir_ + "/chromium-" + name;
    std::vector<std::string> argv = {kChromium,
                                     "--headless",
                                     "--no-sandbox",
                                     "--disable-gpu",
                                     "--disable-quic",
                                     "--no-first-run",
                                     "--disable-background-networking",
                                     "--disable-component-update",
                                     "--disable-sync",
                                     "--user-data-dir=" + profile,
                                     "--window-size=1400,1000"};
    argv.insert(argv.end(), modes.begin(), modes.end());
    argv.push_back(url);
    Subprocess browser(argv, dir_ + "/chromium-" + name + ".log");
    EXPECT_EQ(browser.WaitExit(std::chrono::seconds(180)), 0) << browser.Log();
    return browser.Log();
  }

  // The page's DOM as Chromium built it, and a screenshot of that same load under the build folder.
  std::string LoadPage(const std::string& path, const std::string& name) {
    const std::string png = ScreenshotDir() + "/" + name + ".png";
    std::remove(png.c_str());
    const std::string dom = Chromium({"--dump-dom", "--screenshot=" + png}, base_url_ + path, name);
    std::ifstream in(png, std::ios::binary);
    std::string header(8, '\0');
    in.read(header.data(), 8);
    EXPECT_EQ(header, std::string("\x89PNG\r\n\x1a\n", 8)) << "no screenshot at " << png;
    in.seekg(0, std::ios::end);
    EXPECT_GT(in.tellg(), 20000) << png << " is too small to show a page";
    return dom;
  }

  std::string dir_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::string base_url_;  // http://127.0.0.1:PORT
  int port_ = 0;
};

TEST_F(DashboardTest, ChromiumShowsTheStoredFiguresOnEveryPage) {
  if (access(kChromium, X_OK) != 0) GTEST_SKIP() << "chromium is not installed (scripts/setup-deps installs it)";
  ASSERT_EQ(std::system(("mkdir -p '" + ScreenshotDir() + "'").c_str()), 0);
  StartServer();
  for (const std::string& c : kCaptures) RunAgent(c);

  const std::string fleet = LoadPage("/?sort=-total", "fleet");
  EXPECT_NE(fleet.find("Fleet: 3 devices"), std::string::npos) << fleet;
  EXPECT_NE(fleet.find("<svg class=\"sparkline\""), std::string::npos) << "each device's week, just captured";
  for (const std::string& c : kCaptures) {
    SCOPED_TRACE(c);
    const json expected = Expected(c);
    ASSERT_EQ(server_->Report(c)["device"]["total_kb"], expected["device"]["total_kb"]) << "stored as expected";
    EXPECT_NE(fleet.find(">" + c + "</a>"), std::string::npos);
    EXPECT_NE(fleet.find(FigureCell(expected["device"]["total_kb"])), std::string::npos);

    const std::string device = LoadPage("/device/" + c, "device-" + c);
    EXPECT_NE(device.find("<h1>Device " + c + "</h1>"), std::string::npos) << device;
    EXPECT_NE(device.find("<h2>Captures (1)</h2>"), std::string::npos);
    for (const char* part : {"total_kb", "kernel_kb", "processes_kb", "static_reserved_kb"}) {
      EXPECT_NE(device.find(FigureCell(expected["device"][part])), std::string::npos) << part;
    }
    for (const auto& [pid, p] : expected["processes"].items()) {
      EXPECT_NE(device.find(">" + pid + "</td>"), std::string::npos) << pid;
      EXPECT_NE(device.find(FigureCell(p["total_kb"])), std::string::npos) << pid;
    }
  }
  // The first fleet row is the biggest total (?sort=-total); legacy-419's unknown total is last.
  ASSERT_GT(Expected("mtk-mt6989")["device"]["total_kb"], Expected("qcom-sm8450")["device"]["total_kb"]);
  EXPECT_LT(fleet.find(">mtk-mt6989</a>"), fleet.find(">qcom-sm8450</a>"));
  EXPECT_LT(fleet.find(">qcom-sm8450</a>"), fleet.find(">legacy-419</a>"));

  const json mm = Expected("qcom-sm8450")["processes"]["13560"];
  ASSERT_EQ(mm["name"], "com.tencent.mm");
  const std::string process = LoadPage("/device/qcom-sm8450/process/com.tencent.mm?days=3650", "process");
  EXPECT_NE(process.find("<polyline class=\"series\""), std::string::npos) << process;
  EXPECT_NE(process.find("latest " + FigureText(mm["total_kb"]) + " kB"), std::string::npos);

  // The baselines page: surfaceflinger's graphics_dma_kb budget is 180000 (tests/data/baselines/
  // sample-lab.json). The sample devices name no model or build, so they make one group, whose worst is
  // mtk-mt6989's 394754 (its expected report), over by 214754.
  Subprocess import({testing::Bin("memfleet"), "baseline", "import", testing::TestData("baselines/sample-lab.json"),
                     "--server", server_->address()},
                    dir_ + "/baseline-import.log");
  ASSERT_EQ(import.WaitExit(std::chrono::seconds(60)), 0) << import.Log();
  const std::string baselines = LoadPage("/baselines", "baselines");
  EXPECT_NE(baselines.find("<h1>Baseline sample lab reference (version 1, scheme 1)</h1>"), std::string::npos)
      << baselines;
  EXPECT_NE(baselines.find("394,754 on <a href=\"/device/mtk-mt6989\">mtk-mt6989</a></td><td class=\"num\">"
                           "214,754</td>"),
            std::string::npos)
      << baselines;
}

// The process page of a process captured with full smaps: its App Summary over time as a stacked chart,
// its latest heaps and App Summary as tables (the sample's expected-heaps.json: surfaceflinger's native
// heap 30805 kB, TOTAL PSS 79341 kB), and any App Summary field charted with ?metric=.
TEST_F(DashboardTest, ChromiumDrawsTheAppSummaryOfAProcessWithHeaps) {
  if (access(kChromium, X_OK) != 0) GTEST_SKIP() << "chromium is not installed (scripts/setup-deps installs it)";
  ASSERT_EQ(std::system(("mkdir -p '" + ScreenshotDir() + "'").c_str()), 0);
  StartServer();
  RunAgent("qcom-sm8450");
  RunAgent("qcom-sm8450");  // two captures: a chart, not a dot
  const json heaps =
      json::parse(testing::ReadTestData("captures/qcom-sm8450/expected-heaps.json"))["processes"]["6225"];
  ASSERT_EQ(heaps["app_summary"]["native_heap_kb"], 30805);
  const std::string path = "/device/qcom-sm8450/process/%2Fsystem%2Fbin%2Fsurfaceflinger";
  const std::string page = LoadPage(path + "?days=3650", "process-heaps");
  EXPECT_NE(page.find("<h2>App Summary over time</h2>"), std::string::npos) << page;
  for (const char* part : {"Java Heap", "Native Heap", "Code", "Stack", "Graphics", "Private Other", "System"}) {
    EXPECT_NE(page.find(std::string("<polygon class=\"layer\" data-series=\"") + part + "\""), std::string::npos)
        << part;
  }
  EXPECT_NE(page.find("2 captures with full smaps"), std::string::npos) << page;
  EXPECT_NE(page.find("<tr data-heap=\"native\"><td>Native Heap</td><td class=\"num\">" +
                      FigureText(heaps["heaps"]["native"]["pss_kb"]) + "</td>"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("<tr data-field=\"total_pss_kb\"><td>TOTAL PSS</td><td class=\"num\">" +
                      FigureText(heaps["app_summary"]["total_pss_kb"]) + "</td>"),
            std::string::npos)
      << page;
  const std::string native = LoadPage(path + "?days=3650&metric=app_summary.native_heap_kb", "process-native-heap");
  EXPECT_NE(native.find("<h2>app_summary.native_heap_kb over time</h2>"), std::string::npos) << native;
  EXPECT_NE(native.find("<polyline class=\"series\""), std::string::npos) << native;
  EXPECT_NE(native.find("latest " + FigureText(heaps["app_summary"]["native_heap_kb"]) + " kB"), std::string::npos)
      << native;
}

// The device page's list of captures marks each as `memfleet report` heads it: a running agent started
// with --label rack=7 stores its first capture (agent labels only), then a sweep labelled run=1234 stores
// another (its sweep, its labels and the agent's).
TEST_F(DashboardTest, ChromiumShowsTheCapturesListsSweepAndLabelMarks) {
  if (access(kChromium, X_OK) != 0) GTEST_SKIP() << "chromium is not installed (scripts/setup-deps installs it)";
  ASSERT_EQ(std::system(("mkdir -p '" + ScreenshotDir() + "'").c_str()), 0);
  StartServer();
  Subprocess agent(
      {Bin("memfleet-agent"), "--server", server_->address(), "--root", testing::TestData("captures/qcom-sm8450/tree"),
       "--device-id", "lab-a", "--interval", "3600", "--spool", dir_ + "/spool-lab-a", "--label", "rack=7"},
      dir_ + "/agent-lab-a.log");
  const auto device = [&] {
    grpc::ClientContext ctx;
    v1::ListDevicesRequest request;
    v1::ListDevicesResponse response;
    if (!server_->query().ListDevices(&ctx, request, &response).ok()) return v1::DeviceSummary();
    for (const v1::DeviceSummary& d : response.devices()) {
      if (d.device_id() == "lab-a") return d;
    }
    return v1::DeviceSummary();
  };
  ASSERT_TRUE(testing::WaitFor([&] { return device().online() && device().capture_count() == 1; },
                               std::chrono::seconds(60), std::chrono::milliseconds(100)))
      << agent.Log() << server_->Log();

  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  v1::SweepRequest sweep;
  sweep.set_deadline_s(90);
  v1::Label* run = sweep.add_labels();
  run->set_key("run");
  run->set_value("1234");
  std::unique_ptr<grpc::ClientReader<v1::SweepProgress>> progress = server_->query().StartSweep(&ctx, sweep);
  std::string sweep_id;
  for (v1::SweepProgress p; progress->Read(&p);) {
    if (p.finished()) sweep_id = p.sweep_id();
  }
  ASSERT_TRUE(progress->Finish().ok());
  ASSERT_FALSE(sweep_id.empty());
  ASSERT_EQ(device().capture_count(), 2u) << server_->Log();

  const std::string page = LoadPage("/device/lab-a", "device-marks");
  EXPECT_NE(page.find("<h2>Captures (2)</h2>"), std::string::npos) << page;
  const size_t swept = page.find("<td class=\"marks\"><span class=\"sweep\">sweep " + sweep_id + "</span>");
  const size_t periodic = page.find("<td class=\"marks\"><span class=\"labels\">agent labels: rack=7</span></td>");
  ASSERT_NE(swept, std::string::npos) << page;
  ASSERT_NE(periodic, std::string::npos) << page;
  EXPECT_LT(swept, periodic) << "newest first";
  const size_t row_end = page.find("</tr>", swept);
  const std::string marks = page.substr(swept, row_end - swept);
  EXPECT_NE(marks.find("<span class=\"labels\">labels: run=1234</span>"), std::string::npos) << marks;
  EXPECT_NE(marks.find("<span class=\"labels\">agent labels: rack=7</span>"), std::string::npos) << marks;
}

TEST_F(DashboardTest, OverHttpsTheBrowserLogsInOnceAndTheCookieOpensThePages) {
  const std::string read_token = testing::AddServerToken(dir_, "read", "browser");
  const std::string agent_token = testing::AddServerToken(dir_, "agent", "qcom", "qcom-sm8450");
  StartServer({"--tls-cert", kTls + "/server.pem", "--tls-key", kTls + "/server.key"});
  std::ofstream(dir_ + "/agent.token") << agent_token;
  RunAgent("qcom-sm8450", {"--ca-cert", kTls + "/ca.pem", "--token-file", dir_ + "/agent.token"});
  const std::string ca = kTls + "/ca.pem";
  const std::string total = FigureText(Expected("qcom-sm8450")["device"]["total_kb"]);

  HttpOptions https;
  https.ca_file = ca;
  HttpReply anonymous = HttpGet("127.0.0.1", port_, "/device/qcom-sm8450", https);
  EXPECT_EQ(anonymous.status, 303) << anonymous.error;
  EXPECT_EQ(anonymous.location, "/login");
  EXPECT_EQ(HttpGet("127.0.0.1", port_, "/", {}).status, 0) << "plain HTTP gets no answer from an HTTPS port";

  HttpOptions login = https;
  login.method = "POST";
  login.body = "token=" + read_token;
  HttpReply in = HttpGet("127.0.0.1", port_, "/login", login);
  ASSERT_EQ(in.status, 303) << in.error << in.body;
  EXPECT_NE(in.set_cookie.find("; HttpOnly"), std::string::npos) << in.set_cookie;
  EXPECT_NE(in.set_cookie.find("; SameSite=Strict"), std::string::npos);
  EXPECT_NE(in.set_cookie.find("; Secure"), std::string::npos) << "under TLS the cookie is Secure";

  HttpOptions with_cookie = https;
  with_cookie.cookie = in.set_cookie.substr(0, in.set_cookie.find(';'));
  HttpReply page = HttpGet("127.0.0.1", port_, "/device/qcom-sm8450", with_cookie);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("<b>total</b></td><td class=\"num\">" + total + "</td>"), std::string::npos);

  HttpOptions bearer = https;
  bearer.bearer = read_token;
  EXPECT_EQ(HttpGet("127.0.0.1", port_, "/", bearer).status, 200) << "a read token as a Bearer header works too";
  bearer.bearer = agent_token;
  EXPECT_EQ(HttpGet("127.0.0.1", port_, "/", bearer).status, 403);
}

}  // namespace
}  // namespace dashboard_scenario
}  // namespace memfleet
