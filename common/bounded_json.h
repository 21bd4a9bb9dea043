// JSON from outside the process (a device's capture.json, an uploaded file, a server's reply) parsed with
// its size and nesting depth bounded, and untrusted text quoted into messages by a bounded snippet.
// nlohmann parses without recursion but dumps, copies and compares recursively, so a valid document
// 100,000 levels deep parses and then overflows the stack at its first dump(); the depth is checked on
// the raw text before any DOM is built.
//
//   absl::StatusOr<nlohmann::json> doc = ParseBoundedJson(text, JsonBounds{1 << 20, kMaxJsonDepth});
//   absl::StrCat("\"format\" is ", JsonValueSnippet(v));   // 2, "abc…", an array of 3 elements
//
// Pure functions; thread-safe; no exception leaves them.
#ifndef MEMFLEET_COMMON_BOUNDED_JSON_H_
#define MEMFLEET_COMMON_BOUNDED_JSON_H_

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/untrusted_text.h"

namespace memfleet {

// Deep enough for any document memfleet reads or writes (a report is 4 levels deep, a baseline 5), shallow
// enough that a recursive walk of it needs a few kilobytes of stack.
inline constexpr int kMaxJsonDepth = 64;

// The longest untrusted value a message quotes, in bytes before escaping.
struct JsonBounds {
  size_t max_bytes = 0;
  int max_depth = kMaxJsonDepth;
};

// InvalidArgument when `text` is longer than bounds.max_bytes or opens more than bounds.max_depth arrays
// and objects inside one another (brackets inside strings do not count). One pass, no allocation.
absl::Status CheckJsonBounds(std::string_view text, const JsonBounds& bounds);

// CheckJsonBounds, then nlohmann's parser. InvalidArgument with a bounded message for text out of bounds
// or not JSON (invalid UTF-8 included). Messages carry no file name: the caller says what was parsed.
absl::StatusOr<nlohmann::json> ParseBoundedJson(std::string_view text, const JsonBounds& bounds);
absl::StatusOr<nlohmann::ordered_json> ParseBoundedOrderedJson(std::string_view text, const JsonBounds& bounds);

// A value for an error message, never longer than a few dozen bytes: null, true, numbers as written,
// strings as QuotedSnippet, containers by kind and size ("an array of 3 elements", "an object of 2 fields").
std::string JsonValueSnippet(const nlohmann::json& value);
std::string JsonValueSnippet(const nlohmann::ordered_json& value);

}  // namespace memfleet

#endif  // MEMFLEET_COMMON_BOUNDED_JSON_H_
