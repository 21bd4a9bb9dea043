#include "accounting/dumpsys_processes.h"

#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "accounting/dumpsys_number.h"
#include "accounting/text_util.h"

namespace memfleet::accounting {
namespace {

enum class Section { kNone, kProcesses, kOomAdjustment };

// A decimal int at the front of *s ("-900"), advancing past it.
bool ConsumeInt(absl::string_view* s, int* out) {
  size_t n = 0;
  if (n < s->size() && ((*s)[n] == '-' || (*s)[n] == '+')) ++n;
  while (n < s->size() && absl::ascii_isdigit(static_cast<unsigned char>((*s)[n]))) ++n;
  if (!absl::SimpleAtoi(s->substr(0, n), out)) return false;
  s->remove_prefix(n);
  return true;
}

// "pid P[ state S oom A][ / activities]" inside the line's last "(pid " group.
bool ParsePidGroup(absl::string_view group, DumpsysProcessLine* p) {
  if (!absl::ConsumePrefix(&group, "pid ") || !ConsumeInt(&group, &p->pid) || p->pid <= 0) return false;
  for (;;) {
    group = absl::StripLeadingAsciiWhitespace(group);
    if (group.empty()) return true;
    int value = 0;
    if (absl::ConsumePrefix(&group, "/ activities")) continue;
    if (absl::ConsumePrefix(&group, "state ")) {
      if (!ConsumeInt(&group, &value)) return false;
      continue;
    }
    if (absl::ConsumePrefix(&group, "oom ")) {
      if (!ConsumeInt(&group, &value)) return false;
      p->oom_adj = value;
      continue;
    }
    return false;  // something else inside the parentheses
  }
}

// "N,NNNK: NAME (pid P ...)[ (note)]"; false when the line is not that form.
bool ParseProcessLine(absl::string_view line, DumpsysProcessLine* p) {
  if (!ConsumeDumpsysKb(&line, &p->total_pss_kb) || !absl::ConsumePrefix(&line, ":")) return false;
  // The last "(pid ": a name may hold parentheses, a trailing note holds no pid.
  const size_t open = line.rfind(" (pid ");
  if (open == absl::string_view::npos) return false;
  const size_t close = line.find(')', open);
  if (close == absl::string_view::npos) return false;
  p->name = std::string(absl::StripAsciiWhitespace(line.substr(0, open)));
  if (p->name.empty()) return false;
  absl::string_view note = absl::StripAsciiWhitespace(line.substr(close + 1));
  if (!note.empty() && (note.front() != '(' || note.back() != ')')) return false;
  return ParsePidGroup(line.substr(open + 2, close - open - 2), p);
}

// A group line of the OOM table ("40,000K: Cached"): its name, or "" when the line is not one.
std::string GroupName(absl::string_view line) {
  int64_t kb = 0;
  if (!ConsumeDumpsysKb(&line, &kb) || !absl::ConsumePrefix(&line, ":")) return "";
  return std::string(absl::StripAsciiWhitespace(line));
}

}  // namespace

absl::StatusOr<DumpsysProcesses> ParseDumpsysProcesses(std::string_view text_in) {
  const absl::string_view text(text_in.data(), text_in.size());
  DumpsysProcesses out;
  std::set<int> seen;
  Section section = Section::kNone;
  std::string group;  // the OOM table's current group
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_number;
    const absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line == "Total PSS by process:") {
      section = Section::kProcesses;
      out.has_process_section = true;
      continue;
    }
    if (line == "Total PSS by OOM adjustment:") {
      section = Section::kOomAdjustment;
      out.has_oom_section = true;
      group.clear();
      continue;
    }
    // A blank line, or a line that does not start like a number (the next table's header), ends a
    // section; a line that starts like one but is none of the forms is skipped and counted.
    if (line.empty() || !(absl::ascii_isdigit(static_cast<unsigned char>(line.front())) || line.front() == '-')) {
      section = Section::kNone;
      continue;
    }
    if (section == Section::kNone) continue;
    DumpsysProcessLine p;
    p.line_number = line_number;
    const bool is_process = ParseProcessLine(line, &p);
    if (section == Section::kOomAdjustment) {
      if (is_process) {
        if (group == "Cached") out.cached_pids.insert(p.pid);
      } else {
        group = GroupName(line);
      }
      continue;
    }
    if (!is_process) {
      ++out.skipped_line_count;
      if (out.skipped_lines.size() < 10) {
        const std::string_view text_line(raw.data(), raw.size());
        out.skipped_lines.push_back(absl::StrCat("line ", line_number, ": \"", Snippet(text_line, 100), "\""));
      }
      continue;
    }
    if (!seen.insert(p.pid).second) continue;
    if (out.processes.size() == kMaxDumpsysProcesses) {
      return absl::InvalidArgumentError(
          absl::StrCat("dumpsys meminfo: more than ", kMaxDumpsysProcesses, " process lines: not a dumpsys text"));
    }
    out.processes.push_back(std::move(p));
  }
  return out;
}

}  // namespace memfleet::accounting
