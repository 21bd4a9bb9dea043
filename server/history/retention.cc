#include "server/history/retention.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "common/utc_time.h"

namespace memfleet::server {
namespace {

absl::StatusOr<std::vector<RetentionCandidate>> CandidatesOf(storage::SqlStore& store, const std::string& device) {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<storage::RetentionRow> rows, store.RetentionRows(device));
  std::vector<RetentionCandidate> candidates;
  candidates.reserve(rows.size());
  for (storage::RetentionRow& row : rows) {
    std::optional<int64_t> at_ms = UtcMillisOf(row.captured_at);
    RetentionCandidate c;
    c.capture_id = std::move(row.capture_id);
    // A stored time is always canonical; one that is not is kept (pinned) rather than guessed at.
    c.captured_at_ms = at_ms.value_or(0);
    c.pinned = row.pinned || !at_ms.has_value();
    c.total_kb = row.total_kb;
    c.keyframe_id = std::move(row.keyframe_id);
    candidates.push_back(std::move(c));
  }
  return candidates;
}

std::string UtcOf(int64_t ms) {
  return FormatUtcMillis(std::chrono::system_clock::time_point(std::chrono::milliseconds(ms)));
}

// The history this policy has thinned at `now_ms`: hourly before now - full, daily before now - hourly.
storage::RetentionMarks MarksOf(const RetentionPolicy& policy, int64_t now_ms) {
  storage::RetentionMarks marks;
  marks.hourly_before = UtcOf(now_ms - policy.full.count());
  if (policy.hourly > policy.full) marks.daily_before = UtcOf(now_ms - policy.hourly.count());
  return marks;
}

// Thins one device: plans its captures and deletes the planned ones batch by batch, adding to `run`. An
// error stops this device only, after the batches already committed.
absl::Status ThinDevice(storage::SqlStore& store, const std::string& device_id, const RetentionPolicy& policy,
                        int64_t now_ms, const RetentionOptions& options, RetentionRun& run) {
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<RetentionCandidate> candidates, CandidatesOf(store, device_id));
  run.captures_before += candidates.size();
  const RetentionPlan plan = PlanRetention(candidates, policy, now_ms);
  run.kept_for_deltas += plan.kept_for_deltas;
  if (options.dry_run) {
    run.deleted += plan.delete_ids.size();
    return absl::OkStatus();
  }
  // The deltas, then the whole captures, never both in one batch: a keyframe that cannot go (another
  // device's delta names it) then holds up only whole captures.
  const size_t batch = std::max<size_t>(options.batch, 1);
  const auto begin = plan.delete_ids.begin();
  for (const auto& [from, to] :
       {std::make_pair(begin, begin + static_cast<std::ptrdiff_t>(plan.delete_deltas)),
        std::make_pair(begin + static_cast<std::ptrdiff_t>(plan.delete_deltas), plan.delete_ids.end())}) {
    for (auto first = from; first != to;) {
      const auto last = first + std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(batch), to - first);
      MEMFLEET_ASSIGN_OR_RETURN(size_t deleted, store.DeleteCaptures(std::vector<std::string>(first, last)));
      run.deleted += deleted;
      first = last;
    }
  }
  if (policy.full.count() > 0) MEMFLEET_RETURN_IF_ERROR(store.RecordRetention(device_id, MarksOf(policy, now_ms)));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RetentionRun> ApplyRetention(storage::SqlStore& store, const RetentionPolicy& policy, int64_t now_ms,
                                            const RetentionOptions& options) {
  RetentionRun run;
  MEMFLEET_ASSIGN_OR_RETURN(std::vector<storage::DeviceSummaryRow> devices, store.ListDevices());
  for (const storage::DeviceSummaryRow& device : devices) {
    ++run.devices;
    // One device's failure leaves the others' histories to thin: a farm is not held up by one phone.
    if (absl::Status s = ThinDevice(store, device.device.device_id, policy, now_ms, options, run); !s.ok()) {
      run.failures.push_back(absl::StrCat(device.device.device_id, ": ", s.message()));
    }
  }
  if (!options.dry_run && options.return_free_pages) {
    MEMFLEET_ASSIGN_OR_RETURN(storage::SqlStore::FreedSpace freed, store.ReturnFreePages(options.allow_vacuum));
    run.file_bytes_freed = freed.returned_bytes;
    run.space_kept_for_new_captures = freed.kept_for_new_rows;
  }
  return run;
}

std::string DescribeRetentionRun(const RetentionRun& run, bool dry_run) {
  std::string text = absl::StrCat(run.devices, run.devices == 1 ? " device, " : " devices, ", run.deleted, " of ",
                                  run.captures_before, dry_run ? " captures would be deleted" : " captures deleted",
                                  " (", run.kept_for_deltas, " keyframes kept for their deltas)");
  if (!dry_run && run.space_kept_for_new_captures) {
    // A plain VACUUM frees the space for reuse without shrinking the files: "0.0 MB returned" alone would
    // read as if nothing was gained.
    absl::StrAppend(&text, absl::StrFormat(", their space kept by PostgreSQL for the next captures (%.1f MB of it "
                                           "returned to the file system)",
                                           run.file_bytes_freed / 1e6));
  } else if (!dry_run) {
    absl::StrAppend(&text, absl::StrFormat(", %.1f MB returned to the file system", run.file_bytes_freed / 1e6));
  }
  if (!run.failures.empty()) {
    absl::StrAppend(&text, ", ", run.failures.size(), run.failures.size() == 1 ? " device" : " devices", " failed");
  }
  return text;
}

}  // namespace memfleet::server
