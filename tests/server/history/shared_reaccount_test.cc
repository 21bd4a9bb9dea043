// Re-accounting shared between servers on one real PostgreSQL (SqlStore::ForEachClaimedRawCapture,
// ReaccountSharedCaptures): two real `memfleet-server --reaccount` processes on the same history split it,
// each capture re-accounted exactly once — counted by a trigger on the database's report inserts, not by
// the servers — with the reports a single run gives; a finished run is not joined again; the claims of a
// server whose connection died are claimed again by the next one; and the Reaccount RPC of a server on
// the database joins a running run.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "absl/strings/str_cat.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#include "server/history/reaccount.h"
#include "server/lab_server.h"
#include "storage/postgres/pg_connection.h"
#include "storage/postgres/pg_store.h"
#include "tests/support/ingested_history.h"
#include "tests/support/postgres_server.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"
#include "tests/support/wait_for.h"

namespace memfleet::server {
namespace shared_reaccount_test {
namespace {

constexpr int kDevices = 3;
constexpr int kPerDevice = 10;
constexpr int kCaptures = kDevices * kPerDevice;

// Counts every report row written per capture (ingest's and each re-accounting's), in the database.
constexpr char kCountReportWritesSql[] = R"sql(
CREATE TABLE report_writes (capture_id TEXT PRIMARY KEY, n INTEGER NOT NULL);
CREATE FUNCTION count_report_write() RETURNS trigger AS $$
BEGIN
  INSERT INTO report_writes VALUES (NEW.capture_id, 1)
    ON CONFLICT (capture_id) DO UPDATE SET n = report_writes.n + 1;
  RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER count_report_writes AFTER INSERT OR UPDATE ON device_reports FOR EACH ROW
  EXECUTE FUNCTION count_report_write();
)sql";

class SharedReaccountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    uri_ = testing::NewPostgresDatabase();
    ASSERT_FALSE(uri_.empty());
    store_ = Open();
    ASSERT_NE(store_, nullptr);
    ASSERT_TRUE(testing::IngestHistory(*store_, kDevices, kPerDevice, /*keyframe_every=*/4).ok());
    for (int seq = 0; seq < kPerDevice; ++seq) {
      for (int d = 0; d < kDevices; ++d) {
        const std::string id = testing::CaptureId("bench-" + std::to_string(d), seq);
        absl::StatusOr<std::optional<storage::StoredReport>> r = store_->GetReportByCapture(id);
        ASSERT_TRUE(r.ok() && r->has_value());
        ingest_reports_[id] = nlohmann::json::parse((*r)->report_json);
      }
    }
    admin_ = Connect();
    ASSERT_NE(admin_, nullptr);
    ASSERT_TRUE(admin_->Exec(kCountReportWritesSql).ok());
  }

  std::unique_ptr<storage::SqlStore> Open() {
    absl::StatusOr<std::unique_ptr<storage::SqlStore>> s = storage::OpenPgStore(uri_);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *std::move(s) : nullptr;
  }
  std::unique_ptr<storage::PgConnection> Connect() {
    absl::StatusOr<std::unique_ptr<storage::PgConnection>> c = storage::PgConnection::Connect(uri_);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *std::move(c) : nullptr;
  }

  // capture id -> report rows written since the trigger was made.
  std::map<std::string, int64_t> ReportWrites() {
    std::map<std::string, int64_t> writes;
    absl::Status read = admin_
                            ->Query("SELECT capture_id, n FROM report_writes", {},
                                    [&writes](const storage::SqlRow& r) { writes[r.ColumnText(0)] = r.ColumnInt64(1); })
                            .status();
    EXPECT_TRUE(read.ok()) << read;
    return writes;
  }

  int64_t CountOf(const std::string& sql) {
    absl::StatusOr<std::optional<int64_t>> n =
        storage::QueryFirst(*admin_, sql, {}, [](const storage::SqlRow& r) { return r.ColumnInt64(0); });
    return n.ok() && n->has_value() ? **n : -1;
  }

  // Every stored report is the one ingest stored (the engine has not changed, so one run gives that).
  void ExpectReportsAsAtIngest() {
    for (const auto& [id, expected] : ingest_reports_) {
      absl::StatusOr<std::optional<storage::StoredReport>> r = store_->GetReportByCapture(id);
      ASSERT_TRUE(r.ok() && r->has_value()) << id;
      EXPECT_EQ(nlohmann::json::parse((*r)->report_json), expected) << id;
    }
  }

