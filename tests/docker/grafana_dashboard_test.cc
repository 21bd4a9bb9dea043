// docker/: Docker cannot run here, so the files compose starts are checked as files. The Grafana
// dashboard's PromQL names only series /metrics exports (ExportedSeriesNames), only labels it writes
// and only the parts each series has (a device's total is its own series, not a part); every panel reads the
// provisioned data source; compose.yaml parses (Python's yaml) with the three services, and every file it mounts is in
// the repository. That the queries also run on a real Prometheus is metrics_integrationtest's
// PrometheusScrapesTheServerAndAnswersADevicesTotal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "server/http/metrics/fleet_metrics.h"
#include "tests/support/grafana_dashboard.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_data.h"
#include "tests/support/test_paths.h"

namespace memfleet {
namespace {

using nlohmann::json;

const std::string kDocker = testing::TestData("../../docker");

// Words of PromQL that are not series names: functions, aggregations, keywords.
const std::set<std::string> kPromqlWords = {
    "sum",          "count",   "max", "min",    "avg",        "quantile",    "topk",   "bottomk",
    "by",           "without", "on",  "rate",   "increase",   "time",        "vector", "histogram_quantile",
    "label_values", "or",      "and", "unless", "group_left", "group_right", "bool"};
const std::set<std::string> kLabels = {"device_id", "model", "platform", "build",   "part",
                                       "process",   "le",    "job",      "instance"};
// The parts of each series that has a `part` label. A device's memory parts add up to its total (which is a
// series of its own, as are kernel_cma and gcma, which overlap them), so part="total" is not one of them.
const std::map<std::string, std::set<std::string>> kPartsOf = {
    {"memfleet_device_memory_bytes", {"static_reserved", "kernel", "processes"}},
    {"memfleet_process_memory_bytes", {"total", "gl", "dma", "native_graphics", "non_graphics"}},
    {"memfleet_process_app_summary_bytes",
     {"java_heap", "native_heap", "code", "stack", "graphics", "private_other", "system", "total_pss",
      "total_swap_pss"}}};

// PromQL without its string literals and range/duration brackets, so what is left is names and labels.
// (Scanned by hand: GCC 12's std::regex does not build under -Werror with ASan.)
std::string WithoutStrings(const std::string& promql) {
  std::string out;
  for (size_t i = 0; i < promql.size(); ++i) {
    if (promql[i] == '"') {
      const size_t end = promql.find('"', i + 1);
      out += "\"\"";
      i = end == std::string::npos ? promql.size() : end;
    } else if (promql[i] == '[') {
      const size_t end = promql.find(']', i + 1);
      i = end == std::string::npos ? promql.size() : end;
    } else {
      out += promql[i];
    }
  }
  return out;
}

struct Word {
  std::string text;
  size_t at = 0;
};

std::vector<Word> Identifiers(const std::string& text) {
  std::vector<Word> words;
  const auto starts = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  const auto continues = [&](char c) { return starts(c) || std::isdigit(static_cast<unsigned char>(c)); };
  for (size_t i = 0; i < text.size();) {
    if (!starts(text[i]) || (i > 0 && std::isdigit(static_cast<unsigned char>(text[i - 1])))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && continues(text[end])) ++end;
    words.push_back({text.substr(i, end - i), i});
    i = end;
  }
  return words;
}

// A part matcher (part="x", part!="x", part=~"x|y") and the series whose selector holds it.
struct PartMatcher {
  std::string series;
  std::string values;  // as quoted: "x" or "x|y"
};

// The series name that ends just before promql[brace] (its selector's "{"); "" when none.
std::string SeriesBefore(const std::string& promql, size_t brace) {
  size_t start = brace;
  while (start > 0 && (std::isalnum(static_cast<unsigned char>(promql[start - 1])) || promql[start - 1] == '_')) {
    --start;
  }
  return promql.substr(start, brace - start);
}

std::vector<PartMatcher> PartMatchers(const std::string& promql) {
  std::vector<PartMatcher> matchers;
  for (size_t at = promql.find("part"); at != std::string::npos; at = promql.find("part", at + 4)) {
    size_t i = at + 4;
    while (i < promql.size() && (promql[i] == '=' || promql[i] == '!' || promql[i] == '~')) ++i;
    if (i == at + 4 || i >= promql.size() || promql[i] != '"') continue;
    const size_t end = promql.find('"', i + 1);
    const size_t brace = promql.rfind('{', at);
    if (end == std::string::npos || brace == std::string::npos) continue;
    matchers.push_back({SeriesBefore(promql, brace), promql.substr(i + 1, end - i - 1)});
  }
  return matchers;
}

TEST(GrafanaDashboardTest, EveryQueryNamesOnlyExportedSeries) {
  const json dashboard = testing::LoadMemfleetDashboard();
  const std::vector<std::string> exported = metrics::ExportedSeriesNames();
  const std::vector<testing::DashboardQuery> queries = testing::DashboardQueries(dashboard);
  ASSERT_GE(queries.size(), 20u);
  std::set<std::string> used;
  for (const testing::DashboardQuery& q : queries) {
    ASSERT_FALSE(q.promql.empty()) << q.where;
    const std::string text = WithoutStrings(q.promql);
    bool names_memfleet = false;
    for (const Word& w : Identifiers(text)) {
      const std::string& word = w.text;
      const size_t after = w.at + word.size();
      const bool is_label = after < text.size() && (text[after] == '=' || text[after] == '!');
      const bool is_variable = w.at > 0 && text[w.at - 1] == '$';
      if (is_label || is_variable || kPromqlWords.count(word) || kLabels.count(word)) {
        if (is_label) {
          EXPECT_TRUE(kLabels.count(word)) << q.where << ": label " << word << " is not exported";
        }
        continue;
      }
      EXPECT_NE(std::find(exported.begin(), exported.end(), word), exported.end())
          << q.where << ": " << word << " is not a series /metrics exports (" << q.promql << ")";
      names_memfleet = true;
      used.insert(word);
    }
    EXPECT_TRUE(names_memfleet) << q.where << " queries no memfleet series: " << q.promql;
  }
  // The four views the dashboard promises use the device and process series.
  EXPECT_TRUE(used.count("memfleet_device_memory_bytes"));
  EXPECT_TRUE(used.count("memfleet_device_total_bytes"));
  EXPECT_TRUE(used.count("memfleet_process_memory_bytes"));
  EXPECT_TRUE(used.count("memfleet_ingest_latency_seconds_bucket"));
}

TEST(GrafanaDashboardTest, PartValuesAreThePartsOfTheirSeries) {
  int seen = 0;
  for (const testing::DashboardQuery& q : testing::DashboardQueries(testing::LoadMemfleetDashboard())) {
    for (const PartMatcher& m : PartMatchers(q.promql)) {
      const auto parts = kPartsOf.find(m.series);
      ASSERT_NE(parts, kPartsOf.end()) << q.where << ": " << m.series << " has no part label (" << q.promql << ")";
      for (size_t start = 0; start <= m.values.size();) {
        const size_t bar = std::min(m.values.find('|', start), m.values.size());
        EXPECT_TRUE(parts->second.count(m.values.substr(start, bar - start)))
            << q.where << ": " << m.series << " has no part " << m.values;
        start = bar + 1;
        ++seen;
      }
    }
  }
  EXPECT_GE(seen, 4);
}

// Every total the dashboard shows is the total's own series.
TEST(GrafanaDashboardTest, TotalsComeFromTheTotalSeries) {
  int totals = 0;
  for (const testing::DashboardQuery& q : testing::DashboardQueries(testing::LoadMemfleetDashboard())) {
    totals += q.promql.find("memfleet_device_total_bytes{") != std::string::npos;
  }
  EXPECT_GE(totals, 6) << "fleet sum, device totals, the model's p50, p90 and max, the device drill-down";
}

TEST(GrafanaDashboardTest, PanelsReadTheProvisionedDataSourceAndHaveUniqueIds) {
  const json dashboard = testing::LoadMemfleetDashboard();
  EXPECT_EQ(dashboard["uid"], "memfleet");
  const std::string datasources =
      testing::ReadTestData("../../docker/grafana/provisioning/datasources/prometheus.yaml");
  EXPECT_NE(datasources.find("uid: prometheus"), std::string::npos);
  std::set<int> ids;
  for (const json& panel : dashboard["panels"]) {
    EXPECT_TRUE(ids.insert(panel["id"].get<int>()).second) << "panel id twice: " << panel["id"];
    EXPECT_TRUE(panel["gridPos"].is_object()) << panel["title"];
    if (panel["type"] == "row") continue;
    EXPECT_EQ(panel["datasource"]["uid"], "prometheus") << panel["title"];
    for (const json& target : panel["targets"]) EXPECT_EQ(target["datasource"]["uid"], "prometheus");
  }
  std::set<std::string> variables;
  for (const json& v : dashboard["templating"]["list"]) variables.insert(v["name"].get<std::string>());
  EXPECT_EQ(variables, (std::set<std::string>{"model", "platform", "device"}));
}

// compose.yaml parsed by Python's yaml (Debian python3-yaml), printed back as JSON.
TEST(DockerComposeTest, ParsesWithTheThreeServicesAndMountsOnlyFilesOfTheRepository) {
  const std::string dir = testing::MakeTempDir("memfleet-compose-");
  const std::string out = dir + "/compose.json";
  const std::string cmd =
      "python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), "
      "open(sys.argv[2], \"w\"))' '" +
      kDocker + "/compose.yaml' '" + out + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "python3 with yaml (scripts/setup-deps: python3-yaml) could not parse it";
  std::ifstream in(out);
  const json compose = json::parse(std::string(std::istreambuf_iterator<char>(in), {}), nullptr, false);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(compose.is_object() && compose.contains("services")) << compose.dump();
  const json& services = compose.at("services");
  for (const std::string service : {"memfleet-server", "prometheus", "grafana"}) {
    ASSERT_TRUE(services.contains(service)) << service;
  }
  const json& server = services.at("memfleet-server");
  EXPECT_EQ(server.at("build").at("dockerfile"), "docker/Dockerfile");
  EXPECT_TRUE(std::filesystem::exists(kDocker + "/Dockerfile"));
  const std::string command = server.at("command").dump();
  EXPECT_NE(command.find("--http-listen=0.0.0.0:9420"), std::string::npos) << command;
  EXPECT_NE(command.find("--tls-cert="), std::string::npos) << "beyond loopback the server needs TLS";
  // Prometheus scrapes that port with a read token; Grafana loads the dashboard the tests above check.
  const std::string prometheus = testing::ReadTestData("../../docker/prometheus/prometheus.yml");
  EXPECT_NE(prometheus.find("memfleet-server:9420"), std::string::npos);
  // The HTTP port answers only a Host naming the server (against DNS rebinding): the name Prometheus dials.
  EXPECT_NE(command.find("--http-host=memfleet-server\""), std::string::npos) << command;
  EXPECT_NE(prometheus.find("credentials_file: /etc/prometheus/memfleet.token"), std::string::npos);
  for (const auto& [name, service] : services.items()) {
    for (const json& volume : service.value("volumes", json::array())) {
      const std::string v = volume;
      if (v.rfind("./", 0) != 0) continue;  // a named volume
      const std::string source = v.substr(2, v.find(':') - 2);
      // The token and the certificates are the lab's own (README): everything else ships in docker/.
      if (source == "tls" || source.rfind("tls/", 0) == 0 || source == "prometheus/memfleet.token") continue;
      EXPECT_TRUE(std::filesystem::exists(kDocker + "/" + source)) << name << " mounts missing " << source;
    }
  }
}

}  // namespace
}  // namespace memfleet
