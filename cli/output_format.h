// How a command prints: the readable table (default), JSON, or CSV — and the small formatting helpers
// the commands share (kB figures, RFC 4180 CSV, aligned text tables).
//
//   TextTable t({{"DEVICE"}, {"TOTAL KB", TextTable::kRight}});
//   t.AddRow({"pixel-1", FormatKb(3014795)});
//   std::cout << t.Render();                           // aligned columns, two spaces apart
//   std::cout << CsvRow({"a,b", "say \"hi\""});        // "a,b","say ""hi"""\r\n
#ifndef MEMFLEET_CLI_OUTPUT_FORMAT_H_
#define MEMFLEET_CLI_OUTPUT_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace memfleet::cli {

enum class OutputFormat { kTable, kJson, kCsv };

// Thousands separators for a KiB figure ("1,234,567").
std::string FormatKb(long long kb);

// FormatKb, or chart::kNoValue ("-") when the figure is unknown: the one spelling of "no value" in tables.
std::string FormatKbOrDash(const std::optional<int64_t>& kb);

// Text for a table cell: itself, or chart::kNoValue when it is empty (a field the device did not report).
std::string TextOrDash(std::string_view text);

// A kB figure for people: "512 kB", "12.3 MiB", "2.50 GiB" (kB are KiB, so the scales are IEC).
std::string FormatKbHuman(int64_t kb);

// One RFC 4180 field: quoted (with inner quotes doubled) when it holds a comma, quote, CR or LF. Text
// that a spreadsheet would run as a formula (it starts with = + - @ TAB or CR) is quoted behind a single
// quote, "'=cmd|..."; a plain number such as -12 or -1.5e3 is a number, not a formula, and stays as it is.
std::string CsvField(std::string_view value);

// One RFC 4180 record: the fields joined by commas, terminated by CRLF.
std::string CsvRow(const std::vector<std::string>& fields);

// A figure in JSON: the number, or null when unknown (never 0).
nlohmann::json KbJson(const std::optional<int64_t>& kb);

// A figure in a CSV cell: the plain number (no separators), or an empty field when unknown.
std::string CsvKb(const std::optional<int64_t>& kb);

// Columns sized to their widest cell (counted in UTF-8 code points), two spaces apart. Cells are made
// TerminalSafe as they are added, so a hostile cell can neither move the cursor nor break the columns.
class TextTable {
 public:
  enum Align { kLeft, kRight };
  struct Column {
    std::string header;
    Align align = kLeft;
  };

  explicit TextTable(std::vector<Column> columns);

  // A row shorter than the header is padded with empty cells; extra cells are ignored.
  void AddRow(std::vector<std::string> cells);
  size_t row_count() const { return rows_.size(); }

  // Header line, then one line per row; trailing spaces trimmed. indent: spaces before every line.
  std::string Render(int indent = 0) const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// Text from a device (model, build, process names) made safe to print on a terminal: C0 controls, DEL,
// C1 controls and the bidirectional embeddings/overrides/isolates become visible escapes ("\x1b",
// "\u009b", "\u202e"), as does each byte that is not part of valid UTF-8; other text is kept as it is.
std::string TerminalSafe(std::string_view text);

// TerminalSafe for many lines at once (a rendered table, a message): '\n' is kept.
std::string TerminalSafeLines(std::string_view text);

// Display width of UTF-8 text: one per code point (the CLI prints no wide characters).
size_t DisplayWidth(std::string_view text);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_OUTPUT_FORMAT_H_
