#include "capture/node_path.h"

#include "absl/strings/str_cat.h"

namespace memfleet::capture {

bool IsSafeNodePath(std::string_view path) {
  if (path.empty() || path.size() > kMaxNodePathBytes) return false;
  if (path.find('\0') != std::string_view::npos) return false;
  size_t start = 0;
  while (true) {
    const size_t slash = path.find('/', start);
    const std::string_view segment =
        path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (segment.empty() || segment == "." || segment == "..") return false;  // also a leading or trailing '/'
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

std::string NativeHeapNode(int pid) { return absl::StrCat("cmd/native_heap@", pid); }
std::string NativeHeapNode(std::string_view pid) { return "cmd/native_heap@" + std::string(pid); }

}  // namespace memfleet::capture
