#include "accounting/graphics_libraries.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "accounting/text_util.h"

namespace memfleet::accounting {
namespace {

absl::Status LineError(int line_number, absl::string_view what, absl::string_view line) {
  return absl::InvalidArgumentError(
      absl::StrCat("graphics library list line ", line_number, ": ", what, ": \"", Snippet(ToStd(line), 80), "\""));
}

bool HasWhitespace(absl::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return absl::ascii_isspace(static_cast<unsigned char>(c)); });
}

}  // namespace

absl::StatusOr<GraphicsLibraries> GraphicsLibraries::Parse(std::string_view text_in) {
  const absl::string_view text(text_in.data(), text_in.size());
  GraphicsLibraries libs;
  std::string group;
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_number;
    const absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line.front() == '#') continue;
    if (line.front() == '[') {
      if (line.back() != ']' || line.size() < 2) {
        return LineError(line_number, "unclosed [group]", raw);
      }
      const absl::string_view name = absl::StripAsciiWhitespace(line.substr(1, line.size() - 2));
      if (name.empty() || HasWhitespace(name) || name.find_first_of("[]") != absl::string_view::npos) {
        return LineError(line_number, "a group name is one word in brackets, like [qcom]", raw);
      }
      group = std::string(name);
      continue;
    }
    if (HasWhitespace(line)) {
      return LineError(line_number, "whitespace inside a library prefix (one prefix per line)", raw);
    }
    if (line.find('/') != absl::string_view::npos) {
      // Matching is on the file's base name, so a prefix with a '/' could never match anything.
      return LineError(line_number, "a prefix is matched against a file's base name and cannot hold '/'", raw);
    }
    if (line.find('\0') != absl::string_view::npos) {
      return LineError(line_number, "NUL byte in a library prefix", raw);
    }
    libs.entries_.push_back(Entry{group, std::string(line)});
  }
  return libs;
}

const GraphicsLibraries& GraphicsLibraries::Default() {
  // Parsed once; a test checks the built-in text parses, so the fallback (match nothing) is never
  // taken in a released binary, and device data can never reach an abort through here.
  static const GraphicsLibraries* const kDefault = [] {
    absl::StatusOr<GraphicsLibraries> libs = Parse(BuiltinGraphicsLibrariesText());
    return new GraphicsLibraries(libs.ok() ? *std::move(libs) : GraphicsLibraries());
  }();
  return *kDefault;
}

bool GraphicsLibraries::MatchesPath(std::string_view path_in) const {
  const size_t slash = path_in.rfind('/');
  return MatchesBaseName(slash == std::string_view::npos ? path_in : path_in.substr(slash + 1));
}

bool GraphicsLibraries::MatchesBaseName(std::string_view base_name_in) const {
  const absl::string_view base_name(base_name_in.data(), base_name_in.size());
  if (base_name.empty()) return false;
  for (const Entry& e : entries_) {
    if (absl::StartsWith(base_name, e.prefix)) return true;
  }
  return false;
}

}  // namespace memfleet::accounting
