// The stored form of a report's JSON: a zstd frame compressed with a dictionary trained on reports and
// built into memfleet (storage/report_dictionary.zdict), so a ~11 kB report of the sample devices is
// stored in ~0.5-1.2 kB (docs/performance.md, "Storage"). The frame names its dictionary by id, so a
// later dictionary can be added without rewriting old reports; id 0 is a plain zstd frame.
//
// A capture stored as a delta of a keyframe has its report stored against the keyframe's report instead
// (its JSON as a zstd prefix): consecutive reports of one device differ in a few figures, so such a frame
// is a fraction of a dictionary frame. Reading it needs the keyframe's report first. Its frame has
// dictionary id 0, like a plain one: which one it is, the store records (report_blobs.base_no).
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

namespace memfleet::storage {

// The id the built-in dictionary writes into every frame.
inline constexpr uint32_t kReportDictionaryId = 1296433153;  // "MF\0\1"

std::string CompressReportJson(std::string_view json);

// DataLoss when `blob` is not a frame CompressReportJson wrote (corrupt, truncated, an unknown
// dictionary, or content larger than report::kMaxReportJsonBytes).
absl::StatusOr<std::string> DecompressReportJson(std::string_view blob);

// `json` compressed with `base_json` (another report's JSON, as decompressed) as its zstd prefix.
std::string CompressReportJsonAgainst(std::string_view json, std::string_view base_json);

// DataLoss when `blob` is not a frame CompressReportJsonAgainst wrote against exactly `base_json`
// (corrupt, truncated, a dictionary frame, content too large, or another base: the frame carries a
// checksum of its content).
absl::StatusOr<std::string> DecompressReportJsonAgainst(std::string_view blob, std::string_view base_json);

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_REPORT_CODEC_H_
