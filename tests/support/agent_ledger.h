// Test support: reading a real memfleet-agent's log for the fault tests' ledger (every capture taken is
// stored once or still spooled); WaitFor (tests/support/wait_for.h) polls it. Header-only.
//
//   ASSERT_TRUE(testing::WaitFor([&] { return testing::TakenIds(agent.Log()).size() >= 3; },
//   std::chrono::seconds(60)));
#ifndef MEMFLEET_TESTS_SUPPORT_AGENT_LEDGER_H_
#define MEMFLEET_TESTS_SUPPORT_AGENT_LEDGER_H_

#include <chrono>
#include <functional>
#include <set>
#include <sstream>
#include <string>

#include "tests/support/wait_for.h"

namespace memfleet::testing {

// Occurrences of `needle` in `text`.
inline size_t CountOf(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Capture ids of the agent log's "capture <id> taken" lines.
inline std::set<std::string> TakenIds(const std::string& log) {
  std::set<std::string> ids;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    size_t at = line.find("capture ");
    size_t taken = line.find(" taken");
    if (at == std::string::npos || taken == std::string::npos || taken < at + 8) continue;
    ids.insert(line.substr(at + 8, taken - at - 8));
  }
  return ids;
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_AGENT_LEDGER_H_
