// The baseline file (docs/baselines.md): departments, their processes, met/unmet status, the actual
// baselines per budget (graphics_dma_kb, non_graphics_kb) and target totals of docs/accounting.md section 6,
// and the device models/builds they apply to. JSON; parsed and validated here, stored verbatim.
//
//   absl::StatusOr<Baseline> b = ParseBaselineFile(text);
//   // !ok(): InvalidArgument listing every problem, each with where it is:
//   //   departments[1].processes[0] ("com.miui.home"): unknown field "graphic_dma_kb"
#ifndef MEMFLEET_BASELINE_BASELINE_FILE_H_
#define MEMFLEET_BASELINE_BASELINE_FILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace memfleet::baseline {

inline constexpr int kBaselineFormat = 1;
// Larger files are refused before parsing: a lab's baseline is a few hundred processes.
inline constexpr size_t kMaxBaselineFileBytes = 4 << 20;

enum class MetStatus { kMet, kUnmet };
const char* MetStatusName(MetStatus s);  // "met" | "unmet"

struct ProcessBaseline {
  std::string name;                        // as in the report: cmdline verbatim ("/system/bin/surfaceflinger")
  bool sr = false;                         // an SR process: it has its own met/unmet status
  std::optional<MetStatus> status;         // required for SR processes; optional (informational) otherwise
  std::optional<int64_t> graphics_dma_kb;  // actual baseline, graphics+DMA budget
  std::optional<int64_t> non_graphics_kb;  // actual baseline, non-graphics-non-DMA budget
  std::optional<int64_t> target_total_kb;  // one target total
};

struct Department {
  std::string name;
  MetStatus status = MetStatus::kMet;
  std::optional<int64_t> target_total_kb;  // required when unmet (scheme 2 checks the department whole)
  std::vector<ProcessBaseline> processes;
};

struct Baseline {
  int format = kBaselineFormat;
  std::string name;             // "R2026.10 reference"
  std::string version;          // the lab's own label of this baseline ("2026.10-1"); may be empty
  std::string reference_build;  // the release the actual baselines were measured on; may be empty
  // Which devices it applies to; empty = all. A value ending in '*' matches as a prefix.
  std::vector<std::string> models;
  std::vector<std::string> builds;
  std::vector<Department> departments;

  bool AppliesTo(const std::string& model, const std::string& build) const;
  // The department owning a process, or nullptr.
  const Department* DepartmentOf(const std::string& process_name) const;
};

// Validates everything section 6 needs: known fields only, required fields present, budgets whole
// non-negative kB, statuses "met"/"unmet", no process in two departments (or twice in one), a met
// department holds no unmet SR process, and each process has the budgets both schemes may assign it.
// InvalidArgument with every problem found (one per line, at most 50), each saying where.
absl::StatusOr<Baseline> ParseBaselineFile(std::string_view text);

// Canonical JSON of a parsed baseline (the same fields as the file, indent 2).
std::string BaselineToJson(const Baseline& baseline);

}  // namespace memfleet::baseline

#endif  // MEMFLEET_BASELINE_BASELINE_FILE_H_
