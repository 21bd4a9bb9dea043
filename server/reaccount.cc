#include "server/reaccount.h"

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
  absl::Status walked = store.ForEachRawCapture(device_id, [&](const storage::Store::RawCapture& raw) {
    absl::StatusOr<accounting::Capture> capture = wire::DecodeStoredCapture(raw.raw_codec, raw.raw_blob);
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
