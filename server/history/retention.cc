#include "server/history/retention.h"

#include <algorithm>
#include <functional>
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
    c.raw_dropped = row.raw_dropped;
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
  run.raw_kept_for_deltas += plan.raw_kept_for_deltas;
  if (options.dry_run) {
    run.deleted += plan.delete_ids.size();
    run.raw_dropped += plan.drop_raw_ids.size();
    return absl::OkStatus();
  }
  // The deltas, then the whole captures, never both in one batch: a keyframe that cannot go (another
  // device's delta names it) then holds up only whole captures. Deletions first: a deleted delta no
  // longer holds its keyframe's raw text.
  const size_t batch = std::max<size_t>(options.batch, 1);
  auto in_batches = [batch](const std::vector<std::string>& ids, size_t deltas,
                            const std::function<absl::StatusOr<size_t>(std::vector<std::string>)>& apply,
                            size_t& done) -> absl::Status {
    const auto begin = ids.begin();
    for (const auto& [from, to] : {std::make_pair(begin, begin + static_cast<std::ptrdiff_t>(deltas)),
                                   std::make_pair(begin + static_cast<std::ptrdiff_t>(deltas), ids.end())}) {
      for (auto first = from; first != to;) {
        const auto last = first + std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(batch), to - first);
        MEMFLEET_ASSIGN_OR_RETURN(size_t n, apply(std::vector<std::string>(first, last)));
        done += n;
        first = last;
      }
    }
    return absl::OkStatus();
  };
  MEMFLEET_RETURN_IF_ERROR(in_batches(
      plan.delete_ids, plan.delete_deltas, [&store](std::vector<std::string> ids) { return store.DeleteCaptures(ids); },
      run.deleted));
  MEMFLEET_RETURN_IF_ERROR(in_batches(
      plan.drop_raw_ids, plan.drop_raw_deltas,
      [&store, &run](std::vector<std::string> ids) { return store.DropRawCaptures(ids, run.raw_days); },
      run.raw_dropped));
  if (policy.full.count() > 0) MEMFLEET_RETURN_IF_ERROR(store.RecordRetention(device_id, MarksOf(policy, now_ms)));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RetentionRun> ApplyRetention(storage::SqlStore& store, const RetentionPolicy& policy, int64_t now_ms,
                                            const RetentionOptions& options) {
  RetentionRun run;
  run.thins_captures = policy.full.count() > 0;
  if (policy.raw.count() > 0) {
    // Whole days, as the flag gives them; what a dropped capture's codec names.
    run.raw_days = std::max<int>(1, static_cast<int>(policy.raw / std::chrono::hours(24)));
  }
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
  std::string text = absl::StrCat(run.devices, run.devices == 1 ? " device, " : " devices, ");
  if (run.thins_captures) {
    absl::StrAppend(&text, run.deleted, " of ", run.captures_before,
                    dry_run ? " captures would be deleted" : " captures deleted", " (", run.kept_for_deltas,
                    " keyframes kept for their deltas)");
  } else {
    absl::StrAppend(&text, run.captures_before, " captures, none deleted");
  }
  if (run.raw_days > 0) {
    absl::StrAppend(&text, ", raw text of ", run.raw_dropped, run.raw_dropped == 1 ? " capture" : " captures",
                    " older than ", run.raw_days, run.raw_days == 1 ? " day" : " days",
                    dry_run ? " would be dropped" : " dropped", ", their reports kept (", run.raw_kept_for_deltas,
                    " keyframes keep theirs for their deltas)");
  }
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
