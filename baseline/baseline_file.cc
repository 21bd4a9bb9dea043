#include "baseline/baseline_file.h"

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/bounded_json.h"
#include "nlohmann/json.hpp"
#include "common/untrusted_text.h"

namespace memfleet::baseline {
namespace {

using nlohmann::json;

constexpr size_t kMaxErrors = 50;
constexpr size_t kMaxNameBytes = 512;

// Collects problems instead of stopping at the first: a lab fixing a 300-process file wants them all.
class Errors {
 public:
  void Add(const std::string& where, const std::string& what) {
    if (list_.size() < kMaxErrors) list_.push_back(where.empty() ? what : absl::StrCat(where, ": ", what));
    ++count_;
  }
  bool empty() const { return count_ == 0; }
  absl::Status ToStatus() const {
    std::string text = absl::StrJoin(list_, "\n");
    if (count_ > list_.size()) absl::StrAppend(&text, "\n... and ", count_ - list_.size(), " more");
    return absl::InvalidArgumentError(absl::StrCat("invalid baseline file:\n", text));
  }

 private:
  std::vector<std::string> list_;
  size_t count_ = 0;
};

void CheckKnownFields(const json& object, const std::set<std::string>& known, const std::string& where,
                      Errors& errors) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (known.count(it.key()) == 0) {
      errors.Add(where, absl::StrCat("unknown field ", QuotedSnippet(it.key()),
                                     "; known fields: ", absl::StrJoin(known, ", ")));
    }
  }
}

std::optional<std::string> GetString(const json& object, const char* key, bool required, const std::string& where,
                                     Errors& errors) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    if (required) errors.Add(where, absl::StrCat("missing required field \"", key, "\""));
    return std::nullopt;
  }
  if (!it->is_string()) {
    errors.Add(where, absl::StrCat("\"", key, "\" must be a string"));
    return std::nullopt;
  }
  std::string value = it->get<std::string>();
  if (value.size() > kMaxNameBytes) {
    errors.Add(where, absl::StrCat("\"", key, "\" is longer than ", kMaxNameBytes, " bytes"));
    return std::nullopt;
  }
  if (required && value.empty()) {
    errors.Add(where, absl::StrCat("\"", key, "\" must not be empty"));
    return std::nullopt;
  }
  return value;
}

std::optional<int64_t> GetKb(const json& object, const char* key, const std::string& where, Errors& errors) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (it->is_number_unsigned()) {
    uint64_t v = it->get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 4)) {
      errors.Add(where, absl::StrCat("\"", key, "\" is too large"));
      return std::nullopt;
    }
    return static_cast<int64_t>(v);
  }
  if (it->is_number_integer()) {
    int64_t v = it->get<int64_t>();
    if (v < 0) {
      errors.Add(where, absl::StrCat("\"", key, "\" is negative (", v, "); a budget is a size in kB, 0 or more"));
      return std::nullopt;
    }
    return v;
  }
  if (it->is_number_float()) {
    double d = it->get<double>();
    errors.Add(where, d < 0 ? absl::StrCat("\"", key, "\" is negative; a budget is a size in kB, 0 or more")
                            : absl::StrCat("\"", key, "\" must be a whole number of kB"));
    return std::nullopt;
  }
  errors.Add(where, absl::StrCat("\"", key, "\" must be a number (kB)"));
  return std::nullopt;
}

std::optional<MetStatus> GetStatus(const json& object, bool required, const std::string& where, Errors& errors) {
  std::optional<std::string> s = GetString(object, "status", required, where, errors);
  if (!s) return std::nullopt;
  if (*s == "met") return MetStatus::kMet;
  if (*s == "unmet") return MetStatus::kUnmet;
  errors.Add(where, absl::StrCat("\"status\" is ", QuotedSnippet(*s), "; use \"met\" or \"unmet\""));
  return std::nullopt;
}

