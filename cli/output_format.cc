#include "cli/output_format.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

namespace memfleet::cli {

std::string FormatKb(long long kb) {
  bool negative = kb < 0;
  unsigned long long v = negative ? 0ULL - static_cast<unsigned long long>(kb) : static_cast<unsigned long long>(kb);
  std::string digits = std::to_string(v);
  std::string out;
  int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    out += digits[static_cast<size_t>(i)];
    int left = n - 1 - i;
    if (left > 0 && left % 3 == 0) out += ',';
  }
  return negative ? "-" + out : out;
}

std::string FormatKbOrDash(const std::optional<int64_t>& kb) {
  return kb ? FormatKb(*kb) : std::string("-");
}

std::string FormatKbHuman(int64_t kb) {
  // long double: |INT64_MIN| must not overflow, and the division keeps one or two decimals.
  long double v = static_cast<long double>(kb);
  long double mag = v < 0 ? -v : v;
  char buf[64];
  if (mag < 1024.0L) {
    std::snprintf(buf, sizeof buf, "%lld kB", static_cast<long long>(kb));
  } else if (mag < 1024.0L * 1024.0L) {
    std::snprintf(buf, sizeof buf, "%.1Lf MB", v / 1024.0L);
  } else {
    std::snprintf(buf, sizeof buf, "%.2Lf GB", v / (1024.0L * 1024.0L));
  }
  return buf;
}

std::string CsvField(std::string_view value) {
  if (value.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(value);
  std::string out = "\"";
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

TextTable::TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
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

}  // namespace memfleet::cli
