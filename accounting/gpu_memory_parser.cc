#include "common/decimal.h"
#include "accounting/gpu_memory_parser.h"

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

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

constexpr absl::string_view kInvalid = "<INVALID>";
constexpr absl::string_view kMtkNoMemtrack = "GPU mem_profile doesn't be enabled";

std::vector<absl::string_view> Tokens(absl::string_view line) {
  return absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
}

bool ParseI64(absl::string_view token, int64_t* out) {
  if (token.empty()) return false;
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), *out);
  return ec == std::errc() && ptr == token.data() + token.size();
}

bool StartsWithDigit(absl::string_view s) {
  return !s.empty() && absl::ascii_isdigit(static_cast<unsigned char>(s.front()));
}

absl::Status LineError(absl::string_view node, int line_number, absl::string_view what, absl::string_view line) {
  return absl::InvalidArgumentError(
      absl::StrCat(node, " line ", line_number, ": ", what, ": \"", Snippet(ToStd(line), 80), "\""));
}

absl::Status AddPages(absl::string_view node, int line_number, absl::string_view line, int tgid, uint64_t pages,
                      GpuPages* out) {
  uint64_t& sum = out->pages_by_tgid[tgid];
  if (pages > std::numeric_limits<uint64_t>::max() - sum) {
    return LineError(node, line_number, "page count overflows", line);
  }
  sum += pages;
  return absl::OkStatus();
}

// Checks for the two whole-file answers of the Mali nodes; OkStatus means "go on and parse lines".
absl::Status CheckWholeFileAnswers(absl::string_view node, absl::string_view text) {
  const absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  if (trimmed.empty()) return absl::InvalidArgumentError(absl::StrCat(node, ": empty text"));
  if (trimmed == kInvalid) {
    return absl::UnavailableError(
        absl::StrCat(node, ": the driver printed <INVALID> (its context-list lock was busy); read the node again"));
  }
  return absl::OkStatus();
}

// The first non-blank line: "<devname> <pages> [<dma-buf pages>]". Returns the index of the line
// after it.
absl::Status ParseDeviceLine(absl::string_view node, const std::vector<absl::string_view>& lines, size_t* next,
                             GpuPages* out) {
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::vector<absl::string_view> tokens = Tokens(lines[i]);
    if (tokens.empty()) continue;
    const int line_number = static_cast<int>(i) + 1;
    if (StartsWithDigit(tokens[0]) || absl::StartsWith(tokens[0], "kctx-")) {
      return LineError(node, line_number, "expected the device line \"<device> <pages>\" first", lines[i]);
    }
    uint64_t pages = 0;
    if (tokens.size() < 2 || !ParseDecimal(tokens[1], &pages)) {
      return LineError(node, line_number, "device line without a page count", lines[i]);
    }
    for (size_t t = 2; t < tokens.size(); ++t) {
      int64_t ignored = 0;
      if (!ParseI64(tokens[t], &ignored)) {
        return LineError(node, line_number, "device line with a non-numeric column", lines[i]);
      }
    }
    out->device_name = std::string(tokens[0]);
    out->device_pages = pages;
    *next = i + 1;
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(node, ": no device line"));
}

}  // namespace

absl::StatusOr<GpuPages> ParseMtkGpuMemory(std::string_view text_in) {
  const absl::string_view text(text_in.data(), text_in.size());
  constexpr absl::string_view kNode = "mtk_mali/gpu_memory";
  if (absl::Status s = CheckWholeFileAnswers(kNode, text); !s.ok()) return s;
  if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(text), kMtkNoMemtrack)) {
    return absl::FailedPreconditionError(
        absl::StrCat(kNode, ": the kernel is built without CONFIG_MALI_MTK_MEMTRACK (\"", kMtkNoMemtrack, "\")"));
  }
  const std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  GpuPages out;
  out.layout = "mtk";
  size_t first = 0;
  if (absl::Status s = ParseDeviceLine(kNode, lines, &first, &out); !s.ok()) return s;
  for (size_t i = first; i < lines.size(); ++i) {
    const std::vector<absl::string_view> tokens = Tokens(lines[i]);
    // Other lines (vendor extra device lines such as "global-pool") carry no tgid: not a process.
    if (tokens.empty() || !absl::StartsWith(tokens[0], "kctx-")) continue;
    const int line_number = static_cast<int>(i) + 1;
    if (tokens.size() == 2) {
      return LineError(kNode, line_number, "kctx line without a tgid column (upstream kbase layout, not MediaTek's)",
                       lines[i]);
    }
    uint64_t pages = 0;
    int tgid = 0;
    if (tokens.size() != 3 || !ParseDecimal(tokens[1], &pages) || !ParseDecimal(tokens[2], &tgid)) {
      return LineError(kNode, line_number, "expected \"kctx-0x<ptr> <pages> <tgid>\"", lines[i]);
    }
    if (absl::Status s = AddPages(kNode, line_number, lines[i], tgid, pages, &out); !s.ok()) return s;
  }
  return out;
}