std::vector<std::string> GetStringList(const json& object, const char* key, const std::string& where, Errors& errors) {
  std::vector<std::string> out;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return out;
  if (!it->is_array()) {
    errors.Add(where, absl::StrCat("\"", key, "\" must be a list of strings"));
    return out;
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const json& v = (*it)[i];
    if (!v.is_string() || v.get<std::string>().empty()) {
      errors.Add(absl::StrCat(where, ".", key, "[", i, "]"), "must be a non-empty string");
      continue;
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

bool Matches(const std::vector<std::string>& patterns, const std::string& value) {
  if (patterns.empty()) return true;
  for (const std::string& p : patterns) {
    if (!p.empty() && p.back() == '*') {
      const size_t n = p.size() - 1;
      if (value.size() >= n && value.compare(0, n, p, 0, n) == 0) return true;
    } else if (p == value) {
      return true;
    }
  }
  return false;
}

void ParseProcess(const json& j, const Department& dept, const std::string& where, Errors& errors, ProcessBaseline& p) {
  CheckKnownFields(j, {"name", "sr", "status", "graphics_dma_kb", "non_graphics_kb", "target_total_kb"}, where, errors);
  if (std::optional<std::string> name = GetString(j, "name", true, where, errors)) p.name = *name;
  auto sr = j.find("sr");
  if (sr != j.end() && !sr->is_null()) {
    if (sr->is_boolean()) {
      p.sr = sr->get<bool>();
    } else {
      errors.Add(where, "\"sr\" must be true or false");
    }
  }
  p.status = GetStatus(j, p.sr, where, errors);
  p.graphics_dma_kb = GetKb(j, "graphics_dma_kb", where, errors);
  p.non_graphics_kb = GetKb(j, "non_graphics_kb", where, errors);
  p.target_total_kb = GetKb(j, "target_total_kb", where, errors);

  // What the schemes of section 6 may assign this process (docs/baselines.md "Required fields").
  const bool met_dept = dept.status == MetStatus::kMet;
  const bool actual_needed = met_dept || (p.sr && p.status == MetStatus::kMet);
  const bool target_needed = !met_dept && p.sr && p.status == MetStatus::kUnmet;
  if (met_dept && p.status == MetStatus::kUnmet) {
    errors.Add(where, absl::StrCat("is unmet but its department ", QuotedSnippet(dept.name),
                                   " is met (a department is met only when all its processes meet their budgets)"));
  }
  if (actual_needed) {
    const char* why = met_dept ? "a process of a met department" : "a met SR process";
    if (!p.graphics_dma_kb) {
      errors.Add(where,
                 absl::StrCat("missing required field \"graphics_dma_kb\" (", why, " is held to its actual baseline)"));
    }
    if (!p.non_graphics_kb) {
      errors.Add(where,
                 absl::StrCat("missing required field \"non_graphics_kb\" (", why, " is held to its actual baseline)"));
    }
  }
  if (target_needed && !p.target_total_kb) {
    errors.Add(where,
               "missing required field \"target_total_kb\" (scheme 1 holds an unmet SR process to its target total)");
  }
}

}  // namespace

const char* MetStatusName(MetStatus s) { return s == MetStatus::kMet ? "met" : "unmet"; }

bool Baseline::AppliesTo(const std::string& model, const std::string& build) const {
  return Matches(models, model) && Matches(builds, build);
}

const Department* Baseline::DepartmentOf(const std::string& process_name) const {
  for (const Department& d : departments) {
    for (const ProcessBaseline& p : d.processes) {
      if (p.name == process_name) return &d;
    }
  }
  return nullptr;
}

absl::StatusOr<Baseline> ParseBaselineFile(std::string_view text) {
  if (text.size() > kMaxBaselineFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat("invalid baseline file: ", text.size(), " bytes, more than the ",
                                                   kMaxBaselineFileBytes, " allowed"));
  }
  // Uploaded by a client: bounded in depth too, so that no recursive walk of it can exhaust the stack. The
  // message gives the line and column of a syntax error.
  absl::StatusOr<json> parsed = ParseBoundedJson(text, JsonBounds{kMaxBaselineFileBytes, kMaxJsonDepth});
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("invalid baseline file: ", parsed.status().message()));
  }
  json root = *std::move(parsed);
  if (!root.is_object()) return absl::InvalidArgumentError("invalid baseline file: the top level must be an object");

  Errors errors;
  Baseline b;
  CheckKnownFields(root, {"format", "name", "version", "reference_build", "applies_to", "departments"}, "top level",
                   errors);
  auto format = root.find("format");
  if (format == root.end()) {
    errors.Add("top level", absl::StrCat("missing required field \"format\" (", kBaselineFormat, ")"));
  } else if (!format->is_number_integer() || format->get<int64_t>() != kBaselineFormat) {
    errors.Add("top level",
               absl::StrCat("\"format\" must be ", kBaselineFormat, " (the only format this server reads)"));
  }
  if (auto v = GetString(root, "name", true, "top level", errors)) b.name = *v;
  if (auto v = GetString(root, "version", false, "top level", errors)) b.version = *v;
  if (auto v = GetString(root, "reference_build", false, "top level", errors)) b.reference_build = *v;
  auto applies = root.find("applies_to");
  if (applies != root.end() && !applies->is_null()) {
    if (!applies->is_object()) {
      errors.Add("applies_to", "must be an object with \"models\" and/or \"builds\"");
    } else {
      CheckKnownFields(*applies, {"models", "builds"}, "applies_to", errors);
      b.models = GetStringList(*applies, "models", "applies_to", errors);
      b.builds = GetStringList(*applies, "builds", "applies_to", errors);
    }
  }

  auto depts = root.find("departments");
  if (depts == root.end() || !depts->is_array() || depts->empty()) {
    errors.Add("top level", "missing required field \"departments\" (a non-empty list)");
    return errors.ToStatus();
  }
  std::map<std::string, std::string> owner;  // process name -> where it was first seen
  std::set<std::string> dept_names;
  for (size_t i = 0; i < depts->size(); ++i) {
    const json& dj = (*depts)[i];
    std::string where = absl::StrCat("departments[", i, "]");
    if (!dj.is_object()) {
      errors.Add(where, "must be an object");
      continue;
    }
    Department d;
    if (auto name = GetString(dj, "name", true, where, errors)) {
      d.name = *name;
      where = absl::StrCat(where, " (", QuotedSnippet(d.name), ")");
      if (!dept_names.insert(d.name).second) errors.Add(where, "a department of that name is listed twice");
    }
    CheckKnownFields(dj, {"name", "status", "target_total_kb", "processes"}, where, errors);
    std::optional<MetStatus> status = GetStatus(dj, true, where, errors);
    d.status = status.value_or(MetStatus::kMet);
    d.target_total_kb = GetKb(dj, "target_total_kb", where, errors);
    if (status == MetStatus::kUnmet && !d.target_total_kb) {
      errors.Add(where,
                 "missing required field \"target_total_kb\" (scheme 2 holds an unmet department to its target total)");
    }
    auto procs = dj.find("processes");
    if (procs == dj.end() || !procs->is_array() || procs->empty()) {
      errors.Add(where, "missing required field \"processes\" (a non-empty list)");
      b.departments.push_back(std::move(d));
      continue;
    }
    for (size_t k = 0; k < procs->size(); ++k) {
      const json& pj = (*procs)[k];
      std::string pwhere = absl::StrCat(where, ".processes[", k, "]");
      if (!pj.is_object()) {
        errors.Add(pwhere, "must be an object");
        continue;
      }
      ProcessBaseline p;
      if (pj.contains("name") && pj["name"].is_string()) {
        pwhere = absl::StrCat(pwhere, " (", QuotedSnippet(pj["name"].get<std::string>()), ")");
      }
      ParseProcess(pj, d, pwhere, errors, p);
      if (!p.name.empty()) {
        auto [it, inserted] = owner.emplace(p.name, pwhere);
        if (!inserted) {
          errors.Add(pwhere, absl::StrCat("process ", QuotedSnippet(p.name), " is already listed at ", it->second,
                                          "; a process belongs to one department"));
        }
      }
      d.processes.push_back(std::move(p));
    }
    b.departments.push_back(std::move(d));
  }
  if (!errors.empty()) return errors.ToStatus();
  return b;
}

