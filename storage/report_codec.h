// The stored form of a report's JSON: a zstd frame compressed with a dictionary trained on reports and
// built into memfleet (storage/report_dictionary.zdict), so a ~11 kB report of the sample devices is
// stored in ~0.5-1.2 kB (docs/performance.md, "Storage"). The frame names its dictionary by id, so a
// later dictionary can be added without rewriting old reports; id 0 is a plain zstd frame.
//
//   std::string blob = CompressReportJson(json);
//   absl::StatusOr<std::string> back = DecompressReportJson(blob);   // == json
#ifndef MEMFLEET_STORAGE_REPORT_CODEC_H_
#define MEMFLEET_STORAGE_REPORT_CODEC_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/sqlite_db.h"

namespace memfleet::storage {

// The id the built-in dictionary writes into every frame.
inline constexpr uint32_t kReportDictionaryId = 1296433153;  // "MF\0\1"

std::string CompressReportJson(std::string_view json);

// DataLoss when `blob` is not a frame CompressReportJson wrote (corrupt, truncated, an unknown
// dictionary, or content larger than report::kMaxReportJsonBytes).
absl::StatusOr<std::string> DecompressReportJson(std::string_view blob);

// Registers the SQL function memfleet_compress_report(text) -> blob on `db`, which the schema migration
// that moved reports into device_reports uses to rewrite the stored ones.
absl::Status RegisterReportCodecSqlFunctions(SqliteDb& db);

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_REPORT_CODEC_H_
