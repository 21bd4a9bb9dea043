// PostgreSQL restarted under a running memfleet-server (docs/reliability.md, "PostgreSQL restarted"), with
// the real binaries on loopback and a real PostgreSQL stopped (pg_ctl stop -m fast) and started again:
// while the database is down the server refuses captures with a retryable status and keeps running, the
// agent keeps them in its spool, and once the database is back every capture is stored exactly once,
// with no restart of memfleet.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "agent/spool.h"
#include "storage/postgres/pg_connection.h"
#include "tests/support/agent_ledger.h"
#include "tests/support/postgres_server.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace memfleet {
namespace postgres_restart_scenario {
namespace {

using testing::CountOf;
using testing::TakenIds;
using testing::WaitFor;

constexpr char kDevice[] = "pg-restart";

class PostgresRestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    uri_ = testing::NewPostgresDatabase();
    ASSERT_FALSE(uri_.empty());
    postgres_ = testing::ThisBinarysPostgresServer();
    ASSERT_NE(postgres_, nullptr);
  }

  // capture id -> rows stored with it; empty while the database is down.
  std::map<std::string, int> Stored() {
    std::map<std::string, int> out;
    absl::StatusOr<std::unique_ptr<storage::PgConnection>> db = storage::PgConnection::Connect(uri_);
    if (!db.ok()) return out;
    absl::Status read =
        (*db)
            ->Query(
                "SELECT c.capture_id, COUNT(*), COUNT(r.capture_id) FROM captures c LEFT JOIN device_reports r "
                "USING (capture_id) WHERE c.device_id = ?1 GROUP BY c.capture_id",
                {storage::SqlValue::Text(kDevice)},
                [&out](const storage::SqlRow& row) {
                  EXPECT_EQ(row.ColumnInt64(2), 1) << "capture " << row.ColumnText(0) << " without its report";
                  out[row.ColumnText(0)] = static_cast<int>(row.ColumnInt64(1));
                })
            .status();
    if (!read.ok()) out.clear();
    return out;
  }

  bool AllStored(const std::set<std::string>& ids) {
    std::map<std::string, int> stored = Stored();
    for (const std::string& id : ids) {
      if (stored.count(id) == 0) return false;
    }
    return true;
  }

  testing::TempDir dir_{"memfleet-pg-restart"};
  std::string uri_;
  testing::PostgresServer* postgres_ = nullptr;
};

TEST_F(PostgresRestartTest, CapturesAreRefusedRetryablyWhileItIsDownThenEachIsStoredOnce) {
  testing::Subprocess server({testing::Bin("memfleet-server"), "--listen", "127.0.0.1:0", "--db", uri_},
                             dir_.path() + "/server.log");
  const std::string listening = server.WaitForLine("listening on", std::chrono::seconds(60));
  ASSERT_FALSE(listening.empty()) << server.Log();
  const std::string address = listening.substr(listening.rfind(' ') + 1);
  const std::string spool = dir_.path() + "/spool";
  testing::Subprocess agent({testing::Bin("memfleet-agent"), "--server", address, "--root",
                             testing::TestData("captures/qcom-sm8450/tree"), "--device-id", kDevice, "--spool", spool,
                             "--interval", "1", "--ack-timeout", "3", "--resend-refused-after", "2"},
                            dir_.path() + "/agent.log");
  ASSERT_TRUE(WaitFor([&] { return Stored().size() >= 2; }, std::chrono::seconds(60))) << agent.Log() << server.Log();

  ASSERT_TRUE(postgres_->Stop().ok());
  // UNAVAILABLE (14): the agent keeps the capture and sends it again later.
  const std::string refused = "rejected for now (code 14: ";
  const size_t refusals_before = CountOf(agent.Log(), refused);
  const size_t taken_at_stop = TakenIds(agent.Log()).size();
  // Captures go on being taken, and the server refuses them with PostgreSQL's reason, retryably: the agent
  // logs the refusal and keeps them spooled.
  ASSERT_TRUE(WaitFor(
      [&] {
        return TakenIds(agent.Log()).size() >= taken_at_stop + 3 &&
               CountOf(agent.Log(), refused) >= refusals_before + 2;
      },
      std::chrono::seconds(90)))
      << agent.Log() << server.Log();
  EXPECT_FALSE(server.Exited()) << server.Log();
  EXPECT_FALSE(agent.Exited()) << agent.Log();

  const std::set<std::string> taken_while_down = TakenIds(agent.Log());
  ASSERT_TRUE(postgres_->StartAgain().ok());
  // The same server process, reconnecting at its next statement, stores what the agent resends.
  ASSERT_TRUE(WaitFor([&] { return AllStored(taken_while_down); }, std::chrono::seconds(120)))
      << agent.Log() << server.Log();
  EXPECT_FALSE(server.Exited()) << server.Log();
  EXPECT_EQ(CountOf(server.Log(), "listening on"), 1u) << server.Log();
  agent.Kill(SIGTERM);
  server.Kill(SIGTERM);

  // The ledger: every capture taken is stored exactly once or still spooled, none dropped.
  const std::set<std::string> taken = TakenIds(agent.Log());
  std::map<std::string, int> stored = Stored();
  absl::StatusOr<std::unique_ptr<agent::Spool>> spooled = agent::Spool::Open({spool, 64ull << 20});
  ASSERT_TRUE(spooled.ok()) << spooled.status();
  std::set<std::string> in_spool;
  for (const agent::Spool::Entry& e : (*spooled)->List()) in_spool.insert(e.capture_id);
  EXPECT_EQ((*spooled)->dropped(), 0u);
  for (const std::string& id : taken) {
    EXPECT_EQ(stored.count(id) + in_spool.count(id), 1u) << "capture " << id;
  }
  for (const auto& [id, rows] : stored) {
    EXPECT_EQ(rows, 1) << id;
    EXPECT_EQ(taken.count(id), 1u) << "stored capture " << id << " was never taken";
  }
}

}  // namespace
}  // namespace postgres_restart_scenario
}  // namespace memfleet
