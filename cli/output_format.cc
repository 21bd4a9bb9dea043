#include "cli/output_format.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "chart/figure_text.h"
#include "common/untrusted_text.h"

namespace memfleet::cli {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// -12, 3.5, -1.5e+3: what the commands print for figures. A spreadsheet reads these as numbers.
bool IsPlainNumber(std::string_view v) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < v.size() && IsDigit(v[i])) ++i;
    return i > start;
  };
  if (i < v.size() && v[i] == '-') ++i;
  if (!digits()) return false;
  if (i < v.size() && v[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
    ++i;
    if (i < v.size() && (v[i] == '+' || v[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == v.size();
}

// The characters that make a spreadsheet evaluate a cell (OWASP's CSV injection list).
bool StartsLikeAFormula(std::string_view v) {
  if (v.empty()) return false;
  const char c = v.front();
  const bool trigger = c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r';
  return trigger && !IsPlainNumber(v);
}

std::string Escaped(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  char buf[8];
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const size_t len = DecodeUtf8(text, i, &cp);
    if (len == 0) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(text[i])));
      out += buf;
      ++i;
      continue;
    }
    if (IsUnsafeCodePoint(cp) && !(keep_newlines && cp == '\n')) {
      out += VisibleEscape(cp);
    } else {
      out.append(text.data() + i, len);
    }
    i += len;
  }
  return out;
}

}  // namespace

std::string TerminalSafe(std::string_view text) { return Escaped(text, /*keep_newlines=*/false); }

std::string TerminalSafeLines(std::string_view text) { return Escaped(text, /*keep_newlines=*/true); }

std::string FormatKb(long long kb) { return chart::FormatKb(kb); }

std::string FormatKbOrDash(const std::optional<int64_t>& kb) {
  return kb ? FormatKb(*kb) : std::string(chart::kNoValue);
}

std::string TextOrDash(std::string_view text) { return text.empty() ? chart::kNoValue : std::string(text); }

std::string FormatKbHuman(int64_t kb) {
  // long double: |INT64_MIN| must not overflow, and the division keeps one or two decimals.
  long double v = static_cast<long double>(kb);
  long double mag = v < 0 ? -v : v;
  char buf[64];
  if (mag < 1024.0L) {
    std::snprintf(buf, sizeof buf, "%lld kB", static_cast<long long>(kb));
  } else if (mag < 1024.0L * 1024.0L) {
    std::snprintf(buf, sizeof buf, "%.1Lf MiB", v / 1024.0L);  // IEC: kB are KiB, so these are MiB and GiB
  } else {
    std::snprintf(buf, sizeof buf, "%.2Lf GiB", v / (1024.0L * 1024.0L));
  }
  return buf;
}

std::string CsvField(std::string_view value) {
  const bool formula = StartsLikeAFormula(value);
  if (!formula && value.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(value);
  std::string out = formula ? "\"'" : "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string CsvRow(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += CsvField(fields[i]);
  }
  out += "\r\n";
  return out;
}

std::string CsvKb(const std::optional<int64_t>& kb) { return kb ? std::to_string(*kb) : std::string(); }

size_t DisplayWidth(std::string_view text) {
  size_t n = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;  // skip UTF-8 continuation bytes
  }
  return n;
}

TextTable::TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {
  for (Column& column : columns_) column.header = TerminalSafe(column.header);
}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  for (std::string& cell : cells) cell = TerminalSafe(cell);
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render(int indent) const {
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = DisplayWidth(columns_[c].header);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  const std::string lead(static_cast<size_t>(std::max(indent, 0)), ' ');
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = lead;
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (c > 0) out += "  ";
      size_t pad = widths[c] - DisplayWidth(cells[c]);
      if (columns_[c].align == kRight) out.append(pad, ' ');
      out += cells[c];
      if (columns_[c].align == kLeft) out.append(pad, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
    return out;
  };
  std::vector<std::string> headers;
  for (const Column& col : columns_) headers.push_back(col.header);
  std::string out = line(headers);
  for (const auto& row : rows_) out += line(row);
  return out;
}

nlohmann::json KbJson(const std::optional<int64_t>& kb) { return kb ? nlohmann::json(*kb) : nlohmann::json(nullptr); }

}  // namespace memfleet::cli
