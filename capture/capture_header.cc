#include "capture/capture_header.h"

#include <cstdint>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/bounded_json.h"

namespace memfleet::capture {
namespace {

using nlohmann::json;

absl::Status FieldError(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("capture.json: \"", field, "\" ", what));
}

// The value of an unsigned integer field; JSON floats ("4096.0") and negatives are refused.
bool AsUnsigned(const json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer() && v.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(v.get<int64_t>());
    return true;
  }
  return false;
}

void ParseLabelsField(const json& doc, CaptureHeader* h) {
  const auto labels = doc.find("labels");
  if (labels == doc.end() || labels->is_null()) return;
  if (!labels->is_object()) {
    h->labels_problem = std::string(FieldError("labels", "is not an object of \"key\": \"value\" strings").message());
    return;
  }
  Labels parsed;
  for (const auto& [key, value] : labels->items()) {
    if (!value.is_string()) {
      h->labels_problem = std::string(
          FieldError("labels", absl::StrCat("has a value that is not a string: ", JsonValueSnippet(value))).message());
      return;
    }
    parsed[key] = value.get<std::string>();
  }
  if (absl::Status s = CheckLabels(parsed); !s.ok()) {
    h->labels_problem = std::string(FieldError("labels", s.message()).message());
    return;
  }
  h->labels = std::move(parsed);
}

absl::StatusOr<CaptureHeader> ParseObject(const json& doc) {
  if (!doc.is_object()) return absl::InvalidArgumentError("capture.json: not a JSON object");
  CaptureHeader h;

  const auto format = doc.find("format");
  uint64_t format_value = 0;
  if (format == doc.end()) return FieldError("format", "is missing (expected 1)");
  if (!AsUnsigned(*format, &format_value) || format_value != 1) {
    return FieldError("format", absl::StrCat("is ", JsonValueSnippet(*format), "; only format 1 is known"));
  }
  h.format = 1;

  const auto device_id = doc.find("device_id");
  if (device_id == doc.end() || !device_id->is_string() || device_id->get_ref<const std::string&>().empty()) {
    return FieldError("device_id", "must be a non-empty string");
  }
  h.device_id = device_id->get<std::string>();

  const auto captured_at = doc.find("captured_at");
  if (captured_at == doc.end() || !captured_at->is_string() || captured_at->get_ref<const std::string&>().empty()) {
    return FieldError("captured_at", "must be an RFC 3339 time string");
  }
  h.captured_at = captured_at->get<std::string>();

  const auto page_size = doc.find("page_size");
  if (page_size != doc.end() && !page_size->is_null()) {
    uint64_t v = 0;
    if (!AsUnsigned(*page_size, &v) || v < 4096 || v > 65536 || (v & (v - 1)) != 0) {
      return FieldError("page_size", absl::StrCat("is ", JsonValueSnippet(*page_size),
                                                  "; expected a power of two from 4096 to 65536"));
    }
    h.page_size = v;
    h.page_size_defaulted = false;
  }

  const auto ddr = doc.find("ddr_size_kb");
  if (ddr != doc.end() && !ddr->is_null()) {
    uint64_t v = 0;
    if (!AsUnsigned(*ddr, &v) || v == 0) {
      return FieldError("ddr_size_kb", absl::StrCat("is ", JsonValueSnippet(*ddr), "; expected a positive integer"));
    }
    if (v > kMaxDdrSizeKb) {
      // The rest of the header is sound: only the figures that need the DDR size are lost.
      h.ddr_size_kb_problem =
          std::string(FieldError("ddr_size_kb", absl::StrCat("is ", v, "; more than the 64 TiB (", kMaxDdrSizeKb,
                                                             " kB) a device can have"))
                          .message());
    } else {
      h.ddr_size_kb = v;
    }
  }

  const auto android = doc.find("android_version");
  if (android != doc.end() && !android->is_null()) {
    // ro.build.version.release is a string property, so "14" is as likely as 14.
    uint64_t v = 0;
    int parsed = 0;
    if (AsUnsigned(*android, &v) && v >= 1 && v <= 1000) {
      h.android_version = static_cast<int>(v);
    } else if (android->is_string() && absl::SimpleAtoi(android->get_ref<const std::string&>(), &parsed) &&
               parsed >= 1 && parsed <= 1000) {
      h.android_version = parsed;
    } else {
      return FieldError("android_version",
                        absl::StrCat("is ", JsonValueSnippet(*android), "; expected an integer such as 14"));
    }
  }

  ParseLabelsField(doc, &h);

  for (const auto& [key, value] : doc.items()) {
    if (key == "format" || key == "device_id" || key == "captured_at" || key == "page_size" || key == "ddr_size_kb" ||
        key == "android_version" || key == "labels") {
      continue;
    }
    // Facts are strings; other values are fields a later format revision may define.
    if (value.is_string()) h.facts[key] = value.get<std::string>();
  }
  return h;
}

}  // namespace

absl::StatusOr<CaptureHeader> ParseCaptureHeader(std::string_view json_text_in) {
  const absl::string_view json_text(json_text_in.data(), json_text_in.size());
  if (json_text.size() > kMaxCaptureHeaderBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("capture.json: ", json_text.size(), " bytes; a header is far smaller"));
  }
  if (absl::StripAsciiWhitespace(json_text).empty()) {
    return absl::InvalidArgumentError("capture.json: empty");
  }
  absl::StatusOr<json> doc = ParseBoundedJson(json_text_in, JsonBounds{kMaxCaptureHeaderBytes, kMaxJsonDepth});
  if (!doc.ok()) {
    return absl::Status(doc.status().code(), absl::StrCat("capture.json: ", doc.status().message()));
  }
  // get<> and get_ref<> throw only on a type mismatch, which ParseObject checks first; no exception may
  // leave this library all the same.
  try {
    return ParseObject(*doc);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("capture.json: ", QuotedSnippet(e.what(), 160)));
  }
}

}  // namespace memfleet::capture
