// Test support: reads a folder into an capture::Capture the simple way (every file, `.err` files as
// error nodes), optionally placing it under a prefix — for engine tests that must not depend on the
// agent's collector. Header-only.
//
//   Capture c = LoadTree(dir + "/buffers", "sys/kernel/dmabuf/buffers");
#ifndef MEMFLEET_TESTS_SUPPORT_LOAD_TREE_H_
#define MEMFLEET_TESTS_SUPPORT_LOAD_TREE_H_

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "capture/capture.h"
#include "tests/support/test_paths.h"

namespace memfleet::testing {

inline std::string ReadFileForTest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void LoadTreeInto(capture::Capture& capture, const std::string& dir, const std::string& prefix = "") {
  namespace fs = std::filesystem;
  std::string base = prefix.empty() ? "" : prefix + "/";
  if (!fs::is_directory(dir)) return;  // e.g. an AOSP tree without a buffers/ folder
  if (!prefix.empty()) capture.AddDirectory(prefix);
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) {
    std::string rel = base + fs::relative(e.path(), dir).generic_string();
    if (e.is_directory()) {
      capture.AddDirectory(rel);
    } else if (rel.size() > 4 && rel.compare(rel.size() - 4, 4, ".err") == 0) {
      std::string err = ReadFileForTest(e.path().string());
      while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
      capture.AddError(rel.substr(0, rel.size() - 4), err);
    } else {
      capture.AddFile(rel, ReadFileForTest(e.path().string()));
    }
  }
}

inline capture::Capture LoadTree(const std::string& dir, const std::string& prefix = "") {
  capture::Capture c;
  LoadTreeInto(c, dir, prefix);
  return c;
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_LOAD_TREE_H_
