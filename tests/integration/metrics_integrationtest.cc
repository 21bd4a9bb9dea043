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
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/support/device_memory_series.h"
#include "tests/support/grafana_dashboard.h"
#include "tests/support/http_get.h"
#include "tests/support/load_tree.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_data.h"
#include "tests/support/test_paths.h"
#include "tests/support/wait_for.h"

namespace memfleet {
namespace metrics_scenario {
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
    const std::string line =
        server_->process().WaitForLine("memfleet-server metrics on http", std::chrono::seconds(30));
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
    for (const testing::DeviceMemorySeries& series : testing::kDeviceMemorySeries) {
      std::optional<double> v = FindSample(samples, series.name, series.Labels(c));
      if (device[series.field].is_null()) {
        EXPECT_FALSE(v.has_value()) << c << " " << series.field;
        ++absent;
      } else {
        EXPECT_EQ(v, device[series.field].get<double>() * 1024) << c << " " << series.field;
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
  EXPECT_EQ(FindSample(ParsePrometheusText(ok.body), "memfleet_device_total_bytes", {{"device_id", "qcom-edge"}}),
            report["device"]["total_kb"].get<double>() * 1024);
}

// The HTTP address is checked on its own: a loopback gRPC port does not make 0.0.0.0 HTTP safe.
TEST_F(MetricsTest, AnHttpPortBeyondLoopbackNeedsTlsAndTokens) {
  Subprocess server(
      {Bin("memfleet-server"), "--listen", "127.0.0.1:0", "--http-listen", "0.0.0.0:0", "--db", dir_ + "/memfleet.db"},
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
      "GET /metrics HTTP/1.1\r\n" + many_fields + "\r\n",                     // over 64 fields
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

// The captures Prometheus scrapes: two whose parts add up to their total, and legacy-419, whose kernel_kb
// (so its total_kb) is null.
const std::vector<std::string> kScraped = {"qcom-edge", "qcom-sm8450", "legacy-419"};

// A device figure of its capture's expected report (tests/data/captures/*/expected.json), in bytes;
// nullopt when null.
std::optional<double> ExpectedBytes(const std::string& capture, const std::string& field) {
  const json kb = json::parse(testing::ReadTestData("captures/" + capture + "/expected.json"))["device"][field];
  if (kb.is_null()) return std::nullopt;
  return kb.get<double>() * 1024;
}

// The PromQL of the "Queries" section of docs/metrics.md: the lines of its ```promql blocks that are not
// comments.
std::vector<std::string> DocumentedQueries() {
  const std::string doc = testing::ReadTestData("../../docs/metrics.md");
  const size_t section = doc.find("\n## Queries\n");
  if (section == std::string::npos) return {};
  const size_t next = doc.find("\n## ", section + 1);
  std::istringstream in(doc.substr(section, next == std::string::npos ? std::string::npos : next - section));
  std::vector<std::string> queries;
  bool in_block = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) {
      in_block = line == "```promql";
      continue;
    }
    if (in_block && !line.empty() && line[0] != '#') queries.push_back(line);
  }
  return queries;
}

class PrometheusTest : public MetricsTest {
 protected:
  // Starts Debian's prometheus scraping the server every second, with --web.listen-address 127.0.0.1:0:
  // it says the port it got in its log ("Listening on" address=127.0.0.1:PORT), so no port is guessed.
  void StartPrometheus(const std::string& prometheus) {
    const std::string config = WriteFile("prometheus.yml",
                                         "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                                         "scrape_configs:\n  - job_name: memfleet\n    static_configs:\n"
                                         "      - targets: ['127.0.0.1:" +
                                             std::to_string(http_.port) + "']\n");
    prometheus_ = std::make_unique<Subprocess>(
        std::vector<std::string>{prometheus, "--config.file=" + config, "--storage.tsdb.path=" + dir_ + "/tsdb",
                                 "--web.listen-address=127.0.0.1:0", "--log.level=info"},
        dir_ + "/prometheus.log");
    const std::string line = prometheus_->WaitForLine("msg=\"Listening on\"", std::chrono::seconds(60));
    ASSERT_FALSE(line.empty()) << prometheus_->Log();
    prometheus_port_ = std::atoi(line.substr(line.rfind(':') + 1).c_str());
    ASSERT_GT(prometheus_port_, 0) << line;
  }

  // The result vector of an instant query through Prometheus' HTTP API; a null json when it failed.
  json Query(const std::string& promql) {
    const HttpReply reply = HttpGet("127.0.0.1", prometheus_port_, "/api/v1/query?query=" + UrlEncoded(promql));
    const json answer = json::parse(reply.body, nullptr, false);
    if (reply.status != 200 || answer.is_discarded() || answer.value("status", "") != "success") return nullptr;
    return answer["data"]["result"];
  }

  // The first result with `size` samples, polled until Prometheus has scraped (at most 90 s).
  json QueryUntil(const std::string& promql, size_t size) {
    json result;
    testing::WaitFor(
        [&] {
          result = Query(promql);
          return result.is_array() && result.size() == size;
        },
        std::chrono::seconds(90), std::chrono::milliseconds(250));
    return result;
  }

  int prometheus_port_ = 0;
};

// A result vector's values by device_id.
std::map<std::string, double> ByDevice(const json& result) {
  std::map<std::string, double> values;
  if (!result.is_array()) return values;
  for (const json& sample : result) {
    values[sample["metric"].value("device_id", "")] =
        std::strtod(sample["value"][1].get<std::string>().c_str(), nullptr);
  }
  return values;
}

// Prometheus' own answer to a device's total is the stored report's total_kb × 1024, and its job sees
// the scrape succeed.
TEST_F(PrometheusTest, PrometheusScrapesTheServerAndAnswersADevicesTotal) {
  const std::string prometheus = FindTool("prometheus");
  if (prometheus.empty()) GTEST_SKIP() << "prometheus not installed (Debian package prometheus)";
  StartServer();
  RunAgent("qcom-edge");
  StartPrometheus(prometheus);
  const json result = QueryUntil("memfleet_device_total_bytes{device_id=\"qcom-edge\"}", 1);
  ASSERT_TRUE(result.is_array() && result.size() == 1) << result.dump() << "\n" << prometheus_->Log();
  const json& sample = result[0];
  EXPECT_EQ(sample["metric"]["job"], "memfleet");
  EXPECT_EQ(sample["metric"]["platform"], "qcom");
  const double total_bytes = std::strtod(sample["value"][1].get<std::string>().c_str(), nullptr);
  EXPECT_EQ(total_bytes, server_->Report("qcom-edge")["device"]["total_kb"].get<double>() * 1024);
  // Prometheus saw the scrape succeed.
  const HttpReply up = HttpGet("127.0.0.1", prometheus_port_, "/api/v1/query?query=up%7Bjob%3D%22memfleet%22%7D");
  EXPECT_NE(up.body.find("\"value\":["), std::string::npos) << up.body;
  EXPECT_NE(up.body.find(",\"1\"]"), std::string::npos) << up.body;

  // Every query of the Grafana dashboard (docker/) is PromQL this Prometheus runs, and the device
  // drill-down finds the device. A variable's label_values(SELECTOR, LABEL) is Grafana's: its selector runs.
  for (const testing::DashboardQuery& q : testing::DashboardQueries(testing::LoadMemfleetDashboard())) {
    std::string promql = testing::WithVariables(q.promql, "qcom-edge");
    if (promql.rfind("label_values(", 0) == 0) promql = promql.substr(13, promql.rfind(',') - 13);
    const HttpReply r = HttpGet("127.0.0.1", prometheus_port_, "/api/v1/query?query=" + UrlEncoded(promql));
    EXPECT_EQ(r.status, 200) << q.where << ": " << promql << "\n" << r.body;
    const json answer = json::parse(r.body, nullptr, false);
    EXPECT_EQ(answer.value("status", ""), "success") << q.where << ": " << r.body;
    if (q.where.find("$device: memory by part") != std::string::npos) {
      EXPECT_FALSE(answer["data"]["result"].empty()) << q.where << ": " << promql;
    }
  }
}

// The queries of docs/metrics.md ("Queries"), each run through Prometheus' HTTP API and its answer
// checked against the captures' expected reports: summed by device, the memory parts are the device's
// total (qcom-sm8450: 3,567,646 kB); a device with a null part has no total, and its parts' sum is then
// only what is known.
TEST_F(PrometheusTest, TheDocumentedQueriesAnswerTheDevicesTotals) {
  const std::string prometheus = FindTool("prometheus");
  if (prometheus.empty()) GTEST_SKIP() << "prometheus not installed (Debian package prometheus)";
  StartServer();
  for (const std::string& c : kScraped) RunAgent(c);
  StartPrometheus(prometheus);

  const std::string totals = "memfleet_device_total_bytes";
  const std::string parts_summed = "sum by (device_id) (memfleet_device_memory_bytes)";
  const std::string shares = "memfleet_device_memory_bytes / ignoring (part) group_left memfleet_device_total_bytes";
  const std::string kernel_without_cma =
      "memfleet_device_memory_bytes{part=\"kernel\"} - ignoring (part) memfleet_device_kernel_cma_bytes";
  EXPECT_EQ(DocumentedQueries(), (std::vector<std::string>{totals, parts_summed, shares, kernel_without_cma}))
      << "docs/metrics.md shows the queries this test runs";

  // All three devices are in the sum as soon as Prometheus has scraped once.
  const std::map<std::string, double> sums = ByDevice(QueryUntil(parts_summed, kScraped.size()));
  ASSERT_EQ(sums.size(), kScraped.size()) << prometheus_->Log();
  const std::map<std::string, double> total = ByDevice(Query(totals));
  EXPECT_EQ(total.size(), 2u) << "legacy-419 has no total";
  EXPECT_EQ(sums.at("qcom-sm8450"), 3567646.0 * 1024);
  EXPECT_EQ(total.at("qcom-sm8450"), 3567646.0 * 1024);
  for (const std::string c : {"qcom-edge", "qcom-sm8450"}) {
    EXPECT_EQ(total.at(c), ExpectedBytes(c, "total_kb")) << c;
    EXPECT_EQ(sums.at(c), ExpectedBytes(c, "total_kb")) << c << ": the parts add up to the total";
  }
  EXPECT_FALSE(ExpectedBytes("legacy-419", "kernel_kb").has_value());
  EXPECT_EQ(total.count("legacy-419"), 0u);
  EXPECT_EQ(sums.at("legacy-419"),
            *ExpectedBytes("legacy-419", "static_reserved_kb") + *ExpectedBytes("legacy-419", "processes_kb"));

  // Each part's share of its device's total: three per device with a total.
  const json share = Query(shares);
  ASSERT_TRUE(share.is_array()) << share.dump();
  EXPECT_EQ(share.size(), 6u) << share.dump();
  for (const json& sample : share) {
    const std::string c = sample["metric"]["device_id"];
    const std::string part = sample["metric"]["part"];
    const double value = std::strtod(sample["value"][1].get<std::string>().c_str(), nullptr);
    EXPECT_NEAR(value, *ExpectedBytes(c, part + "_kb") / *ExpectedBytes(c, "total_kb"), 1e-12) << c << " " << part;
  }

  // The kernel without the CMA pages it holds: qcom-sm8450 596,903 - 75,756 kB; none where kernel is null.
  const std::map<std::string, double> kernel = ByDevice(Query(kernel_without_cma));
  EXPECT_EQ(kernel.size(), 2u);
  EXPECT_EQ(kernel.at("qcom-sm8450"), (596903.0 - 75756.0) * 1024);
  EXPECT_EQ(kernel.at("qcom-edge"),
            *ExpectedBytes("qcom-edge", "kernel_kb") - *ExpectedBytes("qcom-edge", "kernel_cma_kb"));
}

}  // namespace
}  // namespace metrics_scenario
}  // namespace memfleet
