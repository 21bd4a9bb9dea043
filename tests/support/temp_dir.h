// A fresh directory under the test's temporary folder, removed with everything in it when the test ends.
#ifndef MEMFLEET_TESTS_SUPPORT_TEMP_DIR_H_
#define MEMFLEET_TESTS_SUPPORT_TEMP_DIR_H_

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace memfleet::testing {

class TempDir {
 public:
  // `prefix` names the directory, so a leftover one says which suite made it.
  explicit TempDir(const std::string& prefix = "memfleet_test") {
    std::string pattern = ::testing::TempDir() + prefix + "_XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Empty when the directory could not be made (tests assert on it).
  const std::string& path() const { return path_; }

  // Writes `content` to `rel` below the directory, making its parents; returns the full path.
  std::string Write(const std::string& rel, const std::string& content, bool executable = false) const {
    std::filesystem::path p = std::filesystem::path(path_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    if (executable) chmod(p.c_str(), 0755);
    return p.string();
  }

 private:
  std::string path_;
};

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_TEMP_DIR_H_
