// GET /metrics end to end, with the real binaries: memfleet-server --http-listen on 127.0.0.1, real
// memfleet-agent --once on the sample capture trees, the text fetched over HTTP and HTTPS and compared
// with the stored reports (× 1024); Debian's promtool checks it, and Debian's prometheus scrapes the
// server and answers a device's total from its own HTTP API. The Prometheus tests are skipped only when
// the `prometheus` package is not installed (scripts/setup-deps installs it).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/support/grafana_dashboard.h"
#include "tests/support/http_get.h"
#include "tests/support/load_tree.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_data.h"
#include "tests/support/test_paths.h"

namespace memfleet {
namespace {

using nlohmann::json;
using testing::FindSample;
using testing::HttpGet;
using testing::HttpReply;
using testing::ParsePrometheusText;
using testing::PromSample;
using testing::Subprocess;

// legacy-419's report has null device figures: those must be absent series.
const std::vector<std::string> kCaptures = {"legacy-419", "mtk-mt6989", "qcom-edge"};
const std::vector<std::string> kDeviceParts = {"total", "static_reserved", "kernel", "kernel_cma", "gcma", "processes"};
const std::string kTls = testing::TestData("tls");

using testing::Bin;

// The path of `tool` on $PATH (Debian's prometheus package puts both in /usr/bin); "" when missing.
std::string FindTool(const std::string& tool) {
  for (const std::string dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
    const std::string path = dir + "/" + tool;
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

// HOST and PORT of "http://HOST:PORT/metrics".
struct HttpEndpoint {
  std::string host;
  int port = 0;
};

HttpEndpoint EndpointOf(const std::string& url_line) {
  const size_t scheme = url_line.find("://");
  if (scheme == std::string::npos) return {};
  const std::string rest = url_line.substr(scheme + 3);
  const size_t colon = rest.find(':');
  const size_t slash = rest.find('/');
  if (colon == std::string::npos || slash == std::string::npos) return {};
  return {rest.substr(0, colon), std::atoi(rest.substr(colon + 1, slash - colon - 1).c_str())};
}

std::string UrlEncoded(const std::string& text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '_' || c == '.' || c == '-') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

class MetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-metrics-");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    prometheus_.reset();
    server_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  void StartServer(std::vector<std::string> extra = {}) {
    extra.insert(extra.end(), {"--http-listen", "127.0.0.1:0"});
    server_ = std::make_unique<testing::ServerProcess>(dir_, extra);
    const std::string line = server_->process().WaitForLine("memfleet-server metrics on http", std::chrono::seconds(30));
    http_ = EndpointOf(line);
    ASSERT_GT(http_.port, 0) << server_->Log();
  }

  // memfleet-agent --once on a sample capture tree; extra: TLS and token flags.
  void RunAgent(const std::string& capture, const std::vector<std::string>& extra = {}) {
    testing::RunAgentOnce(*server_, dir_, capture, extra);
  }

  HttpReply Get(const std::string& target, const std::string& bearer = "", const std::string& ca_file = "",
                const std::string& method = "GET") {
    testing::HttpOptions options;
    options.bearer = bearer;
    options.ca_file = ca_file;
    options.method = method;
    return HttpGet(http_.host, http_.port, target, options);
  }

  std::string WriteFile(const std::string& name, const std::string& content) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << content;
    return path;
  }

  // Runs `promtool check metrics` on `text`; its exit code, its output in *output.
  int Promtool(const std::string& text, std::string* output) {
    const std::string input = WriteFile("scrape.txt", text);
    const std::string log = dir_ + "/promtool.log";
    const std::string cmd = FindTool("promtool") + " check metrics < '" + input + "' > '" + log + "' 2>&1";
    const int status = std::system(cmd.c_str());
    std::ifstream in(log);
    *output = std::string(std::istreambuf_iterator<char>(in), {});
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string dir_;
  std::unique_ptr<testing::ServerProcess> server_;
  HttpEndpoint http_;
  std::unique_ptr<Subprocess> prometheus_;
};

TEST_F(MetricsTest, DeviceFiguresOverHttpAreTheStoredReportsInBytes) {
  StartServer();
  for (const std::string& c : kCaptures) RunAgent(c);
  const HttpReply reply = Get("/metrics");
  ASSERT_EQ(reply.status, 200) << reply.error << reply.body;
  EXPECT_EQ(reply.content_type, "text/plain; version=0.0.4; charset=utf-8");
  const std::vector<PromSample> samples = ParsePrometheusText(reply.body);
  int absent = 0;
  for (const std::string& c : kCaptures) {
    const json device = server_->Report(c)["device"];
    for (const std::string& part : kDeviceParts) {
      std::optional<double> v = FindSample(samples, "memfleet_device_memory_bytes", {{"device_id", c}, {"part", part}});
      if (device[part + "_kb"].is_null()) {
        EXPECT_FALSE(v.has_value()) << c << " " << part;
        ++absent;
      } else {
        EXPECT_EQ(v, device[part + "_kb"].get<double>() * 1024) << c << " " << part;
      }
    }
    // The agents ran --once and are gone.
    EXPECT_EQ(FindSample(samples, "memfleet_device_up", {{"device_id", c}}), 0.0) << c;
    EXPECT_TRUE(FindSample(samples, "memfleet_device_last_capture_timestamp_seconds", {{"device_id", c}}).has_value());
  }
  EXPECT_EQ(absent, 3) << "legacy-419: kernel_cma, kernel and total are null";
  EXPECT_EQ(FindSample(samples, "memfleet_captures_stored_total", {}), 3.0);
  EXPECT_EQ(FindSample(samples, "memfleet_captures_rejected_total", {}), 0.0);
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_latency_seconds_count", {}), 3.0);
  // qcom-edge's biggest process, by name, from the stored report.
  const json processes = server_->Report("qcom-edge")["processes"];
  std::string biggest;
  int64_t biggest_kb = -1;
  for (const auto& [pid, p] : processes.items()) {
    if (p["total_kb"].is_number() && p["total_kb"].get<int64_t>() > biggest_kb) {
      biggest_kb = p["total_kb"];
      biggest = p["name"];
    }
  }
  EXPECT_EQ(FindSample(samples, "memfleet_process_memory_bytes",
                       {{"device_id", "qcom-edge"}, {"process", biggest}, {"part", "total"}}),
            static_cast<double>(biggest_kb) * 1024);

  if (FindTool("promtool").empty()) GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  std::string out;
  EXPECT_EQ(Promtool(reply.body, &out), 0) << out;
  EXPECT_EQ(out, "") << "promtool's lint has no complaint";
}

TEST_F(MetricsTest, OverHttpsTheEndpointNeedsAReadToken) {
  const std::string read_token = testing::AddServerToken(dir_, "read", "prometheus");
  const std::string agent_token = testing::AddServerToken(dir_, "agent", "qcom", "qcom-edge");
  StartServer({"--tls-cert", kTls + "/server.pem", "--tls-key", kTls + "/server.key"});
  server_->UseCredentials(grpc::SslCredentials({testing::ReadTestData("tls/ca.pem"), "", ""}));
  server_->UseToken(read_token);
  RunAgent("qcom-edge", {"--ca-cert", kTls + "/ca.pem", "--token-file", WriteFile("agent.token", agent_token)});
  const std::string ca = kTls + "/ca.pem";

  HttpReply none = Get("/metrics", "", ca);
  EXPECT_EQ(none.status, 401) << none.error;
  EXPECT_EQ(none.www_authenticate, "Bearer realm=\"memfleet\"");
  EXPECT_EQ(none.body.find("memfleet_device"), std::string::npos);
  EXPECT_EQ(Get("/metrics", "mft_" + std::string(64, '0'), ca).status, 401);
  EXPECT_EQ(Get("/metrics", agent_token, ca).status, 403) << "an agent token may not read";
  // Plain HTTP to the HTTPS port gets no answer.
  EXPECT_EQ(Get("/metrics", read_token).status, 0);

  HttpReply ok = Get("/metrics", read_token, ca);
  ASSERT_EQ(ok.status, 200) << ok.error << ok.body;
  const json report = server_->Report("qcom-edge");
  EXPECT_EQ(FindSample(ParsePrometheusText(ok.body), "memfleet_device_memory_bytes",
                       {{"device_id", "qcom-edge"}, {"part", "total"}}),
            report["device"]["total_kb"].get<double>() * 1024);
}

// The HTTP address is checked on its own: a loopback gRPC port does not make 0.0.0.0 HTTP safe.
TEST_F(MetricsTest, AnHttpPortBeyondLoopbackNeedsTlsAndTokens) {
  Subprocess server({Bin("memfleet-server"), "--listen", "127.0.0.1:0", "--http-listen", "0.0.0.0:0", "--db",
                     dir_ + "/memfleet.db"},
                    dir_ + "/refused.log");
  EXPECT_EQ(server.WaitExit(std::chrono::seconds(60)), 2) << server.Log();
  EXPECT_NE(server.Log().find("refusing to listen on 0.0.0.0:0"), std::string::npos) << server.Log();
}

// Bytes a client sends on a fresh connection, and the status line it gets back ("" when none).
std::string RawExchange(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) >= 0) {
    char buf[256];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n > 0) answer.assign(buf, static_cast<size_t>(n));
  }
  close(fd);
  return answer.substr(0, answer.find("\r\n"));
}

