#include "agent/reader/capture_tree_fs.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "common/untrusted_text.h"

namespace memfleet::agent {
namespace {

constexpr std::string_view kErrSuffix = ".err";

// Debian's abseil has its own string_view, which absl::StrCat will not take from std::string_view.
std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

bool IsAsciiSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// A command name or argument becomes part of one path segment: it must stay one segment.
bool IsSafeSegmentPart(std::string_view text) {
  if (text.empty() || text == "." || text == "..") return false;
  for (char c : text) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// The errno recorded in a `.err` file. Text that is not an errno name makes the node EINVAL rather than
// passing arbitrary bytes on as if they were one.
std::string ErrnoFromErrFile(std::string_view content) {
  std::string_view name = content;
  while (!name.empty() && IsAsciiSpace(name.front())) name.remove_prefix(1);
  while (!name.empty() && IsAsciiSpace(name.back())) name.remove_suffix(1);
  return IsErrnoName(name) ? std::string(name) : std::string("EINVAL");
}

}  // namespace

CaptureTreeFs::CaptureTreeFs(std::string root, Options options) : root_(std::move(root), options) {}

NodeRead CaptureTreeFs::ReadNode(std::string_view path, size_t max_bytes) {
  NodeRead r = root_.ReadFile(path, max_bytes);
  if (r.errno_name != "ENOENT") return r;
  NodeRead err = root_.ReadFile(Cat({path, kErrSuffix}));
  if (!err.ok()) return r;
  return NodeRead::Failure(ErrnoFromErrFile(err.content));
}

NodeRead CaptureTreeFs::ReadAtMost(std::string_view path, size_t max_bytes) { return ReadNode(path, max_bytes); }

NodeRead CaptureTreeFs::WriteThenRead(std::string_view path, std::string_view /*request*/, std::string_view arg) {
  if (!IsSafeRelativePath(path, /*allow_empty=*/false) || !IsSafeSegmentPart(arg)) return NodeRead::Failure("EINVAL");
  return ReadNode(Cat({path, "@", arg}));
}

NodeRead CaptureTreeFs::RunCommand(std::string_view name, std::string_view arg) {
  if (!IsSafeSegmentPart(name)) return NodeRead::Failure("EINVAL");
  if (arg.empty()) return ReadNode(Cat({"cmd/", name}));
  if (!IsSafeSegmentPart(arg)) return NodeRead::Failure("EINVAL");
  return ReadNode(Cat({"cmd/", name, "@", arg}));
}

DirList CaptureTreeFs::List(std::string_view path) {
  DirList list = root_.ListDir(path);
  if (list.errno_name == "ENOENT" && !path.empty()) {
    // A folder the agent could not list is recorded as `<folder>.err`, like a file.
    NodeRead err = root_.ReadFile(Cat({path, kErrSuffix}));
    if (err.ok()) list.errno_name = ErrnoFromErrFile(err.content);
    return list;
  }
  if (!list.ok()) return list;
  std::vector<DirEntry> entries;
  entries.reserve(list.entries.size());
  for (DirEntry& e : list.entries) {
    if (!e.is_directory && e.name.size() > kErrSuffix.size() &&
        e.name.compare(e.name.size() - kErrSuffix.size(), kErrSuffix.size(), kErrSuffix) == 0) {
      e.name.resize(e.name.size() - kErrSuffix.size());
      e.is_error = true;
    }
    entries.push_back(std::move(e));
  }
  // A real node wins over a stale `.err` of the same name (Read returns the node too).
  std::stable_sort(entries.begin(), entries.end(), [](const DirEntry& a, const DirEntry& b) {
    return a.name != b.name ? a.name < b.name : (!a.is_error && b.is_error);
  });
  entries.erase(std::unique(entries.begin(), entries.end(),
                            [](const DirEntry& a, const DirEntry& b) { return a.name == b.name; }),
                entries.end());
  list.entries = std::move(entries);
  return list;
}

bool CaptureTreeFs::IsDirectory(std::string_view path) { return root_.IsDirectory(path); }

}  // namespace memfleet::agent
