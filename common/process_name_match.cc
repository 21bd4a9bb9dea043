#include "common/process_name_match.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace memfleet {
namespace {

// Edit distance is quadratic: past this many characters a name is compared by its prefix, which keeps a
// hostile 4 KiB cmdline from costing more than a short one.
constexpr size_t kMaxComparedChars = 128;

size_t EditDistance(absl::string_view a, absl::string_view b) {
  a = a.substr(0, kMaxComparedChars);
  b = b.substr(0, kMaxComparedChars);
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string Quoted(const std::vector<std::string>& names) {
  return absl::StrJoin(names, ", ",
                       [](std::string* out, const std::string& n) { absl::StrAppend(out, "\"", n, "\""); });
}

std::string Ambiguous(const std::string& typed, const std::string& how, const std::vector<std::string>& matches,
                      const std::string& where) {
  std::vector<std::string> shown(matches.begin(),
                                 matches.begin() + std::min(matches.size(), kMaxSuggestedProcessNames));
  return absl::StrCat("\"", typed, "\" is the ", how, " of ", matches.size(), " processes ", where, ": ", Quoted(shown),
                      matches.size() > shown.size() ? ", ..." : "", "; give the full name");
}

}  // namespace

std::string ProcessBaseName(const std::string& name) {
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

std::vector<std::string> ClosestProcessNames(const std::string& typed, const std::vector<std::string>& names,
                                             size_t limit) {
  const std::string lower_typed = absl::AsciiStrToLower(typed);
  std::set<std::tuple<bool, size_t, std::string>> ranked;  // (does not contain, distance, name)
  for (const std::string& name : std::set<std::string>(names.begin(), names.end())) {
    const std::string lower = absl::AsciiStrToLower(name);
    const bool contains = absl::StrContains(lower, lower_typed);
    ranked.emplace(!contains, EditDistance(lower_typed, ProcessBaseName(lower)), name);
  }
  std::vector<std::string> out;
  for (const auto& [not_contained, distance, name] : ranked) {
    if (out.size() == limit) break;
    out.push_back(name);
  }
  return out;
}

absl::StatusOr<std::string> ResolveProcessName(const std::string& typed, const std::vector<std::string>& names,
                                               const std::string& where) {
  const std::set<std::string> distinct(names.begin(), names.end());
  if (distinct.count(typed) > 0) return typed;
  std::vector<std::string> by_base, by_suffix;
  for (const std::string& name : distinct) {
    if (ProcessBaseName(name) == typed) by_base.push_back(name);
    if (!typed.empty() && absl::EndsWith(name, typed)) by_suffix.push_back(name);
  }
  if (by_base.size() == 1) return by_base.front();
  if (by_base.size() > 1) return absl::InvalidArgumentError(Ambiguous(typed, "base name", by_base, where));
  if (by_suffix.size() == 1) return by_suffix.front();
  if (by_suffix.size() > 1) return absl::InvalidArgumentError(Ambiguous(typed, "end", by_suffix, where));
  std::vector<std::string> closest = ClosestProcessNames(typed, names);
  return absl::NotFoundError(absl::StrCat("no process named \"", typed, "\" ", where, " (", distinct.size(),
                                          distinct.size() == 1 ? " process" : " processes",
                                          closest.empty() ? "" : "; closest: " + Quoted(closest), ")"));
}

}  // namespace memfleet