TEST_F(MetricsTest, BadRequestsGet400AndTheServerGoesOn) {
  StartServer();
  std::string many_fields;
  for (int i = 0; i < 100; ++i) many_fields += "X-" + std::to_string(i) + ": a\r\n";
  const std::vector<std::string> bad = {
      "GARBAGE\r\n\r\n",
      "GET /metrics HTTP/1.1\r\n" + many_fields + "\r\n",                      // over 64 fields
      "GET /metrics HTTP/1.1\r\nX: " + std::string(20000, 'a') + "\r\n\r\n",  // over the header bytes
      "GET /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",              // a body
      "GET /metrics\x01 HTTP/1.1\r\n\r\n",
      "GET http://evil/metrics HTTP/1.1\r\n\r\n",
  };
  for (const std::string& request : bad) {
    EXPECT_EQ(RawExchange(http_.port, request), "HTTP/1.1 400 Bad Request") << request.substr(0, 60);
  }
  EXPECT_EQ(Get("/").status, 404);
  EXPECT_EQ(Get("/metrics", "", "", "POST").status, 405);
  EXPECT_EQ(Get("/metrics", "", "", "HEAD").status, 200);
  EXPECT_EQ(Get("/metrics").status, 200) << "still serving";
}

// Debian's prometheus scrapes the server every second; its query API then gives a device's total, equal
// to the stored report's total_kb × 1024. Prometheus is started with --web.listen-address 127.0.0.1:0 and
// says the port it got in its log ("Listening on" address=127.0.0.1:PORT), so no port is guessed.
TEST_F(MetricsTest, PrometheusScrapesTheServerAndAnswersADevicesTotal) {
  const std::string prometheus = FindTool("prometheus");
  if (prometheus.empty()) GTEST_SKIP() << "prometheus not installed (Debian package prometheus)";
  StartServer();
  RunAgent("qcom-edge");
  const std::string config = WriteFile("prometheus.yml",
                                       "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                                       "scrape_configs:\n  - job_name: memfleet\n    static_configs:\n"
                                       "      - targets: ['127.0.0.1:" + std::to_string(http_.port) + "']\n");
  prometheus_ = std::make_unique<Subprocess>(
      std::vector<std::string>{prometheus, "--config.file=" + config, "--storage.tsdb.path=" + dir_ + "/tsdb",
                               "--web.listen-address=127.0.0.1:0", "--log.level=info"},
      dir_ + "/prometheus.log");
  const std::string line = prometheus_->WaitForLine("msg=\"Listening on\"", std::chrono::seconds(60));
  ASSERT_FALSE(line.empty()) << prometheus_->Log();
  const int port = std::atoi(line.substr(line.rfind(':') + 1).c_str());
  ASSERT_GT(port, 0) << line;

  const std::string query = "/api/v1/query?query=memfleet_device_memory_bytes%7Bdevice_id%3D%22qcom-edge%22%2Cpart%3D%22total%22%7D";
  json result;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (std::chrono::steady_clock::now() < deadline) {
    const HttpReply reply = HttpGet("127.0.0.1", port, query);
    if (reply.status == 200) {
      result = json::parse(reply.body, nullptr, false)["data"]["result"];
      if (result.is_array() && !result.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));  // polling Prometheus, bounded above
  }
  ASSERT_TRUE(result.is_array() && result.size() == 1) << result.dump() << "\n" << prometheus_->Log();
  const json& sample = result[0];
  EXPECT_EQ(sample["metric"]["job"], "memfleet");
  EXPECT_EQ(sample["metric"]["platform"], "qcom");
  const double total_bytes = std::strtod(sample["value"][1].get<std::string>().c_str(), nullptr);
  EXPECT_EQ(total_bytes, server_->Report("qcom-edge")["device"]["total_kb"].get<double>() * 1024);
  // Prometheus saw the scrape succeed.
  const HttpReply up = HttpGet("127.0.0.1", port, "/api/v1/query?query=up%7Bjob%3D%22memfleet%22%7D");
  EXPECT_NE(up.body.find("\"value\":["), std::string::npos) << up.body;
  EXPECT_NE(up.body.find(",\"1\"]"), std::string::npos) << up.body;

  // Every query of the Grafana dashboard (docker/) is PromQL this Prometheus runs, and the device
  // drill-down finds the device. A variable's label_values(SELECTOR, LABEL) is Grafana's: its selector runs.
  for (const testing::DashboardQuery& q : testing::DashboardQueries(testing::LoadMemfleetDashboard())) {
    std::string promql = testing::WithVariables(q.promql, "qcom-edge");
    if (promql.rfind("label_values(", 0) == 0) promql = promql.substr(13, promql.rfind(',') - 13);
    const HttpReply r = HttpGet("127.0.0.1", port, "/api/v1/query?query=" + UrlEncoded(promql));
    EXPECT_EQ(r.status, 200) << q.where << ": " << promql << "\n" << r.body;
    const json answer = json::parse(r.body, nullptr, false);
    EXPECT_EQ(answer.value("status", ""), "success") << q.where << ": " << r.body;
    if (q.where.find("$device: memory by part") != std::string::npos) {
      EXPECT_FALSE(answer["data"]["result"].empty()) << q.where << ": " << promql;
    }
  }
}

}  // namespace
}  // namespace memfleet
