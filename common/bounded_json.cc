#include "common/bounded_json.h"

#include <cstdio>
#include <exception>

#include "absl/strings/str_cat.h"

namespace memfleet {
namespace {

// The longest library message (a parse error) a status carries, in bytes before escaping.
constexpr size_t kMaxMessageBytes = 160;

// nlohmann's what(), without its "[json.exception.parse_error.101] " tag, escaped and cut: it quotes the
// token it stopped at, which can be most of the document.
std::string BoundedLibraryMessage(std::string_view what) {
  if (!what.empty() && what.front() == '[') {
    const size_t end = what.find("] ");
    if (end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  return Snippet(what, kMaxMessageBytes);
}

template <typename Json>
absl::StatusOr<Json> Parse(std::string_view text, const JsonBounds& bounds) {
  if (absl::Status s = CheckJsonBounds(text, bounds); !s.ok()) return s;
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not valid JSON: ", BoundedLibraryMessage(e.what())));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("cannot parse JSON: ", BoundedLibraryMessage(e.what())));
  }
}

template <typename Json>
std::string ValueSnippet(const Json& v) {
  if (v.is_string()) return QuotedSnippet(v.template get_ref<const std::string&>());
  if (v.is_array()) return absl::StrCat("an array of ", v.size(), v.size() == 1 ? " element" : " elements");
  if (v.is_object()) return absl::StrCat("an object of ", v.size(), v.size() == 1 ? " field" : " fields");
  if (v.is_binary()) return "binary data";
  if (v.is_discarded()) return "nothing";
  // null, a boolean or a number: a few dozen bytes at most, and no recursion.
  return v.dump();
}

}  // namespace

absl::Status CheckJsonBounds(std::string_view text, const JsonBounds& bounds) {
  if (text.size() > bounds.max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(text.size(), " bytes, more than the ", bounds.max_bytes, " allowed"));
  }
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > bounds.max_depth) {
        return absl::InvalidArgumentError(
            absl::StrCat("nested more than ", bounds.max_depth, " levels deep (at byte ", i, ")"));
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<nlohmann::json> ParseBoundedJson(std::string_view text, const JsonBounds& bounds) {
  return Parse<nlohmann::json>(text, bounds);
}

absl::StatusOr<nlohmann::ordered_json> ParseBoundedOrderedJson(std::string_view text, const JsonBounds& bounds) {
  return Parse<nlohmann::ordered_json>(text, bounds);
}

std::string JsonValueSnippet(const nlohmann::json& value) { return ValueSnippet(value); }
std::string JsonValueSnippet(const nlohmann::ordered_json& value) { return ValueSnippet(value); }

}  // namespace memfleet
