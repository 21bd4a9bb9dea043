// Test support: reads the Prometheus text exposition format back into samples (name, unescaped labels,
// value), so tests can look a series up by its labels. Strict where the format is: a line that is not a
// comment or a well-formed sample fails the test. Header-only; needs GoogleTest.
//
//   std::vector<PromSample> samples = ParsePrometheusText(text);
//   std::optional<double> v = FindSample(samples, "memfleet_device_up", {{"device_id", "qcom-edge"}});
#ifndef MEMFLEET_TESTS_SUPPORT_PROMETHEUS_TEXT_H_
#define MEMFLEET_TESTS_SUPPORT_PROMETHEUS_TEXT_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace memfleet::testing {

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;
  std::string value;  // as written
};

namespace prometheus_text_internal {

// Parses `{a="x",b="y"}` at line[i] (just after the name); false when malformed.
inline bool ParseLabels(const std::string& line, size_t& i, std::map<std::string, std::string>& labels) {
  if (i >= line.size() || line[i] != '{') return true;
  ++i;
  while (i < line.size() && line[i] != '}') {
    size_t eq = line.find('=', i);
    if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') return false;
    std::string key = line.substr(i, eq - i);
    std::string value;
    size_t j = eq + 2;
    for (; j < line.size() && line[j] != '"'; ++j) {
      if (line[j] != '\\') {
        value += line[j];
        continue;
      }
      if (++j >= line.size()) return false;
      if (line[j] == 'n') {
        value += '\n';
      } else if (line[j] == '\\' || line[j] == '"') {
        value += line[j];
      } else {
        return false;
      }
    }
    if (j >= line.size()) return false;
    if (!labels.emplace(key, value).second) return false;
    i = j + 1;
    if (i < line.size() && line[i] == ',') ++i;
  }
  if (i >= line.size()) return false;
  ++i;
  return true;
}

}  // namespace prometheus_text_internal

inline std::vector<PromSample> ParsePrometheusText(const std::string& text) {
  std::vector<PromSample> samples;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    PromSample s;
    size_t i = line.find_first_of("{ ");
    EXPECT_NE(i, std::string::npos) << "not a sample line: " << line;
    if (i == std::string::npos) continue;
    s.name = line.substr(0, i);
    bool labels_ok = prometheus_text_internal::ParseLabels(line, i, s.labels);
    EXPECT_TRUE(labels_ok) << "malformed labels: " << line;
    EXPECT_TRUE(i < line.size() && line[i] == ' ') << "no value: " << line;
    if (!labels_ok || i >= line.size()) continue;
    s.value = line.substr(i + 1);
    samples.push_back(std::move(s));
  }
  return samples;
}

// The value of the one sample named `name` whose labels include `labels`; nullopt when none (a test
// failure when several match).
inline std::optional<double> FindSample(const std::vector<PromSample>& samples, const std::string& name,
                                        const std::map<std::string, std::string>& labels) {
  std::optional<double> found;
  for (const PromSample& s : samples) {
    if (s.name != name) continue;
    bool match = true;
    for (const auto& [k, v] : labels) {
      auto it = s.labels.find(k);
      match = match && it != s.labels.end() && it->second == v;
    }
    if (!match) continue;
    EXPECT_FALSE(found.has_value()) << "several samples of " << name << " match";
    found = std::strtod(s.value.c_str(), nullptr);
  }
  return found;
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_PROMETHEUS_TEXT_H_
