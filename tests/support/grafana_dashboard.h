// Test support: the memfleet Grafana dashboard of docker/grafana/dashboards/memfleet.json and the PromQL
// it runs — every panel target's expr and every template variable's query. Header-only.
//
//   nlohmann::json dashboard = LoadMemfleetDashboard();
//   for (const DashboardQuery& q : DashboardQueries(dashboard)) ... q.promql ...
#ifndef MEMFLEET_TESTS_SUPPORT_GRAFANA_DASHBOARD_H_
#define MEMFLEET_TESTS_SUPPORT_GRAFANA_DASHBOARD_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/support/test_data.h"

namespace memfleet::testing {

inline nlohmann::json LoadMemfleetDashboard() {
  // tests/data/../../docker: the repository's docker folder.
  return nlohmann::json::parse(ReadTestData("../../docker/grafana/dashboards/memfleet.json"));
}

struct DashboardQuery {
  std::string where;   // "panel 3 \"Fleet memory\"" or "variable device"
  std::string promql;  // as written, with $variables
};

inline std::vector<DashboardQuery> DashboardQueries(const nlohmann::json& dashboard) {
  std::vector<DashboardQuery> out;
  for (const nlohmann::json& panel : dashboard.value("panels", nlohmann::json::array())) {
    for (const nlohmann::json& target : panel.value("targets", nlohmann::json::array())) {
      out.push_back({"panel " + std::to_string(panel.value("id", 0)) + " \"" + panel.value("title", "") + "\"",
                     target.value("expr", "")});
    }
  }
  for (const nlohmann::json& v : dashboard["templating"].value("list", nlohmann::json::array())) {
    out.push_back({"variable " + v.value("name", ""), v["query"].value("query", "")});
  }
  return out;
}

// The PromQL with the dashboard's variables set: $model and $platform to all, $device to `device`.
inline std::string WithVariables(std::string promql, const std::string& device) {
  for (const auto& [name, value] :
       {std::pair<std::string, std::string>{"$model", ".*"}, {"$platform", ".*"}, {"$device", device}}) {
    for (size_t at = promql.find(name); at != std::string::npos; at = promql.find(name, at + value.size())) {
      promql.replace(at, name.size(), value);
    }
  }
  return promql;
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_GRAFANA_DASHBOARD_H_
