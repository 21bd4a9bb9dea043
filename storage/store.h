// Store: memfleet's persistent state — devices, raw captures (compressed), device and per-process
// reports, sweeps. The interface is database-neutral so a lab that outgrows one server can put a shared
// database behind it; SqliteStore (sqlite_store.h) is the embedded default.
//
//   absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore("/var/lib/memfleet/memfleet.db");
//   absl::StatusOr<bool> inserted = (*store)->PutCapture(record);   // false: already stored (dedup)
//
// Thread-safety: every method may be called from any thread; implementations serialize writes (one
// writer) and may run reads concurrently.
#ifndef MEMFLEET_STORAGE_STORE_H_
#define MEMFLEET_STORAGE_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "report/report.h"

namespace memfleet::storage {

struct DeviceRecord {
  std::string device_id;
  std::string model;
  std::string soc;
  std::string build_fingerprint;
  std::string kernel;
  std::string agent_version;
  uint32_t page_size = 0;
  std::string platform;        // from the latest report
  std::string last_seen_at;    // RFC 3339
  // Captures the device's full spool dropped unsent. UpsertDevice adds it to the stored total (an agent
  // reports its drops since the last report); reads give the total.
  uint64_t dropped_captures = 0;
  // The device's clock minus the server's at its latest Hello, in seconds (positive: the device is
  // ahead); nullopt when unknown (an agent that does not send its time).
  std::optional<int64_t> clock_skew_s;
};

struct CaptureRecord {
  std::string capture_id;      // unique; with device_id, the dedup key
  std::string device_id;
  std::string captured_at;     // RFC 3339 UTC
  std::string received_at;     // RFC 3339 UTC
  std::string sweep_id;        // "" when periodic
  std::string raw_codec;       // how raw_blob is encoded, e.g. "zstd+proto" / "gzip+proto"
  std::string raw_blob;        // the compressed raw capture
  // For raw_codec "zstd-delta+proto": the capture id of the keyframe it references (stored before it,
  // same device, a whole capture). "" for a whole capture.
  std::string raw_base;
  uint64_t raw_bytes = 0;      // uncompressed size of the capture's contents
  report::Report report;   // the engine's report of it
  std::string report_json;     // its JSON (ReportToJson), stored verbatim
  std::string build_fingerprint;  // the build it was taken on (capture.json); "" = unknown, stored as NULL
};

struct StoredReport {
  std::string capture_id;
  std::string device_id;
  std::string captured_at;
  std::string report_json;
  // The capture's own build; only LatestReportsPerBuild fills it ("" there: stored before schema 8).
  std::string build_fingerprint;
};

struct DeviceSummaryRow {
  DeviceRecord device;
  uint64_t capture_count = 0;
  std::string last_capture_at;         // "" when none
  std::optional<int64_t> last_total_kb;
};

struct HistoryRow {
  std::string capture_id;
  std::string captured_at;
  int pid = 0;
  std::optional<int64_t> value_kb;
};

struct FleetValueRow {
  DeviceRecord device;
  std::string capture_id;
  std::string captured_at;
  std::optional<int64_t> value_kb;
};

// Tokens: an access token as stored — never the secret, only its SHA-256 (docs/security.md).
struct TokenRecord {
  std::string name;        // unique, chosen by the admin ("bench-3", "ci-reader")
  std::string kind;        // "agent" | "read" | "admin"
  std::string device_id;   // agent tokens: the one device the token may speak for; "" otherwise
  std::string sha256_hex;  // lowercase hex SHA-256 of the secret
  std::string created_at;  // RFC 3339
  std::string revoked_at;  // "" while the token is valid
};

// Baselines: one imported baseline file, as stored (docs/baselines.md).
struct BaselineRecord {
  int64_t version = 0;      // 1, 2, ... in import order
  std::string name;         // the file's "name"
  std::string imported_at;  // RFC 3339
  std::string raw_text;     // the file verbatim
};

struct SweepRecord {
  std::string sweep_id;
  std::string started_at;
  std::string selector;                       // the CLI's --where terms, joined
  // device_id -> "sent" | "capturing" | "stored" | "failed" | "offline" | "timed_out" | "interrupted"
  std::map<std::string, std::string> states;
  std::string finished_at;                    // "" while running
};

class Store {
 public:
  virtual ~Store() = default;

  virtual absl::Status UpsertDevice(const DeviceRecord& device) = 0;
  // Stores the raw capture, its report and one process row per process, in one transaction.
  // Deduplicates on (device_id, capture_id): false (and changes nothing) when capture_id is already stored
  // for this device; AlreadyExists (and changes nothing) when it is stored for another device.
  virtual absl::StatusOr<bool> PutCapture(const CaptureRecord& capture) = 0;
  // Whether capture_id is stored, for any device.
  virtual absl::StatusOr<bool> HasCapture(const std::string& capture_id) = 0;
  // The device a stored capture belongs to; nullopt when capture_id is not stored.
  virtual absl::StatusOr<std::optional<std::string>> CaptureDevice(const std::string& capture_id) = 0;

