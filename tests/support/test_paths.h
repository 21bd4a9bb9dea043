// Test support: where the test data and the built binaries are, read at run time from the file CMake
// writes beside the test, benchmark and tool executables (cmake/TestPaths.cmake). Nothing absolute is
// compiled in, so a test object built in one clone is a compiler-cache hit in a clone in another folder
// (docs/testing.md, "CI time"). Header-only; no GoogleTest needed (benchmarks and tools use it too).
//
//   std::string tree = TestData("captures/qcom-sm8450/tree");
//   std::string server = Bin("memfleet-server");
#ifndef MEMFLEET_TESTS_SUPPORT_TEST_PATHS_H_
#define MEMFLEET_TESTS_SUPPORT_TEST_PATHS_H_

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

namespace memfleet::testing {

// The name of the file beside the executables: lines "data=<folder>" and "bin=<folder>".
inline constexpr char kTestPathsFile[] = "memfleet-test-paths";

struct TestPaths {
  std::string data_dir;  // the source tree's tests/data
  std::string bin_dir;   // the build's bin/ (memfleet-server, memfleet-agent, memfleet)
};

// Read once from the executable's folder. A missing or incomplete file is a broken build folder: the
// process says so and aborts rather than let every test fail on a path it cannot open.
inline const TestPaths& GetTestPaths() {
  static const TestPaths* const paths = [] {
    std::error_code error;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
    const std::filesystem::path file = exe.parent_path() / kTestPathsFile;
    auto* p = new TestPaths;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("data=", 0) == 0) p->data_dir = line.substr(5);
      if (line.rfind("bin=", 0) == 0) p->bin_dir = line.substr(4);
    }
    if (error || p->data_dir.empty() || p->bin_dir.empty()) {
      std::cerr << "cannot read data= and bin= from " << file.string()
                << " (written by CMake beside the executables: re-run cmake)\n";
      std::abort();
    }
    return p;
  }();
  return *paths;
}

// tests/data/<relative>.
inline std::string TestData(const std::string& relative) { return GetTestPaths().data_dir + "/" + relative; }

// A binary of the build, e.g. Bin("memfleet-server").
inline std::string Bin(const std::string& name) { return GetTestPaths().bin_dir + "/" + name; }

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_TEST_PATHS_H_
