#include "common/decimal.h"
#include "accounting/mali_gpu_memory.h"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "accounting/text_util.h"

namespace memfleet::accounting {
namespace {

constexpr absl::string_view kNode = "mali0/gpu_memory";

enum class Layout { kNone, kMtk, kAmlogic, kRockchip, kArm };

const char* LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kMtk:
      return "mali-mtk";
    case Layout::kAmlogic:
      return "mali-amlogic";
    case Layout::kRockchip:
      return "mali-rockchip";
    case Layout::kArm:
      return "mali-arm";
    case Layout::kNone:
      break;
  }
  return "mali";  // no context line: nothing tells the layout, and nothing needs it
}

// Where the pid and the pages are, as a header line "kctx ... pid|tgid ... used_pages" names them.
struct Header {
  size_t columns = 0;
  size_t pid = 0;
  size_t pages = 0;
  bool has_comm = false;  // Rockchip's header: a comm column of any number of words
};

std::vector<absl::string_view> Tokens(absl::string_view line) {
  return absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
}

// A kernel address as Amlogic prints it: hexadecimal, "0x" optional.
bool IsHexAddress(absl::string_view token) {
  absl::ConsumePrefix(&token, "0x");
  if (token.empty()) return false;
  for (char c : token) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::optional<Header> ParseHeader(const std::vector<absl::string_view>& tokens) {
  if (tokens.empty() || tokens[0] != "kctx") return std::nullopt;
  Header h;
  h.columns = tokens.size();
  bool pid = false, pages = false;
  for (size_t i = 1; i < tokens.size(); ++i) {
    if (tokens[i] == "pid" || tokens[i] == "tgid") {
      h.pid = i;
      pid = true;
    } else if (tokens[i] == "used_pages") {
      h.pages = i;
      pages = true;
    } else if (tokens[i] == "comm") {
      h.has_comm = true;
    }
  }
  if (!pid || !pages) return std::nullopt;
  return h;
}

absl::Status LineError(size_t line_number, absl::string_view what, absl::string_view line) {
  return absl::InvalidArgumentError(
      absl::StrCat(kNode, " line ", line_number, ": ", what, ": \"", Snippet(ToStd(line), 80), "\""));
}

class Parser {
 public:
  absl::StatusOr<GpuPages> Run(absl::string_view text) {
    const std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
    bool device_seen = false;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::vector<absl::string_view> tokens = Tokens(lines[i]);
      if (tokens.empty()) continue;
      absl::Status s = device_seen ? Line(i + 1, lines[i], tokens) : DeviceLine(i + 1, lines[i], tokens);
      if (!s.ok()) return s;
      device_seen = true;
    }
    if (!device_seen) return absl::InvalidArgumentError(absl::StrCat(kNode, ": no device line"));
    out_.layout = LayoutName(layout_);
    out_.per_process = layout_ != Layout::kArm;
    return std::move(out_);
  }

 private:
  // "<device> <pages>", or Amlogic's "mali0 total used_pages <pages>": the total is the last number.
  absl::Status DeviceLine(size_t n, absl::string_view line, const std::vector<absl::string_view>& tokens) {
    if (absl::StartsWith(tokens[0], "kctx") || absl::ascii_isdigit(static_cast<unsigned char>(tokens[0][0]))) {
      return LineError(n, "expected the device line \"<device> <pages>\" first", line);
    }
    if (tokens.size() < 2 || !ParseDecimal(tokens.back(), &out_.device_pages)) {
      return LineError(n, "device line without a page count", line);
    }
    out_.device_name = std::string(tokens[0]);
    return absl::OkStatus();
  }

  absl::Status Line(size_t n, absl::string_view line, const std::vector<absl::string_view>& tokens) {
    if (std::optional<Header> h = ParseHeader(tokens)) {
      header_ = h;
      return absl::OkStatus();
    }
    if (absl::StartsWith(tokens[0], "kctx-")) return ContextLine(n, line, tokens);
    // Amlogic rows carry no "kctx-": only its header says they are context lines.
    if (header_ && !header_->has_comm && IsHexAddress(tokens[0])) return AmlogicRow(n, line, tokens);
    return absl::OkStatus();  // separators and vendor lines carry no pid
  }

  absl::Status ContextLine(size_t n, absl::string_view line, const std::vector<absl::string_view>& tokens) {
    Layout layout = tokens.size() == 2 ? Layout::kArm : tokens.size() == 3 ? Layout::kMtk : Layout::kRockchip;
    if (header_ && header_->has_comm) layout = Layout::kRockchip;
    if (absl::Status s = SetLayout(n, line, layout); !s.ok()) return s;
    uint64_t pages = 0;
    int pid = 0;
    switch (layout) {
      case Layout::kArm:
        if (!ParseDecimal(tokens[1], &pages)) return LineError(n, "expected \"kctx-0x<addr> <pages>\"", line);
        return absl::OkStatus();  // no pid: the pages belong to nobody we can name
      case Layout::kMtk:
        if (!ParseDecimal(tokens[1], &pages) || !ParseDecimal(tokens[2], &pid)) {
          return LineError(n, "expected \"kctx-0x<addr> <pages> <tgid>\"", line);
        }
        break;
      default:
        // The comm may hold spaces ("GLThread 12"): pid and pages are the last two columns.
        if (tokens.size() < 4 || !ParseDecimal(tokens[tokens.size() - 2], &pid) ||
            !ParseDecimal(tokens.back(), &pages)) {
          return LineError(n, "expected \"kctx-0x<addr> <comm> <pid> <pages>\"", line);
        }
        break;
    }
    return AddPages(n, line, pid, pages);
  }

  absl::Status AmlogicRow(size_t n, absl::string_view line, const std::vector<absl::string_view>& tokens) {
    if (absl::Status s = SetLayout(n, line, Layout::kAmlogic); !s.ok()) return s;
    uint64_t pages = 0;
    int pid = 0;
    if (tokens.size() != header_->columns || !ParseDecimal(tokens[header_->pid], &pid) ||
        !ParseDecimal(tokens[header_->pages], &pages)) {
      return LineError(n, "expected a row of the \"kctx pid used_pages\" header", line);
    }
    return AddPages(n, line, pid, pages);
  }

  absl::Status SetLayout(size_t n, absl::string_view line, Layout layout) {
    if (layout_ == Layout::kNone) {
      layout_ = layout;
      layout_line_ = n;
    } else if (layout_ != layout) {
      return LineError(
          n, absl::StrCat("context line of another layout than line ", layout_line_, " (", LayoutName(layout_), ")"),
          line);
    }
    return absl::OkStatus();
  }

  absl::Status AddPages(size_t n, absl::string_view line, int pid, uint64_t pages) {
    uint64_t& sum = out_.pages_by_tgid[pid];
    if (pages > std::numeric_limits<uint64_t>::max() - sum) return LineError(n, "page count overflows", line);
    sum += pages;
    return absl::OkStatus();
  }

  GpuPages out_;
  std::optional<Header> header_;
  Layout layout_ = Layout::kNone;
  size_t layout_line_ = 0;
};

}  // namespace

absl::StatusOr<GpuPages> ParseMaliGpuMemory(std::string_view text_in) {
  const absl::string_view text(text_in.data(), text_in.size());
  const absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  if (trimmed.empty()) return absl::InvalidArgumentError(absl::StrCat(kNode, ": empty text"));
  if (trimmed == "<INVALID>") {
    return absl::UnavailableError(
        absl::StrCat(kNode, ": the driver printed <INVALID> (its context-list lock was busy); read the node again"));
  }
  return Parser().Run(text);
}

}  // namespace memfleet::accounting
