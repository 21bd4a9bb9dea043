// `memfleet account TREE --json` on the simulated devices must give expected.json in every field
// (tests/data/captures/*: copies of the spec's fixtures), and user errors give the documented exit codes.
#include "cli/commands/account_command.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "nlohmann/json.hpp"
#include "tests/support/load_tree.h"

namespace memfleet::cli {
namespace {

using nlohmann::json;

class SampleCaptureTest : public ::testing::TestWithParam<std::string> {};

// `memfleet account DIR/tree --json`, parsed; a test failure (and null) when it does not exit 0.
json AccountJson(const std::string& dir) {
  std::ostringstream out, err;
  AccountArgs args;
  args.root = dir + "/tree";
  args.json = true;
  EXPECT_EQ(RunAccount(args, out, err), kExitOk) << err.str();
  return out.str().empty() ? json() : json::parse(out.str());
}

TEST_P(SampleCaptureTest, ReportMatchesExpectedInEveryField) {
  std::string dir = testing::TestData("captures/" + GetParam());
  json expected = json::parse(testing::ReadFileForTest(dir + "/expected.json"));
  json got = AccountJson(dir);
  ASSERT_TRUE(got.is_object());

  EXPECT_EQ(got["platform"], expected["platform"]);
  for (auto it = expected["device"].begin(); it != expected["device"].end(); ++it) {
    EXPECT_EQ(got["device"][it.key()], it.value()) << "device." << it.key();
  }
  ASSERT_EQ(got["processes"].size(), expected["processes"].size()) << got["processes"].dump();
  for (auto p = expected["processes"].begin(); p != expected["processes"].end(); ++p) {
    ASSERT_TRUE(got["processes"].contains(p.key())) << "pid " << p.key();
    for (auto f = p.value().begin(); f != p.value().end(); ++f) {
      EXPECT_EQ(got["processes"][p.key()][f.key()], f.value()) << "pid " << p.key() << " " << f.key();
    }
  }
  // A null figure always comes with a reason.
  for (auto p = got["processes"].begin(); p != got["processes"].end(); ++p) {
    for (auto f = p.value().begin(); f != p.value().end(); ++f) {
      if (f.value().is_null()) {
        EXPECT_FALSE(got["warnings"].empty()) << p.key() << " " << f.key();
      }
    }
  }
}

// heaps and app_summary (docs/accounting.md, "Heaps and the App Summary") against expected-heaps.json,
// the spec's values worked out from its rules apart from this code: every heap, every summary field, and
// null where the capture has only smaps_rollup.
TEST_P(SampleCaptureTest, HeapsAndAppSummaryMatchExpectedHeaps) {
  std::string dir = testing::TestData("captures/" + GetParam());
  json expected = json::parse(testing::ReadFileForTest(dir + "/expected-heaps.json"));
  json got = AccountJson(dir);
  ASSERT_TRUE(got.is_object());
  ASSERT_FALSE(expected["processes"].empty());
  for (auto p = expected["processes"].begin(); p != expected["processes"].end(); ++p) {
    for (const char* key : {"heaps", "app_summary"}) {
      EXPECT_EQ(got["processes"][p.key()][key], p.value()[key]) << "pid " << p.key() << " " << key;
    }
    if (p.value()["heaps"].is_null()) {
      EXPECT_NE(got["warnings"].dump().find("only smaps_rollup"), std::string::npos);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Captures, SampleCaptureTest,
                         ::testing::Values("generic-noddr", "mtk-mt6989", "qcom-edge", "qcom-sm8450", "xring-o1",
                                           "mali-rockchip", "legacy-419"));

// `memfleet account TREE --json` on a capture made as shell (tests/data/captures-shell/shield-shell: other
// processes' smaps EACCES, the Shield's real dumpsys text): every figure of its hand-worked expected.json,
// the dumpsys tier's included (docs/accounting.md section 9).
TEST(AccountCommandTest, AShellCaptureGivesTheDumpsysTier) {
  const std::string dir = testing::TestData("captures-shell/shield-shell");
  const json expected = json::parse(testing::ReadFileForTest(dir + "/expected.json"));
  const json got = AccountJson(dir);
  ASSERT_TRUE(got.is_object());
  for (auto it = expected["device"].begin(); it != expected["device"].end(); ++it) {
    EXPECT_EQ(got["device"][it.key()], it.value()) << "device." << it.key();
  }
  ASSERT_EQ(got["processes"].size(), expected["processes"].size()) << got["processes"].dump();
  for (auto p = expected["processes"].begin(); p != expected["processes"].end(); ++p) {
    for (auto f = p.value().begin(); f != p.value().end(); ++f) {
      EXPECT_EQ(got["processes"][p.key()][f.key()], f.value()) << "pid " << p.key() << " " << f.key();
    }
  }
}

TEST(AccountCommandTest, TableShowsTheBreakdownAndWarnings) {
  std::ostringstream out, err;
  AccountArgs args;
  args.root = testing::TestData("captures/qcom-edge/tree");
  ASSERT_EQ(RunAccount(args, out, err), kExitOk) << err.str();
  std::string table = out.str();
  EXPECT_NE(table.find("platform qcom"), std::string::npos);
  EXPECT_NE(table.find("3,014,795"), std::string::npos);  // device total of expected.json
  EXPECT_NE(table.find("546,300"), std::string::npos);    // static reserved
  EXPECT_NE(table.find("com.android.camera"), std::string::npos);
  EXPECT_NE(table.find("proc/22459/oom_score_adj"), std::string::npos);  // the EACCES node is named
  EXPECT_NE(table.find("dumpsys meminfo view"), std::string::npos);
}

TEST(AccountCommandTest, NotACaptureTreeExitsOne) {
  std::ostringstream out, err;
  AccountArgs args;
  args.root = testing::TestData("nodes");
  EXPECT_EQ(RunAccount(args, out, err), kExitFailed);
  EXPECT_NE(err.str().find("not a capture tree"), std::string::npos) << err.str();
  EXPECT_TRUE(out.str().empty());
}

TEST(AccountCommandTest, MissingPathExitsOneWithTheReason) {
  std::ostringstream out, err;
  AccountArgs args;
  args.root = "/nonexistent/memfleet/tree";
  EXPECT_EQ(RunAccount(args, out, err), kExitFailed);
  EXPECT_NE(err.str().find("No such file or directory"), std::string::npos) << err.str();
}

TEST(AccountCommandTest, BadGraphicsLibraryFileIsAUsageError) {
  std::ostringstream out, err;
  AccountArgs args;
  args.root = testing::TestData("captures/qcom-edge/tree");
  args.graphics_libs_file = "/nonexistent/graphics.txt";
  EXPECT_EQ(RunAccount(args, out, err), kExitUsage);
  EXPECT_NE(err.str().find("--graphics-libs"), std::string::npos);
}

}  // namespace
}  // namespace memfleet::cli
