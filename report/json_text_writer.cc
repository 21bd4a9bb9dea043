#include "report/json_text_writer.h"

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace memfleet::report {
namespace {

// Printable ASCII but the two characters JSON escapes: copied as they are, which is what nearly every
// name, id and figure key is.
bool NeedsNoEscaping(std::string_view text) {
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b >= 0x80 || c == '"' || c == '\\') return false;
  }
  return true;
}

}  // namespace

void JsonTextWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!out_.empty() && out_.back() != '[' && out_.back() != '{') out_.push_back(',');
}

void JsonTextWriter::Key(std::string_view key) {
  if (!out_.empty() && out_.back() != '{') out_.push_back(',');
  AppendQuoted(key);
  out_.push_back(':');
  after_key_ = true;
}

void JsonTextWriter::String(std::string_view text) {
  Separate();
  AppendQuoted(text);
}

void JsonTextWriter::AppendQuoted(std::string_view text) {
  if (NeedsNoEscaping(text)) {
    out_.push_back('"');
    out_.append(text);
    out_.push_back('"');
    return;
  }
  // Control bytes, quotes and anything outside ASCII (device text may hold any bytes: a process name from
  // cmdline): nlohmann's own escaping and UTF-8 replacement, so that the text is what its dump writes.
  out_ += nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void JsonTextWriter::Int(int64_t value) {
  Separate();
  absl::StrAppend(&out_, value);
}

void JsonTextWriter::UInt(uint64_t value) {
  Separate();
  absl::StrAppend(&out_, value);
}

void JsonTextWriter::Bool(bool value) {
  Separate();
  out_.append(value ? "true" : "false");
}

void JsonTextWriter::Null() {
  Separate();
  out_.append("null");
}

}  // namespace memfleet::report
