// libFuzzer target: DecompressReportJson and DecompressReportJsonAgainst (storage/report_codec.h), which
// read stored report frames — bytes of the database file, which a damaged disk or a hand edit can make
// anything. They must not crash, over-allocate (a frame's claimed size is checked against
// report::kMaxReportJsonBytes first) or hit UB; and whatever they are given, compressing it (on its own, or
// against a base report) and decompressing that must give it back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "report/report_json.h"
#include "storage/report_codec.h"

namespace {

// The base the seeds named against_base_*.zst were written against (zstd --patch-from=<this text>).
constexpr std::string_view kBaseReport =
    R"({"device_id":"fuzz-base","platform":"qcom","device":{"total_kb":3000000,"kernel_kb":250000},)"
    R"("processes":[{"pid":1,"name":"init","total_kb":1000,"pss_kb":800},)"
    R"({"pid":700,"name":"surfaceflinger","total_kb":90000,"pss_kb":70000}]})"
    "\n";

void CheckSize(const absl::StatusOr<std::string>& json) {
  if (json.ok() && json->size() > memfleet::report::kMaxReportJsonBytes) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using memfleet::storage::CompressReportJson;
  using memfleet::storage::CompressReportJsonAgainst;
  using memfleet::storage::DecompressReportJson;
  using memfleet::storage::DecompressReportJsonAgainst;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckSize(DecompressReportJson(input));
  CheckSize(DecompressReportJsonAgainst(input, kBaseReport));
  CheckSize(DecompressReportJsonAgainst(input, input));  // a base that is no report
  absl::StatusOr<std::string> back = DecompressReportJson(CompressReportJson(input));
  if (!back.ok() || *back != input) std::abort();
  back = DecompressReportJsonAgainst(CompressReportJsonAgainst(input, kBaseReport), kBaseReport);
  if (!back.ok() || *back != input) std::abort();
  return 0;
}
