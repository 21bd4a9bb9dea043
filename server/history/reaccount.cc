#include "server/history/reaccount.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "proto/capture_codec.h"
#include "accounting/account.h"
#include "report/report_json.h"

namespace memfleet::server {
namespace {

constexpr size_t kMaxListedFailures = 20;

// Walks raw captures, handing each to its callback; the plain walk or a shared run's claimed one.
using RawCaptureWalk =
    std::function<absl::Status(const std::function<void(const storage::CaptureStore::RawCapture&)>&)>;

absl::StatusOr<ReaccountResult> ReaccountWalk(storage::CaptureStore& store, const RawCaptureWalk& walk) {
  ReaccountResult result;
  auto fail = [&result](const std::string& capture_id, absl::string_view why) {
    ++result.failed;
    if (result.failures.size() < kMaxListedFailures) {
      result.failures.push_back(absl::StrCat(capture_id, ": ", why));
    }
  };
  // Each device's current keyframe, decompressed once: a fleet-wide walk interleaves devices by time,
  // so remembering only the last keyframe read would decompress one per capture. One keyframe per
  // device is held (a device's deltas all follow their keyframe), about the size of one raw capture.
  std::map<std::string, std::pair<std::string, absl::StatusOr<std::string>>> keyframes;  // device -> (id, bytes)
  auto keyframe_of = [&](const std::string& device, const std::string& id) -> const absl::StatusOr<std::string>& {
    auto it = keyframes.find(device);
    if (it != keyframes.end() && it->second.first == id) return it->second.second;
    absl::StatusOr<std::string> bytes;
    absl::StatusOr<std::optional<storage::CaptureStore::RawCapture>> base = store.GetRawCapture(id);
    if (!base.ok()) {
      bytes = base.status();
    } else if (!base->has_value()) {
      bytes = absl::DataLossError(absl::StrCat("its keyframe ", id, " is not stored"));
    } else if (absl::Status kept = storage::RawTextKept(**base); !kept.ok()) {
      // Retention never drops a keyframe's raw text while a delta with its own names it; a store edited
      // otherwise still says what is missing.
      bytes = absl::DataLossError(absl::StrCat("its keyframe: ", kept.message()));
    } else {
      bytes = wire::DecompressStoredCapture((*base)->raw_codec, (*base)->raw_blob);
      if (!bytes.ok()) bytes = absl::DataLossError(absl::StrCat("its keyframe ", id, ": ", bytes.status().message()));
    }
    auto& slot = keyframes[device];
    slot = {id, std::move(bytes)};
    return slot.second;
  };
  absl::Status walked = walk([&](const storage::CaptureStore::RawCapture& raw) {
    if (storage::IsDroppedRawCodec(raw.raw_codec)) {
      ++result.skipped_raw_dropped;
      int days = 0;
      if (absl::SimpleAtoi(raw.raw_codec.substr(sizeof(storage::kDroppedRawCodecPrefix) - 1), &days)) {
        result.skipped_raw_days = days;
      }
      return;
    }
    std::string_view base;
    if (!raw.raw_base.empty()) {
      const absl::StatusOr<std::string>& k = keyframe_of(raw.device_id, raw.raw_base);
      if (!k.ok()) {
        fail(raw.capture_id, k.status().message());
        return;
      }
      base = *k;
    }
    absl::StatusOr<capture::Capture> capture = wire::DecodeStoredCapture(raw.raw_codec, raw.raw_blob, base);
    if (!capture.ok()) {
      fail(raw.capture_id, capture.status().message());
      return;
    }
    report::Report report = accounting::Account(*capture);
    // As at ingest: the stored identity and time, not the capture header's.
    report.device_id = raw.device_id;
    report.captured_at = raw.captured_at;
    if (absl::Status s = store.ReplaceReport(raw.capture_id, report, report::ReportToJson(report, -1)); !s.ok()) {
      fail(raw.capture_id, s.message());
      return;
    }
    ++result.reaccounted;
  });
  if (!walked.ok()) return walked;
  return result;
}

}  // namespace

std::string DescribeReaccountSkips(const ReaccountResult& result) {
  if (result.skipped_raw_dropped == 0) return "";
  return absl::StrCat(", ", result.skipped_raw_dropped, " skipped: their raw text is beyond the raw window (",
                      result.skipped_raw_days > 0
                          ? absl::StrCat(result.skipped_raw_days, result.skipped_raw_days == 1 ? " day, " : " days, ")
                          : std::string(),
                      "memfleet-server --retain-raw-days), their reports stay as they were");
}

absl::StatusOr<ReaccountResult> ReaccountCaptures(storage::CaptureStore& store, const std::string& device_id) {
  return ReaccountWalk(store, [&](const std::function<void(const storage::CaptureStore::RawCapture&)>& fn) {
    return store.ForEachRawCapture(device_id, fn);
  });
}

absl::StatusOr<ReaccountResult> ReaccountSharedCaptures(storage::CaptureStore& store, storage::FleetStore& shared,
                                                        const std::string& device_id, const std::string& now) {
  storage::ReaccountRun run;
  absl::StatusOr<ReaccountResult> result =
      ReaccountWalk(store, [&](const std::function<void(const storage::CaptureStore::RawCapture&)>& fn) {
        absl::StatusOr<storage::ReaccountRun> walked = shared.ForEachClaimedRawCapture(device_id, now, fn);
        if (walked.ok()) run = *walked;
        return walked.status();
      });
  if (result.ok()) {
    result->run_id = run.run_id;
    result->joined_run = run.joined;
  }
  return result;
}

}  // namespace memfleet::server
