// The list of graphics library name prefixes (docs/accounting.md section 5), kept as data: the built-in list
// is accounting/data/graphics_libraries.txt compiled into the binary; a lab can load its own.
//
//   absl::StatusOr<GraphicsLibraries> libs = GraphicsLibraries::Parse(file_text);
//   libs->MatchesBaseName("libGLESv2_adreno.so");   // true
//
// File format: one prefix per line; "# ..." comments; "[group]" lines name the origin group of the
// prefixes that follow; blank lines ignored. Matching is case-sensitive, on the file's base name.
#ifndef MEMFLEET_ACCOUNTING_GRAPHICS_LIBRARIES_H_
#define MEMFLEET_ACCOUNTING_GRAPHICS_LIBRARIES_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace memfleet::accounting {

class GraphicsLibraries {
 public:
  struct Entry {
    std::string group;   // "android", "qcom", ... ("" before any group line)
    std::string prefix;  // "libGLESv2"
  };

  // InvalidArgument (line number) for a line with whitespace inside a prefix, or an unclosed "[group".
  static absl::StatusOr<GraphicsLibraries> Parse(std::string_view text);
  // The built-in list. Never fails (the data file is checked at build time by a test).
  static const GraphicsLibraries& Default();

  // True when the base name of `path` (after the last '/') starts with any prefix.
  bool MatchesPath(std::string_view path) const;
  bool MatchesBaseName(std::string_view base_name) const;

  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

// The text of the built-in data file (generated at build time).
std::string_view BuiltinGraphicsLibrariesText();

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_GRAPHICS_LIBRARIES_H_
