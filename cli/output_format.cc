#include "cli/output_format.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "chart/figure_text.h"

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

// Length of the valid UTF-8 sequence at text[i] (its code point in *cp), or 0 when the byte there does
// not start one: a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, or cut short.
size_t DecodeUtf8(std::string_view text, size_t i, char32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = b(i);
  size_t len = 0;
  char32_t value = 0;
  if (lead < 0x80) {
    *cp = lead;
    return 1;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
    value = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    value = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    value = lead & 0x07;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    value = (value << 6) | (b(i + k) & 0x3F);
  }
  static constexpr char32_t kMinOfLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kMinOfLength[len] || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0;
  *cp = value;
  return len;
}

// Code points a terminal acts on instead of showing: controls, and the bidirectional formatting
// characters that make text display in an order other than the one it is stored in.
bool IsUnsafeCodePoint(char32_t cp) {
  if (cp < 0x20 || cp == 0x7F) return true;
  if (cp >= 0x80 && cp <= 0x9F) return true;                             // C1: CSI, OSC, ...
  if (cp == 0x061C || cp == 0x200E || cp == 0x200F) return true;         // ALM, LRM, RLM
  if (cp >= 0x202A && cp <= 0x202E) return true;                         // LRE, RLE, PDF, LRO, RLO
  if (cp >= 0x2066 && cp <= 0x2069) return true;                         // LRI, RLI, FSI, PDI
  return cp == 0x2028 || cp == 0x2029;                                   // line and paragraph separators
}

std::string Escaped(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  char buf[16];
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
      if (cp < 0x80) {
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
      } else {
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      }
      out += buf;
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

nlohmann::json KbJson(const std::optional<int64_t>& kb) {
  return kb ? nlohmann::json(*kb) : nlohmann::json(nullptr);
}

}  // namespace memfleet::cli
