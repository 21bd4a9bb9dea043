// Capture ids: the grammar agents write and the server enforces. A capture id is the global dedup key,
// so it must name its device beyond doubt and differ between two agents that share a device id:
//
//   <device id>-<YYYYMMDDTHHMMSSZ>-<instance: 8 lowercase hex>-<sequence: 6 digits>
//   lab-7-20261202T161500Z-3f9a0c1e-000042
//
// The instance is random per agent start (NewCaptureInstance). Ids without it
// ("<device id>-<YYYYMMDDTHHMMSSZ>-<6 digits>", written by earlier agents) are still accepted so that
// their spools drain after an upgrade. The suffix after the device id has a fixed shape, so the device id
// is whatever precedes it: device "phone" cannot write an id of device "phone-42".
//
//   absl::StatusOr<std::string> id = MakeCaptureId("lab-7", "2026-12-02T16:15:00.123Z", "3f9a0c1e", 42);
//   std::optional<std::string_view> device = CaptureIdDevice(*id);   // "lab-7"
//
// Pure functions (NewCaptureInstance reads the kernel's random source); thread-safe.
#ifndef MEMFLEET_PROTO_CAPTURE_ID_H_
#define MEMFLEET_PROTO_CAPTURE_ID_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace memfleet::wire {

inline constexpr size_t kCaptureInstanceChars = 8;

// The id of a capture taken at `captured_at` ("YYYY-MM-DDTHH:MM:SS.mmmZ" or "YYYY-MM-DDTHH:MM:SSZ"; the id
// keeps the whole second) by the agent instance `instance` (kCaptureInstanceChars lowercase hex digits);
// the sequence is taken mod 10^6. InvalidArgument for an empty device id, a bad time or a bad instance.
absl::StatusOr<std::string> MakeCaptureId(std::string_view device_id, std::string_view captured_at,
                                          std::string_view instance, uint64_t sequence);

// The device id an id names, or nullopt when the id does not follow the grammar above (either form).
std::optional<std::string_view> CaptureIdDevice(std::string_view capture_id);

// OK when `capture_id` follows the grammar and names `device_id`; InvalidArgument saying which part is
// wrong otherwise (the id is quoted shortened and with control bytes replaced).
absl::Status CheckCaptureIdOf(std::string_view device_id, std::string_view capture_id);

// kCaptureInstanceChars lowercase hex digits from getrandom(2): two agents started with the same device
// id (two phones configured alike) then never write the same capture id.
absl::StatusOr<std::string> NewCaptureInstance();

}  // namespace memfleet::wire

#endif  // MEMFLEET_PROTO_CAPTURE_ID_H_