std::string BaselineToJson(const Baseline& b) {
  json depts = json::array();
  for (const Department& d : b.departments) {
    json procs = json::array();
    for (const ProcessBaseline& p : d.processes) {
      json pj = {{"name", p.name}};
      if (p.sr) pj["sr"] = true;
      if (p.status) pj["status"] = MetStatusName(*p.status);
      if (p.graphics_dma_kb) pj["graphics_dma_kb"] = *p.graphics_dma_kb;
      if (p.non_graphics_kb) pj["non_graphics_kb"] = *p.non_graphics_kb;
      if (p.target_total_kb) pj["target_total_kb"] = *p.target_total_kb;
      procs.push_back(std::move(pj));
    }
    json dj = {{"name", d.name}, {"status", MetStatusName(d.status)}};
    if (d.target_total_kb) dj["target_total_kb"] = *d.target_total_kb;
    dj["processes"] = std::move(procs);
    depts.push_back(std::move(dj));
  }
  json out = {{"format", b.format}, {"name", b.name}};
  if (!b.version.empty()) out["version"] = b.version;
  if (!b.reference_build.empty()) out["reference_build"] = b.reference_build;
  if (!b.models.empty() || !b.builds.empty()) {
    json a = json::object();
    if (!b.models.empty()) a["models"] = b.models;
    if (!b.builds.empty()) a["builds"] = b.builds;
    out["applies_to"] = std::move(a);
  }
  out["departments"] = std::move(depts);
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace memfleet::baseline