  virtual absl::StatusOr<std::vector<DeviceSummaryRow>> ListDevices() = 0;
  virtual absl::StatusOr<std::optional<DeviceRecord>> GetDevice(const std::string& device_id) = 0;
  // The latest report of the device at or before `at` (RFC 3339; "" = latest). nullopt: nothing stored.
  virtual absl::StatusOr<std::optional<StoredReport>> GetReport(const std::string& device_id,
                                                                const std::string& at) = 0;
  virtual absl::StatusOr<std::optional<StoredReport>> GetReportByCapture(const std::string& capture_id) = 0;
  // One process figure over time, oldest first. `metric` is a process figure column (total_kb, pss_kb,
  // swap_pss_kb, gfxdev_kb, gl_kb, dma_kb, native_graphics_kb, non_graphics_kb, graphics_dma_kb);
  // InvalidArgument for anything else. `since` "" = all; limit 0 = all.
  virtual absl::StatusOr<std::vector<HistoryRow>> ProcessHistory(const std::string& device_id,
                                                                 const std::string& process_name,
                                                                 const std::string& metric,
                                                                 const std::string& since, uint32_t limit) = 0;
  // The latest report of every device with a device figure (ddr_kb, mem_total_kb, gcma_kb,
  // static_reserved_kb, kernel_cma_kb, kernel_kb, processes_kb, total_kb), or with a process figure of
  // the named process (`process_name` non-empty; `metric` then a process figure column).
  virtual absl::StatusOr<std::vector<FleetValueRow>> LatestPerDevice(const std::string& metric,
                                                                     const std::string& process_name) = 0;

  // Raw captures for re-accounting, oldest first; `device_id` "" = all. The callback gets the capture
  // id and the stored raw blob/codec and returns the new report (or an error to count as failed).
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
  // One raw capture (a delta's keyframe, say); nullopt when not stored.
  virtual absl::StatusOr<std::optional<RawCapture>> GetRawCapture(const std::string& capture_id) = 0;
  // Replaces the stored report (and its process rows) of a capture.
  virtual absl::Status ReplaceReport(const std::string& capture_id, const report::Report& report,
                                     const std::string& report_json) = 0;

  virtual absl::Status PutSweep(const SweepRecord& sweep) = 0;
  virtual absl::StatusOr<std::optional<SweepRecord>> GetSweep(const std::string& sweep_id) = 0;
  // Sweeps recorded as running (finished_at ""), oldest id first: at a server's start, the ones its
  // previous process never finished.
  virtual absl::StatusOr<std::vector<SweepRecord>> UnfinishedSweeps() {
    return absl::UnimplementedError("this store does not list unfinished sweeps");
  }

  // Storage statistics for benchmarks and docs: bytes of raw blobs, their uncompressed size, rows.
  struct Stats {
    uint64_t captures = 0;
    uint64_t raw_blob_bytes = 0;
    uint64_t raw_bytes = 0;
    uint64_t process_rows = 0;
  };
  virtual absl::StatusOr<Stats> GetStats() = 0;

  // ---- Tokens ----
  // Not pure: a store without tokens (test doubles) has none, which on loopback means auth is off.
  // PutToken: AlreadyExists when the name is taken (revoked names stay taken).
  virtual absl::Status PutToken(const TokenRecord& /*token*/) {
    return absl::UnimplementedError("this store does not keep tokens");
  }
  // The token (valid or revoked) whose secret hashes to sha256_hex; nullopt: none.
  virtual absl::StatusOr<std::optional<TokenRecord>> FindTokenByHash(const std::string& /*sha256_hex*/) {
    return std::optional<TokenRecord>();
  }
  // Every token, revoked ones included, by name.
  virtual absl::StatusOr<std::vector<TokenRecord>> ListTokens() { return std::vector<TokenRecord>(); }
  // True when any token row exists (revoked included): authentication is then on.
  virtual absl::StatusOr<bool> HasTokens() { return false; }
  // Sets revoked_at; false when no valid token has that name.
  virtual absl::StatusOr<bool> RevokeToken(const std::string& /*name*/, const std::string& /*revoked_at*/) {
    return absl::UnimplementedError("this store does not keep tokens");
  }

  // ---- Baselines ----
  // Not pure, like tokens: test doubles need not keep baselines.
  // Stores a new version (the previous ones stay) and returns its number.
  virtual absl::StatusOr<int64_t> PutBaseline(const std::string& /*name*/, const std::string& /*imported_at*/,
                                              const std::string& /*raw_text*/) {
    return absl::UnimplementedError("this store does not keep baselines");
  }
  // version 0 = the latest; nullopt: no such version (or none imported).
  virtual absl::StatusOr<std::optional<BaselineRecord>> GetBaseline(int64_t /*version*/) {
    return std::optional<BaselineRecord>();
  }
  // The latest report of each device among the captures of a sweep, by device id.
  virtual absl::StatusOr<std::vector<StoredReport>> LatestReportsOfSweep(const std::string& /*sweep_id*/) {
    return absl::UnimplementedError("this store does not list a sweep's reports");
  }
  // The latest report of each device whose latest capture is at or after `since` ("" = every device), by
  // device id.
  virtual absl::StatusOr<std::vector<StoredReport>> LatestReportsSince(const std::string& /*since*/) {
    return absl::UnimplementedError("this store does not list the latest reports");
  }
  // For each (device, build its captures were taken on), the latest report of that device on that build
  // if it is at or after `since` ("" = all), by device id then build; build_fingerprint is filled.
  virtual absl::StatusOr<std::vector<StoredReport>> LatestReportsPerBuild(const std::string& /*since*/) {
    return absl::UnimplementedError("this store does not list the latest reports per build");
  }
  // ---- end Baselines ----
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_STORE_H_
