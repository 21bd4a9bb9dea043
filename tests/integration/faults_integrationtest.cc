// Faults survived, with the real binaries on loopback (docs/reliability.md): the server SIGKILLed mid-capture
// and restarted, the server SIGSTOPped past the agent's ack timeout, the agent SIGKILLed mid-send and
// restarted on its spool, a server whose disk fills up (a small tmpfs) or whose database cannot be
// written at all (a 0444 file), a sweep cut by killing the server, and an agent whose spool fills while
// the server is away. Each
// ends with the same ledger: every capture id the agent logged as taken is stored exactly once or still in
// its spool, nothing was dropped, and PRAGMA integrity_check is ok.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/collector.h"
#include "agent/header_rewrite.h"
#include "agent/spool.h"
#include "cli/server_client.h"
#include "proto/capture_codec.h"
#include "proto/capture_id.h"
#include "storage/sqlite/sqlite_db.h"
#include "tests/support/agent_ledger.h"
#include "tests/support/load_tree.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"

namespace memfleet {
namespace faults_scenario {
namespace {

using testing::Subprocess;
using Clock = std::chrono::steady_clock;

using testing::Bin;

using testing::CountOf;
using testing::TakenIds;
using testing::WaitFor;

class FaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-faults-");
    ASSERT_FALSE(dir_.empty());
    address_ = port_.address();
  }
  void TearDown() override {
    if (server_ != nullptr && !server_->Exited()) kill(server_->pid(), SIGCONT);  // a paused server can stop
    agents_.clear();
    server_.reset();
    if (!mounted_.empty()) {
      EXPECT_EQ(umount2(mounted_.c_str(), MNT_DETACH), 0) << std::strerror(errno);
    }
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  std::string db() const { return (db_dir_.empty() ? dir_ : db_dir_) + "/memfleet.db"; }

  // Starts memfleet-server on the fixed address_ (a restart must come back where the agents look);
  // `shell_prefix` runs it under sh with e.g. a file size limit.
  // `wrapper` goes in front of the command line (e.g. setpriv to run it as another user).
  void StartServer(const std::string& shell_prefix = "", const std::vector<std::string>& wrapper = {}) {
    StartServerOn(address_, &server_, shell_prefix, wrapper);
  }
  // Starts a memfleet-server on `address` with the test's database into `*slot`.
  void StartServerOn(const std::string& address, std::unique_ptr<Subprocess>* slot,
                     const std::string& shell_prefix = "", const std::vector<std::string>& wrapper = {}) {
    slot->reset();
    ++server_starts_;
    std::string log = dir_ + "/server-" + std::to_string(server_starts_) + ".log";
    std::vector<std::string> argv = wrapper;
    for (const std::string& a : {Bin("memfleet-server"), std::string("--listen"), address, std::string("--db"), db()}) {
      argv.push_back(a);
    }
    if (!shell_prefix.empty()) {
      std::string cmd = shell_prefix + " exec";
      for (const std::string& a : argv) cmd += " '" + a + "'";
      argv = {"/bin/sh", "-c", cmd};
    }
    // The port of a SIGKILLed server may take a moment to be bindable again: retry the start.
    for (int attempt = 0; attempt < 20; ++attempt) {
      *slot = std::make_unique<Subprocess>(argv, log);
      if (!(*slot)->WaitForLine("listening on", std::chrono::seconds(60)).empty()) return;
      (*slot)->Kill(SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    ADD_FAILURE() << "memfleet-server did not start: " << (*slot)->Log();
  }

  // `servers`: the agent's --server ("": address_).
  Subprocess& StartAgent(const std::string& device_id, std::vector<std::string> extra = {},
                         const std::string& servers = "") {
    std::vector<std::string> argv = {Bin("memfleet-agent"),
                                     "--server",
                                     servers.empty() ? address_ : servers,
                                     "--root",
                                     testing::TestData("captures/qcom-sm8450/tree"),
                                     "--device-id",
                                     device_id,
                                     "--spool",
                                     spool_dir(device_id)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    std::string log = dir_ + "/agent-" + device_id + "-" + std::to_string(agents_.size()) + ".log";
    agents_.push_back(std::make_unique<Subprocess>(argv, log));
    return *agents_.back();
  }
  std::string spool_dir(const std::string& device_id) const { return dir_ + "/spool-" + device_id; }

  // capture id -> number of rows with it, read from the SQLite file (the server may be running: WAL).
  std::map<std::string, int> Stored(const std::string& device_id) {
    std::map<std::string, int> out;
    absl::StatusOr<storage::SqliteDb> d = storage::SqliteDb::Open(db(), SQLITE_OPEN_READONLY);
    if (!d.ok()) return out;
    absl::StatusOr<storage::Statement> st =
        d->Prepare("SELECT capture_id, COUNT(*) FROM captures WHERE device_id = ?1 GROUP BY capture_id");
    if (!st.ok() || !st->BindText(1, device_id).ok()) return out;
    for (;;) {
      absl::StatusOr<storage::StepResult> r = st->Step();
      if (!r.ok() || *r != storage::StepResult::kRow) break;
      out[st->ColumnText(0)] = static_cast<int>(st->ColumnInt64(1));
    }
    return out;
  }

  std::string IntegrityCheck() {
    absl::StatusOr<storage::SqliteDb> d = storage::SqliteDb::Open(db(), SQLITE_OPEN_READWRITE);
    if (!d.ok()) return std::string(d.status().message());
    absl::StatusOr<storage::Statement> st = d->Prepare("PRAGMA integrity_check");
    if (!st.ok()) return std::string(st.status().message());
    absl::StatusOr<storage::StepResult> r = st->Step();
    if (!r.ok()) return std::string(r.status().message());
    return st->ColumnText(0);
  }

  // The ledger once every agent of `device_id` has exited: each id taken is stored exactly once or still
  // spooled, nothing stored that was not taken, nothing dropped.
  void ExpectLedger(const std::string& device_id, const std::set<std::string>& taken) {
    std::map<std::string, int> stored = Stored(device_id);
    absl::StatusOr<std::unique_ptr<agent::Spool>> spool = agent::Spool::Open({spool_dir(device_id), 64ull << 20});
    ASSERT_TRUE(spool.ok()) << spool.status();
    std::set<std::string> spooled;
    for (const agent::Spool::Entry& e : (*spool)->List()) spooled.insert(e.capture_id);
    EXPECT_EQ((*spool)->dropped(), 0u);
    for (const std::string& id : taken) {
      EXPECT_TRUE(stored.count(id) == 1 || spooled.count(id) == 1) << "capture " << id << " lost";
      EXPECT_FALSE(stored.count(id) == 1 && spooled.count(id) == 1) << "capture " << id << " stored and spooled";
    }
    for (const auto& [id, rows] : stored) {
      EXPECT_EQ(rows, 1) << id;
      EXPECT_EQ(taken.count(id), 1u) << "stored capture " << id << " was never taken";
    }
    // Every stored capture has its report (the store writes both in one transaction).
    absl::StatusOr<storage::SqliteDb> d = storage::SqliteDb::Open(db(), SQLITE_OPEN_READONLY);
    ASSERT_TRUE(d.ok());
    absl::StatusOr<storage::Statement> st = d->Prepare(
        "SELECT COUNT(*) FROM captures c LEFT JOIN device_reports r USING (capture_id) WHERE r.capture_id IS NULL");
    ASSERT_TRUE(st.ok());
    ASSERT_TRUE(st->Step().ok());
    EXPECT_EQ(st->ColumnInt64(0), 0) << "captures without a report";
  }

  std::string AllAgentLogs() {
    std::string all;
    for (const auto& a : agents_) all += a->Log();
    return all;
  }

  // Device id -> state of the sweep in the SQLite file, and its finished_at ("" while running).
  std::map<std::string, std::string> SweepStates(const std::string& sweep_id, std::string* finished_at) {
    std::map<std::string, std::string> out;
    absl::StatusOr<storage::SqliteDb> d = storage::SqliteDb::Open(db(), SQLITE_OPEN_READONLY);
    if (!d.ok()) return out;
    absl::StatusOr<storage::Statement> st = d->Prepare("SELECT finished_at FROM sweeps WHERE sweep_id = ?1");
    if (!st.ok() || !st->BindText(1, sweep_id).ok()) return out;
    absl::StatusOr<storage::StepResult> r = st->Step();
    if (!r.ok() || *r != storage::StepResult::kRow) return out;
    *finished_at = st->ColumnText(0);
    st = d->Prepare("SELECT device_id, state FROM sweep_devices WHERE sweep_id = ?1");
    if (!st.ok() || !st->BindText(1, sweep_id).ok()) return out;
    for (;;) {
      r = st->Step();
      if (!r.ok() || *r != storage::StepResult::kRow) break;
      out[st->ColumnText(0)] = st->ColumnText(1);
    }
    return out;
  }

  std::string dir_;
  std::string db_dir_;                     // "" = dir_
  std::string mounted_;                    // a file system the test mounted, unmounted at the end
  testing::LoopbackPortReservation port_;  // every server of the test listens here, agents look here
  std::string address_;
  int server_starts_ = 0;
  std::unique_ptr<Subprocess> server_;
  std::vector<std::unique_ptr<Subprocess>> agents_;
};

TEST_F(FaultsTest, ServerKilledMidCaptureRestartsAndStoresEachCaptureOnce) {
  StartServer();
  Subprocess& agent = StartAgent("kill-server", {"--interval", "1", "--ack-timeout", "3"});
  ASSERT_TRUE(WaitFor([&] { return Stored("kill-server").size() >= 2; }, std::chrono::seconds(60))) << agent.Log();
  // Freeze the server, so the next capture (taken every second) is certainly in flight and unacked when the
  // server dies under it: waiting for a natural sent-but-unacked moment loses the race on a fast machine,
  // where the ack follows the send within a millisecond or two.
  size_t taken_before_stop = TakenIds(agent.Log()).size();
  ASSERT_EQ(kill(server_->pid(), SIGSTOP), 0);
  ASSERT_TRUE(WaitFor([&] { return TakenIds(agent.Log()).size() > taken_before_stop; }, std::chrono::seconds(10)))
      << agent.Log();
  // Sent into the socket, or blocked in it by flow control: either way it is the server's half-read capture.
  WaitFor([&] { return CountOf(agent.Log(), " sent (") > CountOf(agent.Log(), " acked"); }, std::chrono::seconds(1));
  EXPECT_GT(CountOf(agent.Log(), " taken"), CountOf(agent.Log(), " acked")) << agent.Log();
  server_->Kill(SIGKILL);
  size_t taken_at_kill = TakenIds(agent.Log()).size();
  // The agent goes on capturing into its spool while the server is away.
  ASSERT_TRUE(WaitFor([&] { return TakenIds(agent.Log()).size() >= taken_at_kill + 2; }, std::chrono::seconds(60)));
  EXPECT_EQ(IntegrityCheck(), "ok");  // straight after the kill, before any restart

  std::set<std::string> taken_while_down = TakenIds(agent.Log());
  StartServer();
  ASSERT_TRUE(WaitFor(
      [&] {
        std::map<std::string, int> stored = Stored("kill-server");
        for (const std::string& id : taken_while_down) {
          if (stored.count(id) == 0) return false;
        }
        return true;
      },
      std::chrono::seconds(90)))
      << agent.Log();
  agent.Kill(SIGTERM);
  server_->Kill(SIGTERM);
  ExpectLedger("kill-server", TakenIds(agent.Log()));
  EXPECT_EQ(IntegrityCheck(), "ok");
}

TEST_F(FaultsTest, ServerKilledMidCaptureFailsOverToTheOtherServerOnTheSameDatabase) {
  // Two servers on one database; the agent lists both. The first dies under a capture in flight and is
  // never restarted: the agent moves to the second, which stores what the first had not acked (or acks it
  // as a duplicate if the first had committed it), and the ledger holds: each capture stored once.
  testing::LoopbackPortReservation second_port;
  StartServer();
  std::unique_ptr<Subprocess> second;
  StartServerOn(second_port.address(), &second);
  ASSERT_NE(second, nullptr);
  Subprocess& agent =
      StartAgent("failover", {"--interval", "1", "--ack-timeout", "3"}, address_ + "," + second_port.address());
  ASSERT_TRUE(WaitFor([&] { return Stored("failover").size() >= 2; }, std::chrono::seconds(60))) << agent.Log();
  EXPECT_EQ(CountOf(agent.Log(), "connected to ipv4:" + address_ + " as"), 1u) << agent.Log();
  size_t taken_before_stop = TakenIds(agent.Log()).size();
  ASSERT_EQ(kill(server_->pid(), SIGSTOP), 0);
  ASSERT_TRUE(WaitFor([&] { return TakenIds(agent.Log()).size() > taken_before_stop; }, std::chrono::seconds(10)))
      << agent.Log();
  server_->Kill(SIGKILL);
  ASSERT_TRUE(WaitFor([&] { return CountOf(agent.Log(), "connected to ipv4:" + second_port.address()) >= 1; },
                      std::chrono::seconds(60)))
      << agent.Log();
  std::set<std::string> taken_before_failover = TakenIds(agent.Log());
  ASSERT_TRUE(WaitFor(
      [&] {
        std::map<std::string, int> stored = Stored("failover");
        for (const std::string& id : taken_before_failover) {
          if (stored.count(id) == 0) return false;
        }
        return true;
      },
      std::chrono::seconds(90)))
      << agent.Log();
  agent.Kill(SIGTERM);
  second->Kill(SIGTERM);
  ExpectLedger("failover", TakenIds(agent.Log()));
  EXPECT_EQ(IntegrityCheck(), "ok");
}

TEST_F(FaultsTest, ServerPausedPastTheAckTimeoutLosesAndDuplicatesNothing) {
  StartServer();
  Subprocess& agent = StartAgent("pause-server", {"--interval", "1", "--ack-timeout", "2"});
  ASSERT_TRUE(WaitFor([&] { return Stored("pause-server").size() >= 1; }, std::chrono::seconds(60))) << agent.Log();
  size_t disconnects_before = CountOf(agent.Log(), "disconnected from") + CountOf(agent.Log(), "cannot connect");
  kill(server_->pid(), SIGSTOP);
  // Paused until the agent gave up on it (its 2 s ack/Welcome deadline passed) and spooled more captures.
  bool gave_up = WaitFor(
      [&] {
        std::string log = agent.Log();
        return CountOf(log, "disconnected from") + CountOf(log, "cannot connect") > disconnects_before;
      },
      std::chrono::seconds(60));
  size_t taken_at_pause = TakenIds(agent.Log()).size();
  WaitFor([&] { return TakenIds(agent.Log()).size() >= taken_at_pause + 2; }, std::chrono::seconds(30));
  kill(server_->pid(), SIGCONT);
  ASSERT_TRUE(gave_up) << agent.Log();

  std::set<std::string> taken_while_paused = TakenIds(agent.Log());
  ASSERT_TRUE(WaitFor(
      [&] {
        std::map<std::string, int> stored = Stored("pause-server");
        for (const std::string& id : taken_while_paused) {
          if (stored.count(id) == 0) return false;
        }
        return true;
      },
      std::chrono::seconds(90)))
      << agent.Log();
  agent.Kill(SIGTERM);
  ASSERT_FALSE(server_->Exited()) << server_->Log();
  server_->Kill(SIGTERM);
  ExpectLedger("pause-server", TakenIds(agent.Log()));
  EXPECT_EQ(IntegrityCheck(), "ok");
}

TEST_F(FaultsTest, AgentKilledMidSendRestartsAndDrainsItsSpool) {
  StartServer();
  Subprocess& first = StartAgent("kill-agent", {"--interval", "1", "--ack-timeout", "30"});
  ASSERT_TRUE(WaitFor([&] { return Stored("kill-agent").size() >= 1; }, std::chrono::seconds(60))) << first.Log();
  // Pause the server so that sends stall, let captures pile up, and kill the agent while one is in flight.
  kill(server_->pid(), SIGSTOP);
  size_t taken_at_pause = TakenIds(first.Log()).size();
  bool piled = WaitFor([&] { return TakenIds(first.Log()).size() >= taken_at_pause + 3; }, std::chrono::seconds(60));
  first.Kill(SIGKILL);
  kill(server_->pid(), SIGCONT);
  ASSERT_TRUE(piled) << first.Log();
  std::set<std::string> taken_first = TakenIds(first.Log());
  {
    absl::StatusOr<std::unique_ptr<agent::Spool>> spool = agent::Spool::Open({spool_dir("kill-agent"), 64ull << 20});
    ASSERT_TRUE(spool.ok()) << spool.status();
    EXPECT_GE((*spool)->count(), 3u);  // the spool survived the kill
  }

  Subprocess& second = StartAgent("kill-agent", {"--interval", "3600", "--ack-timeout", "30"});
  ASSERT_TRUE(WaitFor([&] { return CountOf(second.Log(), "; spool: 0 captures") > 0; }, std::chrono::seconds(90)))
      << second.Log();
  second.Kill(SIGTERM);
  server_->Kill(SIGTERM);
  std::set<std::string> taken = taken_first;
  for (const std::string& id : TakenIds(second.Log())) taken.insert(id);
  ExpectLedger("kill-agent", taken);
  EXPECT_EQ(Stored("kill-agent").size(), taken.size());  // drained: all of them stored
  EXPECT_EQ(IntegrityCheck(), "ok");
}

// Writes to `path` until the file system has no room left; returns the bytes written.
uint64_t FillUp(const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const std::string block(4096, 'x');
  uint64_t written = 0;
  while (out.write(block.data(), static_cast<std::streamsize>(block.size())) && out.flush()) written += block.size();
  return written;
}

// Capture ids of the agent log's "capture <id> rejected for now" lines.
std::set<std::string> RejectedIds(const std::string& log) {
  std::set<std::string> ids;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    size_t at = line.find("capture ");
    size_t rejected = line.find(" rejected for now");
    if (at == std::string::npos || rejected == std::string::npos || rejected < at + 8) continue;
    ids.insert(line.substr(at + 8, rejected - at - 8));
  }
  return ids;
}

TEST_F(FaultsTest, FullDiskRefusesCapturesUntilSpaceIsFreedThenStoresThemWithoutARestart) {
  // The database on a small file system of its own (a tmpfs), filled up the way a disk fills: by
  // another file. Freeing that file is all the fix; the server keeps running throughout.
  const std::string disk = dir_ + "/disk";
  ASSERT_EQ(mkdir(disk.c_str(), 0755), 0);
  if (mount("tmpfs", disk.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=0755") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs at " << disk << " (" << std::strerror(errno)
                 << "): this test needs root (CAP_SYS_ADMIN) to give the database a disk it can fill";
  }
  mounted_ = disk;
  db_dir_ = disk;
  StartServer();
  const pid_t server_pid = server_->pid();
  // Refused captures come back after 2 s, not the default 30: the resend is what the test waits for.
  Subprocess& agent =
      StartAgent("full-disk", {"--interval", "2", "--ack-timeout", "10", "--resend-refused-after", "2"});
  ASSERT_TRUE(WaitFor([&] { return !Stored("full-disk").empty(); }, std::chrono::seconds(60))) << agent.Log();

  const std::string filler = disk + "/filler";
  ASSERT_GT(FillUp(filler), 0u);
  ASSERT_TRUE(WaitFor([&] { return !RejectedIds(agent.Log()).empty(); }, std::chrono::seconds(60)))
      << agent.Log() << server_->Log();
  const std::set<std::string> refused = RejectedIds(agent.Log());
  EXPECT_NE(agent.Log().find("database or disk is full"), std::string::npos) << agent.Log();
  EXPECT_FALSE(server_->Exited()) << server_->Log();
  for (const std::string& id : refused) EXPECT_EQ(Stored("full-disk").count(id), 0u) << id;

  // Space is back: the same server process stores the refused captures when the agent resends them.
  ASSERT_EQ(unlink(filler.c_str()), 0);
  ASSERT_TRUE(WaitFor(
      [&] {
        std::map<std::string, int> stored = Stored("full-disk");
        for (const std::string& id : refused) {
          if (stored.count(id) == 0) return false;
        }
        return true;
      },
      std::chrono::seconds(90)))
      << agent.Log() << server_->Log();
  EXPECT_EQ(server_starts_, 1);
  EXPECT_EQ(server_->pid(), server_pid);
  EXPECT_FALSE(server_->Exited()) << server_->Log();
  agent.Kill(SIGTERM);
  server_->Kill(SIGTERM);
  ExpectLedger("full-disk", TakenIds(agent.Log()));
  EXPECT_EQ(IntegrityCheck(), "ok");
}

TEST_F(FaultsTest, SweepCutByKillingTheServerIsClosedAsInterruptedAtRestart) {
  StartServer();
  // A device the server knows but that is offline, and one whose agent is connected but frozen: the
  // sweep waits on it when the server dies.
  Subprocess& gone = StartAgent("sweep-gone", {"--interval", "3600"});
  ASSERT_TRUE(WaitFor([&] { return !Stored("sweep-gone").empty(); }, std::chrono::seconds(60))) << gone.Log();
  gone.Kill(SIGTERM);
  Subprocess& frozen = StartAgent("sweep-frozen", {"--interval", "3600"});
  ASSERT_TRUE(WaitFor([&] { return !Stored("sweep-frozen").empty(); }, std::chrono::seconds(60))) << frozen.Log();
  cli::ServerClient client(address_);
  auto online = [&](const std::string& id) {
    absl::StatusOr<v1::ListDevicesResponse> r = client.ListDevices({});
    if (!r.ok()) return false;
    for (const v1::DeviceSummary& d : r->devices()) {
      if (d.device_id() == id) return d.online();
    }
    return false;
  };
  ASSERT_TRUE(WaitFor([&] { return !online("sweep-gone") && online("sweep-frozen"); }, std::chrono::seconds(30)));
  ASSERT_EQ(kill(frozen.pid(), SIGSTOP), 0);

  Subprocess sweep({Bin("memfleet"), "sweep", "--server", address_, "--deadline", "600"}, dir_ + "/sweep.log");
  const std::string started = server_->WaitForLine(" started (", std::chrono::seconds(30));
  ASSERT_NE(started.find("sweep sweep-"), std::string::npos) << server_->Log();
  const size_t id_at = started.find("sweep-");
  const std::string sweep_id = started.substr(id_at, started.find(' ', id_at) - id_at);
  server_->Kill(SIGKILL);

  // What the kill left: the sweep open, the frozen device still "sent".
  std::string finished_at = "unread";
  EXPECT_EQ(SweepStates(sweep_id, &finished_at),
            (std::map<std::string, std::string>{{"sweep-frozen", "sent"}, {"sweep-gone", "offline"}}));
  EXPECT_EQ(finished_at, "");

  StartServer();
  finished_at = "unread";
  EXPECT_EQ(SweepStates(sweep_id, &finished_at),
            (std::map<std::string, std::string>{{"sweep-frozen", "interrupted"}, {"sweep-gone", "offline"}}));
  EXPECT_FALSE(finished_at.empty());
  EXPECT_NE(finished_at, "unread");
  EXPECT_NE(server_->Log().find("sweep " + sweep_id +
                                " was left running by an earlier server process: closed, 1 of 2 "
                                "devices interrupted"),
            std::string::npos)
      << server_->Log();
  ASSERT_EQ(kill(frozen.pid(), SIGCONT), 0);
  server_->Kill(SIGTERM);
  EXPECT_EQ(IntegrityCheck(), "ok");
}

TEST_F(FaultsTest, ReadOnlyDatabaseRefusesCapturesUntilFixedThenStoresThemOnce) {
  // A database with its schema, made read-only (0444) for the server's user. Root ignores file modes, so
  // as root the server runs as nobody; the folder stays writable for SQLite's -wal and -shm files.
  StartServer();
  server_->Kill(SIGTERM);
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  ASSERT_EQ(chmod(db().c_str(), 0444), 0);
  std::vector<std::string> as_other_user;
  if (geteuid() == 0) as_other_user = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  StartServer("", as_other_user);
  Subprocess& agent = StartAgent("read-only", {"--interval", "3600", "--ack-timeout", "10"});
  // Refused with SQLite's reason, logged by the agent, and retried (a second attempt logged).
  ASSERT_TRUE(WaitFor([&] { return CountOf(agent.Log(), "readonly database") >= 2; }, std::chrono::seconds(60)))
      << agent.Log() << server_->Log();
  EXPECT_EQ(CountOf(agent.Log(), " acked"), 0u);
  EXPECT_FALSE(server_->Exited()) << server_->Log();
  EXPECT_TRUE(Stored("read-only").empty());

  // Fixed (writable again, the server restarted by its operator): the spooled capture is stored once.
  server_->Kill(SIGTERM);
  ASSERT_EQ(chmod(db().c_str(), 0644), 0);
  StartServer();
  ASSERT_TRUE(WaitFor([&] { return CountOf(agent.Log(), " acked") >= 1; }, std::chrono::seconds(90))) << agent.Log();
  agent.Kill(SIGTERM);
  server_->Kill(SIGTERM);
  ExpectLedger("read-only", TakenIds(agent.Log()));
  EXPECT_EQ(Stored("read-only").size(), 1u);
  EXPECT_EQ(IntegrityCheck(), "ok");
}

// Ids after "spool full: dropping the oldest capture " in an agent log, in order.
std::vector<std::string> DroppedIds(const std::string& log) {
  const std::string marker = "spool full: dropping the oldest capture ";
  std::vector<std::string> ids;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    size_t at = line.find(marker);
    // The id ends the line, or a note follows it (one deleted while it was sent, and then not acked).
    if (at != std::string::npos)
      ids.push_back(line.substr(at + marker.size(), line.find(' ', at + marker.size()) - at - marker.size()));
  }
  return ids;
}

// Drops the server confirmed, from the agent's log: counts sent in Hello ("..., N dropped reported" once
// welcomed) and those reported while connected ("server recorded N dropped captures").
uint64_t ReportedDrops(const std::string& log) {
  uint64_t reported = 0;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    size_t end = line.find(" dropped reported");
    if (end != std::string::npos) {
      size_t begin = line.rfind(", ", end);
      reported += std::stoull(line.substr(begin + 2, end - begin - 2));
    }
    const std::string recorded = "server recorded ";
    size_t at = line.find(recorded);
    if (at != std::string::npos) reported += std::stoull(line.substr(at + recorded.size()));
  }
  return reported;
}

TEST_F(FaultsTest, FullSpoolDropsTheOldestAndTheServerShowsTheLoss) {
  // The spool (1 MiB, the agent's smallest) is filled with real captures of the same tree while no server
  // runs; each capture the agent then takes must push out the oldest one.
  const std::string device = "spool-full";
  constexpr uint64_t kSpoolBytes = 1ull << 20;
  std::vector<std::string> prefilled;  // oldest first
  {
    absl::StatusOr<std::unique_ptr<agent::Spool>> spool = agent::Spool::Open({spool_dir(device), kSpoolBytes});
    ASSERT_TRUE(spool.ok()) << spool.status();
    agent::CaptureTreeFs fs(testing::TestData("captures/qcom-sm8450/tree"));
    for (int second = 0;; ++second) {
      std::string at = "2026-12-01T00:00:" + std::string(second < 10 ? "0" : "") + std::to_string(second) + "Z";
      agent::CollectOptions options;
      options.device_id = device;
      options.captured_at = at;
      absl::StatusOr<capture::Capture> capture = agent::CollectCapture(fs, options);
      ASSERT_TRUE(capture.ok()) << capture.status();
      ASSERT_TRUE(agent::RewriteCaptureHeaderOf(*capture, device, at).ok());
      absl::StatusOr<std::string> id = wire::MakeCaptureId(device, at, "0123abcd", (*spool)->NextSequence());
      ASSERT_TRUE(id.ok());
      std::string blob = wire::EncodeStoredCapture(*capture, *id, device, at, wire::kAgentCompressionLevel);
      ASSERT_FALSE(blob.empty());
      if ((*spool)->total_bytes() + blob.size() + 256 > kSpoolBytes) break;  // 256: the file's own framing
      ASSERT_TRUE((*spool)->Put(*id, at, "", blob).ok());
      prefilled.push_back(*id);
      ASSERT_LT(second, 59) << "captures too small to fill the spool";
    }
    ASSERT_EQ((*spool)->dropped(), 0u);
    ASSERT_GE(prefilled.size(), 3u);
  }

  // No server yet: captures every second, each dropping the oldest.
  Subprocess& agent = StartAgent(device, {"--interval", "1", "--ack-timeout", "5", "--spool-max-mb", "1"});
  ASSERT_TRUE(WaitFor([&] { return DroppedIds(agent.Log()).size() >= 2; }, std::chrono::seconds(40))) << agent.Log();
  StartServer();
  // Every prefilled capture that was not dropped reaches the server, and every drop was reported and
  // confirmed. The agent goes on capturing every second meanwhile: on a loaded machine a capture may still
  // find the spool full after the Hello, and its drop is then reported in the session, not in the Hello.
  ASSERT_TRUE(WaitFor(
      [&] {
        std::string log = agent.Log();
        std::vector<std::string> gone = DroppedIds(log);
        std::set<std::string> gone_set(gone.begin(), gone.end());
        std::map<std::string, int> stored = Stored(device);
        for (const std::string& id : prefilled) {
          if (gone_set.count(id) == 0 && stored.count(id) == 0) return false;
        }
        return CountOf(log, " dropped reported") > 0 && ReportedDrops(log) == gone.size();
      },
      std::chrono::seconds(60)))
      << agent.Log();
  agent.Kill(SIGTERM);
  ASSERT_GE(agent.WaitExit(std::chrono::seconds(30)), 0) << agent.Log();

  // The oldest went first, in order. Once the server is up, a prefilled capture the spool deleted while it
  // was sent and that the server then acked is not a drop, so later drops may skip it.
  const std::vector<std::string> dropped = DroppedIds(agent.Log());
  ASSERT_GE(dropped.size(), 2u);
  EXPECT_EQ(dropped[0], prefilled[0]);
  EXPECT_EQ(dropped[1], prefilled[1]);
  auto prefilled_at = prefilled.begin();
  for (const std::string& id : dropped) {
    auto found = std::find(prefilled_at, prefilled.end(), id);
    if (found != prefilled.end()) prefilled_at = found + 1;
    EXPECT_TRUE(found != prefilled.end() || std::find(prefilled.begin(), prefilled.end(), id) == prefilled.end())
        << "prefilled capture " << id << " dropped out of order";
  }

  // The loss is visible: the server holds the count the agent reported on reconnect, and the CLI shows it.
  const uint64_t reported = ReportedDrops(agent.Log());
  absl::StatusOr<std::unique_ptr<agent::Spool>> spool = agent::Spool::Open({spool_dir(device), kSpoolBytes});
  ASSERT_TRUE(spool.ok());
  EXPECT_EQ(reported + (*spool)->dropped(), dropped.size());  // every drop reported, or still to report
  EXPECT_GE(reported, 2u);
  Subprocess cli({Bin("memfleet"), "devices", "--server", address_, "--json"}, dir_ + "/cli-devices.log");
  ASSERT_EQ(cli.WaitExit(std::chrono::seconds(30)), 0) << cli.Log();
  EXPECT_NE(cli.Log().find("\"dropped_captures\": " + std::to_string(reported)), std::string::npos) << cli.Log();
  Subprocess table({Bin("memfleet"), "devices", "--server", address_}, dir_ + "/cli-table.log");
  ASSERT_EQ(table.WaitExit(std::chrono::seconds(30)), 0) << table.Log();
  EXPECT_NE(table.Log().find(device + ": " + std::to_string(reported) + " captures dropped"), std::string::npos)
      << table.Log();
  server_->Kill(SIGTERM);

  // The ledger: every capture either stored exactly once, dropped (and counted), or still spooled.
  std::set<std::string> all(prefilled.begin(), prefilled.end());
  for (const std::string& id : TakenIds(agent.Log())) all.insert(id);
  std::set<std::string> dropped_set(dropped.begin(), dropped.end());
  std::set<std::string> spooled;
  for (const agent::Spool::Entry& e : (*spool)->List()) spooled.insert(e.capture_id);
  std::map<std::string, int> stored = Stored(device);
  for (const std::string& id : all) {
    // A capture sent just before SIGTERM may be stored and still spooled (its ack had not arrived): it is
    // sent again on the next start and acked as a duplicate (the rows == 1 check below).
    const bool stored_or_spooled = stored.count(id) > 0 || spooled.count(id) > 0;
    EXPECT_NE(stored_or_spooled, dropped_set.count(id) > 0) << "capture " << id << " lost, or dropped yet kept";
  }
  for (const auto& [id, rows] : stored) {
    EXPECT_EQ(rows, 1) << id;
    EXPECT_EQ(all.count(id), 1u) << id;
  }
  EXPECT_EQ(IntegrityCheck(), "ok");
}

}  // namespace
}  // namespace faults_scenario
}  // namespace memfleet
