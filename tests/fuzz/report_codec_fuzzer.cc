// libFuzzer target: DecompressReportJson (storage/report_codec.h), which reads stored report frames —
// bytes of the database file, which a damaged disk or a hand edit can make anything. It must not crash,
// over-allocate (a frame's claimed size is checked against report::kMaxReportJsonBytes first) or hit UB;
// and whatever it is given, compressing it and decompressing that must give it back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "report/report_json.h"
#include "storage/report_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::string> json = memfleet::storage::DecompressReportJson(input);
  if (json.ok() && json->size() > memfleet::report::kMaxReportJsonBytes) std::abort();
  absl::StatusOr<std::string> back =
      memfleet::storage::DecompressReportJson(memfleet::storage::CompressReportJson(input));
  if (!back.ok() || *back != input) std::abort();
  return 0;
}
