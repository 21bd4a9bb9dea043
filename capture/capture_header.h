// Parses capture.json, the header of a capture (docs/capture-format.md): device id, time, page size,
// DDR size and optional build facts.
//
//   absl::StatusOr<CaptureHeader> h = ParseCaptureHeader(json_text);
#ifndef MEMFLEET_CAPTURE_CAPTURE_HEADER_H_
#define MEMFLEET_CAPTURE_CAPTURE_HEADER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "capture/labels.h"

namespace memfleet::capture {

// A capture header is a few hundred bytes; a megabyte is not a header.
inline constexpr size_t kMaxCaptureHeaderBytes = 1 << 20;

// 64 TiB in kB. Phones carry at most tens of GiB and the largest single machines sold a few tens of TiB,
// so a larger DDR size is a corrupt or hostile header; and the bound keeps every figure derived from it
// (static_reserved_kb, total_kb) many orders of magnitude inside the report's int64 kB.
inline constexpr uint64_t kMaxDdrSizeKb = uint64_t{64} << 30;

struct CaptureHeader {
  int format = 1;
  std::string device_id;
  std::string captured_at;          // RFC 3339 UTC, as written
  uint64_t page_size = 4096;        // default when absent
  bool page_size_defaulted = true;  // the header had no page_size
  std::optional<uint64_t> ddr_size_kb;
  // Why a ddr_size_kb the header gave was not kept (above 64 TiB): "capture.json: \"ddr_size_kb\" is ...".
  std::optional<std::string> ddr_size_kb_problem;
  std::optional<int> android_version;  // "android_version" (e.g. 14, 16); selects the dumpsys formulas
  // Other string facts of the header ("model", "soc", "build_fingerprint", "kernel", ...), verbatim.
  std::map<std::string, std::string> facts;
  // "labels": {"run": "1234"} (the agent's --label flags). Labels that break the rules of labels.h (or a
  // "labels" that is not an object of strings) do not fail the header, which the engine still reads: they
  // are left out, with the reason in labels_problem, and the server refuses such a capture.
  Labels labels;
  std::optional<std::string> labels_problem;
};

// InvalidArgument for text that is not a JSON object (or is larger than kMaxCaptureHeaderBytes, or nested
// more than kMaxJsonDepth levels deep), a format other than 1, a page_size that is not a power of two in
// [4096, 65536], or a field of the wrong type (ddr_size_kb must be a positive integer). Messages start with
// "capture.json: " and quote untrusted values by a bounded snippet. A ddr_size_kb above 64 TiB is not an
// error: it is left unset with the reason in ddr_size_kb_problem.
absl::StatusOr<CaptureHeader> ParseCaptureHeader(std::string_view json_text);

}  // namespace memfleet::capture

#endif  // MEMFLEET_CAPTURE_CAPTURE_HEADER_H_
