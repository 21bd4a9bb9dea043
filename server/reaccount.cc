#include "server/reaccount.h"

#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "proto/capture_codec.h"
#include "server/accounting/account.h"
#include "server/accounting/report_json.h"

namespace memfleet::server {
namespace {

constexpr size_t kMaxListedFailures = 20;

}  // namespace

absl::StatusOr<ReaccountResult> ReaccountCaptures(storage::Store& store, const std::string& device_id) {
  ReaccountResult result;
  auto fail = [&result](const std::string& capture_id, absl::string_view why) {
    ++result.failed;
    if (result.failures.size() < kMaxListedFailures) {
      result.failures.push_back(absl::StrCat(capture_id, ": ", why));
    }
  };
  // Deltas follow their keyframe in time, so the last keyframe read serves a run of them.
  std::string keyframe_id;
  absl::StatusOr<std::string> keyframe = std::string();
  auto keyframe_of = [&](const std::string& id) -> const absl::StatusOr<std::string>& {
    if (id == keyframe_id) return keyframe;
    keyframe_id = id;
    absl::StatusOr<std::optional<storage::Store::RawCapture>> base = store.GetRawCapture(id);
    if (!base.ok()) {
      keyframe = base.status();
    } else if (!base->has_value()) {
      keyframe = absl::DataLossError(absl::StrCat("its keyframe ", id, " is not stored"));
    } else {
      keyframe = wire::DecompressStoredCapture((*base)->raw_codec, (*base)->raw_blob);
      if (!keyframe.ok()) {
        keyframe = absl::DataLossError(absl::StrCat("its keyframe ", id, ": ", keyframe.status().message()));
      }
    }
    return keyframe;
  };
  absl::Status walked = store.ForEachRawCapture(device_id, [&](const storage::Store::RawCapture& raw) {
    std::string_view base;
    if (!raw.raw_base.empty()) {
      const absl::StatusOr<std::string>& k = keyframe_of(raw.raw_base);
      if (!k.ok()) {
        fail(raw.capture_id, k.status().message());
        return;
      }
      base = *k;
    }
    absl::StatusOr<accounting::Capture> capture = wire::DecodeStoredCapture(raw.raw_codec, raw.raw_blob, base);
    if (!capture.ok()) {
      fail(raw.capture_id, capture.status().message());
      return;
    }
    accounting::Report report = accounting::Account(*capture);
    // As at ingest: the stored identity and time, not the capture header's.
    report.device_id = raw.device_id;
    report.captured_at = raw.captured_at;
    if (absl::Status s = store.ReplaceReport(raw.capture_id, report, accounting::ReportToJson(report, -1)); !s.ok()) {
      fail(raw.capture_id, s.message());
      return;
    }
    ++result.reaccounted;
  });
  if (!walked.ok()) return walked;
  return result;
}

}  // namespace memfleet::server