absl::StatusOr<GpuPages> ParseXgpuGpuMemory(std::string_view text_in) {
  const absl::string_view text(text_in.data(), text_in.size());
  constexpr absl::string_view kNode = "xgpu/gpu_memory";
  if (absl::Status s = CheckWholeFileAnswers(kNode, text); !s.ok()) return s;
  const std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  GpuPages out;
  size_t first = 0;
  if (absl::Status s = ParseDeviceLine(kNode, lines, &first, &out); !s.ok()) return s;

  enum class Layout { kUnknown, kV1, kV2 };
  Layout layout = Layout::kUnknown;
  int layout_line = 0;  // the line that decided the layout, for the mixed-layout message
  for (size_t i = first; i < lines.size(); ++i) {
    const std::vector<absl::string_view> tokens = Tokens(lines[i]);
    if (tokens.empty()) continue;
    const int line_number = static_cast<int>(i) + 1;
    if (absl::StartsWith(tokens[0], "kctx-")) {
      // A Mali context line without the leading tgid fits neither XRing layout; ignoring it would
      // silently drop that context's pages.
      return LineError(kNode, line_number, "kctx line without a leading tgid (not an XRing layout)", lines[i]);
    }
    if (!StartsWithDigit(tokens[0])) continue;  // neither device nor process line

    const bool v1 = tokens.size() >= 2 && absl::StartsWith(tokens[1], "kctx-");
    const Layout this_layout = v1 ? Layout::kV1 : Layout::kV2;
    if (layout == Layout::kUnknown) {
      layout = this_layout;
      layout_line = line_number;
    } else if (layout != this_layout) {
      return LineError(kNode, line_number,
                       absl::StrCat("mixes the v1 (\"<tgid> kctx-0x.. <pages>\") and v2 (\"<tgid> "
                                    "<gl> <pss> <rss>\") layouts; line ",
                                    layout_line, " is ", layout == Layout::kV1 ? "v1" : "v2"),
                       lines[i]);
    }

    int tgid = 0;
    uint64_t pages = 0;
    if (v1) {
      if (tokens.size() != 3 || !ParseDecimal(tokens[0], &tgid) || !ParseDecimal(tokens[2], &pages)) {
        return LineError(kNode, line_number, "expected v1 \"<tgid> kctx-0x<ptr> <pages>\"", lines[i]);
      }
    } else {
      // pss/rss are computed in a 32-bit int by the driver and wrap negative past 2 GiB: they are
      // checked to be integers but not used.
      int64_t pss = 0;
      int64_t rss = 0;
      if (tokens.size() != 4 || !ParseDecimal(tokens[0], &tgid) || !ParseDecimal(tokens[1], &pages) ||
          !ParseI64(tokens[2], &pss) || !ParseI64(tokens[3], &rss)) {
        return LineError(kNode, line_number, "expected v2 \"<tgid> <gl_pages> <pss_pages> <rss_pages>\"", lines[i]);
      }
    }
    if (absl::Status s = AddPages(kNode, line_number, lines[i], tgid, pages, &out); !s.ok()) return s;
  }
  switch (layout) {
    case Layout::kV1:
      out.layout = "xring-v1";
      break;
    case Layout::kV2:
      out.layout = "xring-v2";
      break;
    case Layout::kUnknown:
      out.layout = "xring";  // no process line: nothing tells the layout, and nothing needs it
      break;
  }
  return out;
}

}  // namespace memfleet::accounting
