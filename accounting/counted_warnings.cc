#include "accounting/counted_warnings.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace memfleet::accounting {

std::optional<int> WarningPid(absl::string_view warning) {
  if (!absl::ConsumePrefix(&warning, "proc/")) return std::nullopt;
  const size_t end = warning.find_first_not_of("0123456789");
  if (end == 0 || end == absl::string_view::npos || (warning[end] != '/' && warning[end] != ':')) return std::nullopt;
  int pid = 0;
  if (!absl::SimpleAtoi(warning.substr(0, end), &pid)) return std::nullopt;
  return pid;
}

std::vector<int> TakeProcessWarnings(std::vector<std::string>& warnings,
                                     absl::FunctionRef<bool(const std::string&)> matches) {
  const auto about_a_process = [&matches](const std::string& w) { return WarningPid(w) && matches(w); };
  if (std::count_if(warnings.begin(), warnings.end(), about_a_process) < 2) return {};
  std::vector<std::string> kept;
  std::vector<int> pids;
  std::set<int> seen;
  for (std::string& w : warnings) {
    if (!about_a_process(w)) {
      kept.push_back(std::move(w));
    } else if (const int pid = *WarningPid(w); seen.insert(pid).second) {
      pids.push_back(pid);
    }
  }
  warnings = std::move(kept);
  std::sort(pids.begin(), pids.end());
  return pids;
}

std::string NameSomeProcesses(const std::vector<int>& pids, absl::FunctionRef<std::string(int)> name) {
  std::string out;
  for (size_t i = 0; i < pids.size() && i < kProcessesNamed; ++i) {
    if (i > 0) out += ", ";
    out += name(pids[i]);
  }
  if (pids.size() > kProcessesNamed) out += ", ...";
  return out;
}

}  // namespace memfleet::accounting