  // Backends of this database other than the test's own.
  int64_t OtherBackends() {
    return CountOf(
        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
  }

  // Backends of this database waiting for a lock.
  int64_t WaitingForALock() {
    return CountOf(
        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
  }

  testing::TempDir dir_{"memfleet-shared-reaccount"};
  std::string uri_;
  std::unique_ptr<storage::SqlStore> store_;
  std::unique_ptr<storage::PgConnection> admin_;
  std::map<std::string, nlohmann::json> ingest_reports_;
};

// "re-accounted N captures, 0 failed (started|joined shared run R)" -> N, with the rest in `how`.
int Reaccounted(const std::string& log, std::string* how) {
  const std::string prefix = "re-accounted ";
  const std::string failed = " captures, 0 failed (";
  const size_t at = log.find(prefix);
  const size_t count_end = log.find(failed, at);
  const size_t how_end = log.find(')', count_end);
  if (at == std::string::npos || count_end == std::string::npos || how_end == std::string::npos) return -1;
  *how = log.substr(count_end + failed.size(), how_end - count_end - failed.size());
  return std::stoi(log.substr(at + prefix.size(), count_end - at - prefix.size()));
}

TEST_F(SharedReaccountTest, TwoServersSplitTheHistoryAndReaccountEachCaptureOnce) {
  // Both servers queue for the run while the test holds the claims table, so both are in one run.
  std::unique_ptr<storage::PgConnection> holder = Connect();
  ASSERT_NE(holder, nullptr);
  ASSERT_TRUE(holder->Exec("BEGIN; LOCK TABLE reaccount_claims IN EXCLUSIVE MODE").ok());
  testing::Subprocess first({testing::Bin("memfleet-server"), "--db", uri_, "--reaccount"}, dir_.path() + "/first.log");
  testing::Subprocess second({testing::Bin("memfleet-server"), "--db", uri_, "--reaccount"},
                             dir_.path() + "/second.log");
  testing::WaitFor([&] { return WaitingForALock() >= 2 || first.Exited() || second.Exited(); },
                   std::chrono::seconds(60), /*every=*/std::chrono::milliseconds(20));
  ASSERT_EQ(WaitingForALock(), 2) << first.Log() << second.Log();
  ASSERT_TRUE(holder->Exec("COMMIT").ok());
  ASSERT_EQ(first.WaitExit(std::chrono::seconds(120)), 0) << first.Log();
  ASSERT_EQ(second.WaitExit(std::chrono::seconds(120)), 0) << second.Log();

  std::string first_how, second_how;
  const int first_share = Reaccounted(first.Log(), &first_how);
  const int second_share = Reaccounted(second.Log(), &second_how);
  EXPECT_EQ(first_share + second_share, kCaptures) << first.Log() << second.Log();
  EXPECT_GT(first_share, 0) << first.Log();
  EXPECT_GT(second_share, 0) << second.Log();
  const std::vector<std::string> hows = {first_how, second_how};
  EXPECT_TRUE((hows == std::vector<std::string>{"started shared run 1", "joined shared run 1"}) ||
              (hows == std::vector<std::string>{"joined shared run 1", "started shared run 1"}))
      << first_how << " / " << second_how;

  std::map<std::string, int64_t> writes = ReportWrites();
  EXPECT_EQ(writes.size(), static_cast<size_t>(kCaptures));
  for (const auto& [id, report] : ingest_reports_) EXPECT_EQ(writes[id], 1) << id;
  ExpectReportsAsAtIngest();

  // The run is finished: the next --reaccount starts another and does every capture again.
  testing::Subprocess again({testing::Bin("memfleet-server"), "--db", uri_, "--reaccount"}, dir_.path() + "/again.log");
  ASSERT_EQ(again.WaitExit(std::chrono::seconds(120)), 0) << again.Log();
  std::string again_how;
  EXPECT_EQ(Reaccounted(again.Log(), &again_how), kCaptures) << again.Log();
  EXPECT_EQ(again_how, "started shared run 2");
  writes = ReportWrites();
  for (const auto& [id, report] : ingest_reports_) EXPECT_EQ(writes[id], 2) << id;
}

TEST_F(SharedReaccountTest, TheClaimsOfAServerWhoseConnectionDiedAreClaimedAgain) {
  std::vector<std::string> handed_to_dead;
  {
    std::unique_ptr<storage::SqlStore> dying = Open();
    ASSERT_NE(dying, nullptr);
    // At its first capture the server's connections are ended (as when its machine goes away): the
    // batch it claimed is never marked done.
    absl::StatusOr<storage::SqlStore::ReaccountRun> run =
        dying->ForEachClaimedRawCapture("", "2026-12-01T00:00:00Z", [&](const storage::CaptureStore::RawCapture& raw) {
          handed_to_dead.push_back(raw.capture_id);
          if (handed_to_dead.size() == 1) {
            ASSERT_TRUE(storage::RunSql(*admin_,
                                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                                        "datname = current_database() AND pid <> pg_backend_pid()",
                                        {})
                            .ok());
          }
        });
    EXPECT_FALSE(run.ok());
  }
  ASSERT_EQ(handed_to_dead.size(), 1u);
  // A terminated backend leaves pg_stat_activity when it has exited, a moment after the signal.
  ASSERT_TRUE(testing::WaitFor([&] { return OtherBackends() == 0; }, std::chrono::seconds(30),
                               /*every=*/std::chrono::milliseconds(20)))
      << OtherBackends() << " other backends";
  std::vector<std::string> handed_to_next;
  std::unique_ptr<storage::SqlStore> next = Open();
  ASSERT_NE(next, nullptr);
  absl::StatusOr<storage::SqlStore::ReaccountRun> run = next->ForEachClaimedRawCapture(
      "", "2026-12-01T00:05:00Z",
      [&](const storage::CaptureStore::RawCapture& raw) { handed_to_next.push_back(raw.capture_id); });
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->joined);
  EXPECT_EQ(run->run_id, 1);
  EXPECT_EQ(handed_to_next.size(), static_cast<size_t>(kCaptures));  // its own share and the dead one's
  absl::StatusOr<std::optional<std::string>> finished =
      storage::QueryFirst(*admin_, "SELECT finished_at FROM reaccount_runs WHERE run_id = 1", {},
                          [](const storage::SqlRow& r) { return r.ColumnText(0); });
  ASSERT_TRUE(finished.ok() && finished->has_value()) << finished.status();
  EXPECT_EQ(**finished, "2026-12-01T00:05:00.000Z");
}

TEST_F(SharedReaccountTest, TheReaccountRpcOfAServerInTheFleetJoinsTheRunningSharedRun) {
  server::LabServerOptions options;
  options.db_path = uri_;
  options.listen = "127.0.0.1:0";
  absl::StatusOr<std::unique_ptr<LabServer>> server = LabServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  auto stub = v1::QueryService::NewStub(
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", (*server)->port()), grpc::InsecureChannelCredentials()));
  // Another server's --reaccount is walking its first claimed batch when `memfleet reaccount` asks this
  // server: the RPC joins that run and re-accounts the captures nobody has claimed.
  std::vector<std::string> handed_to_other;
  std::optional<v1::ReaccountResponse> answer;
  absl::StatusOr<storage::SqlStore::ReaccountRun> run =
      store_->ForEachClaimedRawCapture("", "2026-12-01T00:00:00Z", [&](const storage::CaptureStore::RawCapture& raw) {
        handed_to_other.push_back(raw.capture_id);
        if (answer.has_value()) return;
        grpc::ClientContext ctx;
        v1::ReaccountResponse response;
        grpc::Status s = stub->Reaccount(&ctx, v1::ReaccountRequest(), &response);
        EXPECT_TRUE(s.ok()) << s.error_message();
        answer = response;
      });
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->failed(), 0u);
  EXPECT_GT(answer->reaccounted(), 0u);
  EXPECT_EQ(answer->reaccounted() + handed_to_other.size(), static_cast<uint64_t>(kCaptures))
      << "the RPC re-accounted " << answer->reaccounted() << ", the other walk was handed " << handed_to_other.size();
  // Only the RPC wrote reports here: each capture the other walk was not handed, once.
  std::map<std::string, int64_t> writes = ReportWrites();
  EXPECT_EQ(writes.size(), answer->reaccounted());
  for (const std::string& id : handed_to_other) EXPECT_EQ(writes.count(id), 0u) << id;
  for (const auto& [id, n] : writes) EXPECT_EQ(n, 1) << id;
  ExpectReportsAsAtIngest();
}

}  // namespace
}  // namespace shared_reaccount_test
}  // namespace memfleet::server
