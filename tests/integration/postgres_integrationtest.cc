// End to end on PostgreSQL, with the real binaries: two memfleet-server processes on one database of a
// real PostgreSQL (tests/support/postgres_server.h), as two lab servers sharing it, and memfleet-agent
// --once on sample capture trees into each. Each stored report equals its tree's expected.json, read
// through either server. Retention on PostgreSQL (`compact`, `--retain-*`): retention_integrationtest.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/expected_report.h"
#include "tests/support/postgres_server.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace memfleet {
namespace postgres_scenario {
namespace {

class PostgresPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    uri_ = testing::NewPostgresDatabase();
    ASSERT_FALSE(uri_.empty());
  }

  testing::TempDir dir_{"memfleet_pg_e2e"};
  std::string uri_;
};

TEST_F(PostgresPipelineTest, TwoServersOnOneDatabaseStoreReportsThatMatchTheExpectedOnes) {
  testing::ServerProcess first(dir_.path(), {}, uri_);
  ASSERT_FALSE(first.address().empty());
  testing::ServerProcess second(dir_.path(), {}, uri_);
  ASSERT_FALSE(second.address().empty());

  testing::RunAgentOnce(first, dir_.path(), "qcom-sm8450");
  testing::RunAgentOnce(second, dir_.path(), "mtk-mt6989");

  // Acked only after COMMIT, so each report is there for both servers at once.
  for (testing::ServerProcess* server : {&first, &second}) {
    testing::ExpectReportMatchesExpected(server->Report("qcom-sm8450"), "qcom-sm8450");
    testing::ExpectReportMatchesExpected(server->Report("mtk-mt6989"), "mtk-mt6989");
  }
}

TEST_F(PostgresPipelineTest, TokensAddedByTheTokenCommandAreInTheDatabase) {
  testing::Subprocess add(
      {testing::Bin("memfleet-server"), "--db", uri_, "token", "add", "--kind", "read", "--name", "ci"},
      dir_.path() + "/token-add.log");
  ASSERT_EQ(add.WaitExit(std::chrono::seconds(60)), 0) << add.Log();
  testing::Subprocess list({testing::Bin("memfleet-server"), "--db", uri_, "token", "list"},
                           dir_.path() + "/token-list.log");
  ASSERT_EQ(list.WaitExit(std::chrono::seconds(60)), 0) << list.Log();
  // Columns are aligned to their widest cell: NAME KIND DEVICE CREATED STATE.
  EXPECT_THAT(list.Log(), ::testing::ContainsRegex("\nci +read +- +[0-9-]+T[0-9:.]+Z +valid"));
}

}  // namespace
}  // namespace postgres_scenario
}  // namespace memfleet
