// CaptureStore: the ingest side of the store — devices as they say Hello, raw captures and their reports
// (stored once, deduplicated), and the raw captures again for re-accounting. Every method is pure: a
// wrapper (a test double, a decorator) must forward or fail each one explicitly.
#ifndef MEMFLEET_STORAGE_CAPTURE_STORE_H_
#define MEMFLEET_STORAGE_CAPTURE_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "report/report.h"
#include "storage/records.h"

namespace memfleet::storage {

class CaptureStore {
 public:
  virtual ~CaptureStore() = default;

  // A Hello's facts (and dropped captures). A retired device becomes active again: its agent is back.
  virtual absl::Status UpsertDevice(const DeviceRecord& device) = 0;
  // `memfleet devices retire`: the device leaves the fleet's views and keeps its history. Sets
  // DeviceRecord::retired_at to `retired_at` (RFC 3339) unless it is retired already (the first time
  // stays). False, changing nothing, when the device is not known.
  virtual absl::StatusOr<bool> RetireDevice(const std::string& device_id, const std::string& retired_at) = 0;
  // `memfleet devices retire --purge`: deletes the device's whole history and then its row, in
  // transactions of at most kPurgeBatchCaptures captures, every delta before the keyframe it names (a
  // keyframe never goes while a delta of it stays). Returns the captures deleted. FailedPrecondition,
  // keeping the device row, when captures of it arrived during the purge (its agent came back).
  static constexpr size_t kPurgeBatchCaptures = 100;
  virtual absl::StatusOr<uint64_t> PurgeDevice(const std::string& device_id) = 0;
  // Stores the raw capture, its report and one process row per process, in one transaction.
  // Deduplicates on (device_id, capture_id): false (and changes nothing) when capture_id is already stored
  // for this device; AlreadyExists (and changes nothing) when it is stored for another device.
  virtual absl::StatusOr<bool> PutCapture(const CaptureRecord& capture) = 0;
  // PutCapture for several captures in ONE transaction (one commit): the server's group commit, a spooled
  // backlog, bulk loads. Each capture is deduplicated as PutCapture does; returns, in order, whether each
  // was new (false: stored before, or an earlier capture of the batch had its id). Any invalid record or
  // failed write stores none of them (the caller may then store them one at a time).
  virtual absl::StatusOr<std::vector<bool>> PutCaptures(const std::vector<CaptureRecord>& captures) = 0;
  // Whether capture_id is stored, for any device.
  virtual absl::StatusOr<bool> HasCapture(const std::string& capture_id) = 0;
  // The device a stored capture belongs to; nullopt when capture_id is not stored.
  virtual absl::StatusOr<std::optional<std::string>> CaptureDevice(const std::string& capture_id) = 0;

  // Raw captures for re-accounting, oldest first; `device_id` "" = all. The callback gets the capture
  // id and the stored raw blob/codec.
  struct RawCapture {
    std::string capture_id;
    std::string device_id;
    std::string captured_at;
    std::string raw_codec;
    std::string raw_blob;
    std::string raw_base;  // the keyframe's capture id for a delta; "" for a whole capture
  };
  virtual absl::Status ForEachRawCapture(const std::string& device_id,
                                         const std::function<void(const RawCapture&)>& fn) = 0;
  // One raw capture (a delta's keyframe, say); nullopt when not stored. A capture whose raw text retention
  // dropped is still returned, with the dropped codec and no blob (RawTextKept says so).
  virtual absl::StatusOr<std::optional<RawCapture>> GetRawCapture(const std::string& capture_id) = 0;
  // Replaces the stored report (and its process rows) of a capture.
  virtual absl::Status ReplaceReport(const std::string& capture_id, const report::Report& report,
                                     const std::string& report_json) = 0;

  // Storage statistics for benchmarks and docs: bytes of raw blobs, their uncompressed size, rows.
  struct Stats {
    uint64_t captures = 0;
    uint64_t raw_blob_bytes = 0;
    uint64_t raw_bytes = 0;
    uint64_t process_rows = 0;
  };
  virtual absl::StatusOr<Stats> GetStats() = 0;
};

// The raw_codec of a capture whose raw text was dropped beyond the raw window (`memfleet-server
// --retain-raw-days N`): this prefix and N, so that whoever reads it later can say which window dropped it
// (the server's flag may have changed since). Its raw_blob is empty; its row, report, process figures and
// labels stay as they were.
inline constexpr char kDroppedRawCodecPrefix[] = "dropped:";

inline std::string DroppedRawCodec(int raw_days) { return absl::StrCat(kDroppedRawCodecPrefix, raw_days); }

inline bool IsDroppedRawCodec(const std::string& raw_codec) {
  return absl::StartsWith(raw_codec, kDroppedRawCodecPrefix);
}

// OK when the capture's raw text is stored; else FailedPrecondition naming the window that dropped it, for
// everything that reads raw text (re-accounting, a delta's keyframe) to say so instead of failing to
// decode an empty blob.
inline absl::Status RawTextKept(const CaptureStore::RawCapture& raw) {
  if (!IsDroppedRawCodec(raw.raw_codec)) return absl::OkStatus();
  int raw_days = 0;
  const bool known = absl::SimpleAtoi(raw.raw_codec.substr(sizeof(kDroppedRawCodecPrefix) - 1), &raw_days);
  return absl::FailedPreconditionError(
      absl::StrCat("the raw text of capture ", raw.capture_id, " (", raw.captured_at,
                   ") is no longer stored: raw captures are kept ",
                   known ? absl::StrCat(raw_days, " days") : std::string("for a window of their own"),
                   " (memfleet-server --retain-raw-days); its report, process figures and labels are kept"));
}

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_CAPTURE_STORE_H_
