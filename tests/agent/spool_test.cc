// Spool: captures survive a restart in order, a full spool drops (and counts) the oldest first, and a
// damaged spool file is skipped and counted — never a crash, never a wrong capture. A spool folder another
// user could write to is refused, and nothing planted in one (symlinks, FIFOs, others' files) is followed,
// sent or deleted; the tests that need a second uid run as root and are skipped otherwise.
#include "agent/spool.h"

#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace memfleet::agent {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "memfleet-spool-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern + "/spool";  // Open creates it
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(fs::path(dir_).parent_path(), ec);
  }

  std::unique_ptr<Spool> OpenSpool(uint64_t max_bytes = 64ull << 20) {
    absl::StatusOr<std::unique_ptr<Spool>> spool = Spool::Open({dir_, max_bytes});
    EXPECT_TRUE(spool.ok()) << spool.status();
    return spool.ok() ? std::move(*spool) : nullptr;
  }

  std::vector<std::string> Ids(const Spool& spool) {
    std::vector<std::string> ids;
    for (const Spool::Entry& e : spool.List()) ids.push_back(e.capture_id);
    return ids;
  }

  std::vector<std::string> CaptureFiles() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) {
      std::string name = e.path().filename().string();
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".cap") == 0) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir_;
};

// A capture's file: 8 magic + 4 meta length + meta (3 x 4 length + the strings) + 8 blob length + blob + 4 CRC.
uint64_t FileBytes(const std::string& id, const std::string& at, const std::string& sweep, size_t blob) {
  return 8 + 4 + (12 + id.size() + at.size() + sweep.size()) + 8 + blob + 4;
}

TEST_F(SpoolTest, CapturesSurviveAReopenOldestFirst) {
  {
    std::unique_ptr<Spool> spool = OpenSpool();
    ASSERT_NE(spool, nullptr);
    ASSERT_TRUE(spool->Put("d-20261202T161500Z-000001", "2026-12-02T16:15:00Z", "", "blob one").ok());
    ASSERT_TRUE(
        spool->Put("d-20261202T162000Z-000002", "2026-12-02T16:20:00Z", "sweep-7", std::string("b\0two", 5)).ok());
    ASSERT_TRUE(spool->Put("d-20261202T162500Z-000003", "2026-12-02T16:25:00Z", "", "").ok());
  }
  std::unique_ptr<Spool> spool = OpenSpool();
  ASSERT_NE(spool, nullptr);
  EXPECT_THAT(Ids(*spool),
              ElementsAre("d-20261202T161500Z-000001", "d-20261202T162000Z-000002", "d-20261202T162500Z-000003"));
  EXPECT_EQ(spool->count(), 3u);
  absl::StatusOr<Spool::Loaded> second = spool->Load("d-20261202T162000Z-000002");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->blob, std::string("b\0two", 5));
  EXPECT_EQ(second->entry.captured_at, "2026-12-02T16:20:00Z");
  EXPECT_EQ(second->entry.sweep_id, "sweep-7");
  EXPECT_EQ(second->entry.size_bytes, FileBytes("d-20261202T162000Z-000002", "2026-12-02T16:20:00Z", "sweep-7", 5));
  absl::StatusOr<Spool::Loaded> empty = spool->Load("d-20261202T162500Z-000003");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->blob, "");
  EXPECT_EQ(spool->total_bytes(), FileBytes("d-20261202T161500Z-000001", "2026-12-02T16:15:00Z", "", 8) +
                                      FileBytes("d-20261202T162000Z-000002", "2026-12-02T16:20:00Z", "sweep-7", 5) +
                                      FileBytes("d-20261202T162500Z-000003", "2026-12-02T16:25:00Z", "", 0));

  // A capture spooled after the restart is newer than those from before it.
  ASSERT_TRUE(spool->Put("d-20261202T163000Z-000004", "2026-12-02T16:30:00Z", "", "four").ok());
  EXPECT_EQ(Ids(*spool).back(), "d-20261202T163000Z-000004");
}

TEST_F(SpoolTest, RemoveDeletesTheFileForGood) {
  {
    std::unique_ptr<Spool> spool = OpenSpool();
    ASSERT_TRUE(spool->Put("a", "2026-12-02T16:15:00Z", "", "1").ok());
    ASSERT_TRUE(spool->Put("b", "2026-12-02T16:16:00Z", "", "2").ok());
    ASSERT_TRUE(spool->Remove("a").ok());
    EXPECT_TRUE(spool->Remove("not-there").ok());
    EXPECT_FALSE(spool->Contains("a"));
    EXPECT_EQ(spool->Load("a").status().code(), absl::StatusCode::kNotFound);
  }
  EXPECT_EQ(CaptureFiles().size(), 1u);
  std::unique_ptr<Spool> spool = OpenSpool();
  EXPECT_THAT(Ids(*spool), ElementsAre("b"));
  EXPECT_EQ(spool->dropped(), 0u);  // an ack is not a drop
}

TEST_F(SpoolTest, FullSpoolDropsTheOldestAndCountsThem) {
  std::string blob(1000, 'x');
  uint64_t one = FileBytes("c1", "2026-12-02T16:15:00Z", "", blob.size());
  {
    // Room for three captures, not four.
    std::unique_ptr<Spool> spool = OpenSpool(3 * one + one / 2);
    for (const char* id : {"c1", "c2", "c3"}) ASSERT_TRUE(spool->Put(id, "2026-12-02T16:15:00Z", "", blob).ok());
    EXPECT_EQ(spool->dropped(), 0u);
    ASSERT_TRUE(spool->Put("c4", "2026-12-02T16:15:00Z", "", blob).ok());
    EXPECT_THAT(Ids(*spool), ElementsAre("c2", "c3", "c4"));
    EXPECT_EQ(spool->dropped(), 1u);
    ASSERT_TRUE(spool->Put("c5", "2026-12-02T16:15:00Z", "", blob).ok());
    EXPECT_THAT(Ids(*spool), ElementsAre("c3", "c4", "c5"));
    EXPECT_EQ(spool->dropped(), 2u);
    EXPECT_LE(spool->total_bytes(), 3 * one + one / 2);
  }
  // The count is persisted until the server has been told.
  std::unique_ptr<Spool> spool = OpenSpool(3 * one + one / 2);
  EXPECT_EQ(spool->dropped(), 2u);
  EXPECT_EQ(CaptureFiles().size(), 3u);
  // Hello said 1, then another drop happened before the Welcome: that one must still be reported.
  spool->ClearDropped(1);
  EXPECT_EQ(spool->dropped(), 1u);
  spool->ClearDropped(5);
  EXPECT_EQ(spool->dropped(), 0u);
  spool.reset();
  EXPECT_EQ(OpenSpool(3 * one + one / 2)->dropped(), 0u);
}

// A full spool may delete a capture while the transport sends it; the server's ack then means it was not
// lost, and only a send that ends without one makes it a drop.
TEST_F(SpoolTest, CaptureDeletedWhileInFlightIsADropOnlyWithoutAnAck) {
  std::string blob(1000, 'x');
  uint64_t one = FileBytes("c1", "2026-12-02T16:15:00Z", "", blob.size());
  std::unique_ptr<Spool> spool = OpenSpool(2 * one + one / 2);  // room for two
  for (const char* id : {"c1", "c2"}) ASSERT_TRUE(spool->Put(id, "2026-12-02T16:15:00Z", "", blob).ok());
  spool->MarkInFlight("c1");
  spool->MarkInFlight("c2");

  ASSERT_TRUE(spool->Put("c3", "2026-12-02T16:15:00Z", "", blob).ok());
  EXPECT_THAT(Ids(*spool), ElementsAre("c2", "c3"));  // the bound holds
  EXPECT_EQ(spool->dropped(), 0u);                    // c1's fate is not known yet
  ASSERT_TRUE(spool->Remove("c1").ok());              // acked: stored, so not lost
  EXPECT_EQ(spool->dropped(), 0u);

  ASSERT_TRUE(spool->Put("c4", "2026-12-02T16:15:00Z", "", blob).ok());
  EXPECT_THAT(Ids(*spool), ElementsAre("c3", "c4"));
  EXPECT_EQ(spool->dropped(), 0u);
  spool->SendFailed("c2");  // the stream broke before c2's ack: it is gone, and counted once
  EXPECT_EQ(spool->dropped(), 1u);
  spool->SendFailed("c2");
  ASSERT_TRUE(spool->Remove("c2").ok());
  EXPECT_EQ(spool->dropped(), 1u);

  // c3's send failed while it was still spooled: resent later, so its deletion afterwards is a plain drop.
  spool->MarkInFlight("c3");
  spool->SendFailed("c3");
  EXPECT_EQ(spool->dropped(), 1u);
  ASSERT_TRUE(spool->Put("c5", "2026-12-02T16:15:00Z", "", blob).ok());
  EXPECT_THAT(Ids(*spool), ElementsAre("c4", "c5"));
  EXPECT_EQ(spool->dropped(), 2u);

  // One the server refuses to verify too often is discarded: a deleted in-flight one counts once too.
  spool->MarkInFlight("c4");
  ASSERT_TRUE(spool->Put("c6", "2026-12-02T16:15:00Z", "", blob).ok());
  EXPECT_EQ(spool->dropped(), 2u);
  spool->Discard("c4");
  EXPECT_EQ(spool->dropped(), 3u);
  spool->SendFailed("c4");
  EXPECT_EQ(spool->dropped(), 3u);

  // Marking a capture that is not spooled (already deleted) marks nothing: its deletion was counted.
  spool->MarkInFlight("c1");
  spool->SendFailed("c1");
  EXPECT_EQ(spool->dropped(), 3u);
}

TEST_F(SpoolTest, CaptureLargerThanTheSpoolIsRefusedAndCounted) {
  std::unique_ptr<Spool> spool = OpenSpool(500);
  ASSERT_TRUE(spool->Put("small", "2026-12-02T16:15:00Z", "", "ok").ok());
  absl::Status s = spool->Put("huge", "2026-12-02T16:15:00Z", "", std::string(600, 'x'));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  // Dropping everything older would not have made room, so nothing older is sacrificed.
  EXPECT_THAT(Ids(*spool), ElementsAre("small"));
  EXPECT_EQ(spool->dropped(), 1u);
}

TEST_F(SpoolTest, PutWithTheSameIdReplaces) {
  std::unique_ptr<Spool> spool = OpenSpool();
  ASSERT_TRUE(spool->Put("a", "2026-12-02T16:15:00Z", "", "old").ok());
  ASSERT_TRUE(spool->Put("a", "2026-12-02T16:15:00Z", "s", "new").ok());
  EXPECT_EQ(spool->count(), 1u);
  EXPECT_EQ(spool->Load("a")->blob, "new");
  EXPECT_EQ(CaptureFiles().size(), 1u);
}

TEST_F(SpoolTest, TruncatedAndGarbageFilesAreSkippedAndCounted) {
  {
    std::unique_ptr<Spool> spool = OpenSpool();
    ASSERT_TRUE(spool->Put("a", "2026-12-02T16:15:00Z", "", std::string(100, 'a')).ok());
    ASSERT_TRUE(spool->Put("b", "2026-12-02T16:16:00Z", "", std::string(100, 'b')).ok());
    ASSERT_TRUE(spool->Put("c", "2026-12-02T16:17:00Z", "", std::string(100, 'c')).ok());
  }
  std::vector<std::string> files = CaptureFiles();
  ASSERT_EQ(files.size(), 3u);
  // "a" cut in the middle of its blob (a torn disk), "c" replaced by garbage, plus an empty file and a
  // left-over temporary file of an interrupted write.
  fs::resize_file(dir_ + "/" + files[0], 60);
  std::ofstream(dir_ + "/" + files[2], std::ios::binary | std::ios::trunc) << "\x01\x02 not a spool file";
  std::ofstream(dir_ + "/00000000000000000099.cap", std::ios::binary).flush();
  std::ofstream(dir_ + "/00000000000000000100.cap.tmp", std::ios::binary) << "half";

  std::unique_ptr<Spool> spool = OpenSpool();
  ASSERT_NE(spool, nullptr);
  EXPECT_THAT(Ids(*spool), ElementsAre("b"));
  EXPECT_EQ(spool->dropped(), 3u);
  EXPECT_EQ(spool->Load("b")->blob, std::string(100, 'b'));
  EXPECT_FALSE(fs::exists(dir_ + "/00000000000000000100.cap.tmp"));
  EXPECT_EQ(CaptureFiles().size(), 1u);
}

TEST_F(SpoolTest, FlippedBlobByteIsCaughtByTheChecksumOnLoad) {
  std::string name;
  {
    std::unique_ptr<Spool> spool = OpenSpool();
    ASSERT_TRUE(spool->Put("a", "2026-12-02T16:15:00Z", "", std::string(100, 'a')).ok());
    name = CaptureFiles().at(0);
  }
  {
    std::fstream f(dir_ + "/" + name, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(-20, std::ios::end);  // inside the blob; the framing stays valid
    f.put('Z');
  }
  std::unique_ptr<Spool> spool = OpenSpool();
  ASSERT_THAT(Ids(*spool), ElementsAre("a"));
  EXPECT_EQ(spool->Load("a").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_FALSE(spool->Contains("a"));
  EXPECT_EQ(spool->dropped(), 1u);
  EXPECT_TRUE(CaptureFiles().empty());
}

TEST_F(SpoolTest, SequenceContinuesAfterARestart) {
  {
    std::unique_ptr<Spool> spool = OpenSpool();
    EXPECT_EQ(spool->NextSequence(), 1u);
    EXPECT_EQ(spool->NextSequence(), 2u);
  }
  EXPECT_EQ(OpenSpool()->NextSequence(), 3u);
}

TEST_F(SpoolTest, UnusableFolderIsAnError) {
  std::string file = fs::path(dir_).parent_path().string() + "/a-file";
  std::ofstream(file) << "x";
  absl::StatusOr<std::unique_ptr<Spool>> spool = Spool::Open({file, 1 << 20});
  EXPECT_FALSE(spool.ok());
  EXPECT_FALSE(Spool::Open({"", 1 << 20}).ok());
}

// ---- A spool another user could write to (a shared /tmp): refused, and nothing planted is followed. ----

constexpr uid_t kNobody = 65534;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// The bytes of a valid spool file of capture `id`, made by a spool of its own under `scratch`.
std::string ValidSpoolFile(const std::string& scratch, const std::string& id) {
  absl::StatusOr<std::unique_ptr<Spool>> other = Spool::Open({scratch, 1 << 20});
  EXPECT_TRUE(other.ok()) << other.status();
  if (!other.ok()) return "";
  EXPECT_TRUE((*other)->Put(id, "2026-12-02T16:15:00Z", "", "planted blob").ok());
  return ReadAll(scratch + "/00000000000000000001.cap");
}

TEST_F(SpoolTest, MissingFoldersAreCreatedPrivate) {
  std::string parent = fs::path(dir_).parent_path().string();
  dir_ = parent + "/a/b/spool";
  ::umask(0);  // the modes must not depend on the umask the agent happens to run with
  std::unique_ptr<Spool> spool = OpenSpool();
  ::umask(022);
  ASSERT_NE(spool, nullptr);
  for (const char* sub : {"/a", "/a/b", "/a/b/spool"}) EXPECT_EQ(ModeOf(parent + sub), 0700u) << sub;
}

TEST_F(SpoolTest, PreCreatedWorldWritableFolderIsRefused) {
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  absl::StatusOr<std::unique_ptr<Spool>> spool = Spool::Open({dir_, 1 << 20});
  ASSERT_FALSE(spool.ok());
  EXPECT_EQ(spool.status().code(), absl::StatusCode::kFailedPrecondition);
  std::string message(spool.status().message());
  EXPECT_THAT(message, ::testing::HasSubstr(dir_));
  EXPECT_THAT(message, ::testing::HasSubstr("writable by its group or by others (mode 0777)"));
  // Group-writable is refused too; the owner's own 0755 is fine.
  ASSERT_EQ(chmod(dir_.c_str(), 0770), 0);
  EXPECT_EQ(Spool::Open({dir_, 1 << 20}).status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  EXPECT_NE(OpenSpool(), nullptr);
}

TEST_F(SpoolTest, FolderOwnedByAnotherUidIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "giving a folder to uid 65534 needs root";
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  ASSERT_EQ(chown(dir_.c_str(), kNobody, kNobody), 0);
  absl::StatusOr<std::unique_ptr<Spool>> spool = Spool::Open({dir_, 1 << 20});
  ASSERT_FALSE(spool.ok());
  EXPECT_EQ(spool.status().code(), absl::StatusCode::kFailedPrecondition);
  std::string message(spool.status().message());
  EXPECT_THAT(message, ::testing::HasSubstr(dir_));
  EXPECT_THAT(message, ::testing::HasSubstr("owned by uid 65534, not by this agent (uid 0)"));
}

TEST_F(SpoolTest, SymlinkedFolderIsRefused) {
  std::string real = fs::path(dir_).parent_path().string() + "/real";
  ASSERT_EQ(mkdir(real.c_str(), 0700), 0);
  fs::create_symlink(real, dir_);
  absl::StatusOr<std::unique_ptr<Spool>> spool = Spool::Open({dir_, 1 << 20});
  ASSERT_FALSE(spool.ok());
  EXPECT_EQ(spool.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(spool.status().message()), ::testing::HasSubstr("is a symlink"));
  EXPECT_TRUE(fs::is_empty(real));
}

TEST_F(SpoolTest, PlantedTmpSymlinksAreNotWrittenThrough) {
  std::string victim = fs::path(dir_).parent_path().string() + "/victim";
  std::ofstream(victim) << "precious";
  std::unique_ptr<Spool> spool = OpenSpool();
  ASSERT_NE(spool, nullptr);
  // The names the next capture and the counters are written to first.
  for (const char* name : {"00000000000000000001.cap.tmp", "sequence.tmp", "dropped.tmp"}) {
    fs::create_symlink(victim, dir_ + "/" + name);
  }
  ASSERT_TRUE(spool->Put("a", "2026-12-02T16:15:00Z", "", "blob a").ok());
  EXPECT_EQ(spool->NextSequence(), 1u);
  spool->Discard("a");  // persists the dropped counter
  EXPECT_EQ(ReadAll(victim), "precious");
  EXPECT_EQ(ReadAll(dir_ + "/sequence"), "1\n");
  EXPECT_EQ(ReadAll(dir_ + "/dropped"), "1\n");
  EXPECT_FALSE(fs::is_symlink(dir_ + "/sequence"));
}

TEST_F(SpoolTest, PlantedEntriesAreNeitherSentNorDeleted) {
  std::string parent = fs::path(dir_).parent_path().string();
  std::string planted = ValidSpoolFile(parent + "/other", "planted");
  ASSERT_FALSE(planted.empty());
  std::string counter = parent + "/counter";
  std::ofstream(counter) << "41\n";
  {
    std::unique_ptr<Spool> spool = OpenSpool();
    ASSERT_TRUE(spool->Put("mine", "2026-12-02T16:15:00Z", "", "blob").ok());
  }
  // A valid capture reached through a symlink, a FIFO, a counter through a symlink, and (as root) a
  // valid capture file owned by another uid.
  fs::create_symlink(parent + "/other/00000000000000000001.cap", dir_ + "/00000000000000000050.cap");
  ASSERT_EQ(mkfifo((dir_ + "/00000000000000000051.cap").c_str(), 0600), 0);
  fs::create_symlink(counter, dir_ + "/sequence");
  if (geteuid() == 0) {
    std::string foreign = dir_ + "/00000000000000000052.cap";
    std::ofstream(foreign, std::ios::binary) << planted;
    ASSERT_EQ(chown(foreign.c_str(), kNobody, kNobody), 0);
  }
  std::unique_ptr<Spool> spool = OpenSpool();
  ASSERT_NE(spool, nullptr);
  EXPECT_THAT(Ids(*spool), ElementsAre("mine"));
  EXPECT_EQ(spool->dropped(), 0u);
  EXPECT_EQ(spool->NextSequence(), 1u);  // not 42
  EXPECT_EQ(ReadAll(counter), "41\n");
  EXPECT_TRUE(fs::is_symlink(dir_ + "/00000000000000000050.cap"));
  EXPECT_TRUE(fs::exists(dir_ + "/00000000000000000051.cap"));
  if (geteuid() == 0) {
    EXPECT_TRUE(fs::exists(dir_ + "/00000000000000000052.cap"));
  }
}

// Runs `plant` as uid/gid 65534 in a child process; true when it succeeded (exit 0).
template <typename F>
bool AsNobody(F plant) {
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(2);
    _exit(plant() ? 0 : 1);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST_F(SpoolTest, AnotherUserCannotPrepareTheSpool) {
  if (geteuid() != 0) GTEST_SKIP() << "running a second uid (setuid 65534) needs root";
  std::string parent = fs::path(dir_).parent_path().string();
  std::string planted = ValidSpoolFile(parent + "/other", "planted");
  ASSERT_FALSE(planted.empty());
  std::string victim = parent + "/victim";
  std::ofstream(victim) << "precious";
  // The parent stands for /tmp: anyone may create in it, nobody may touch another's entries.
  ASSERT_EQ(chmod(parent.c_str(), 01777), 0);
  std::string cap = dir_ + "/00000000000000000007.cap";
  std::string tmp = dir_ + "/00000000000000000001.cap.tmp";
  // The attacker creates the agent's spool folder before the agent does, with a capture of its choosing
  // and a symlink where the agent writes next.
  ASSERT_TRUE(AsNobody([&] {
    if (mkdir(dir_.c_str(), 0755) != 0) return false;
    int fd = open(cap.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) return false;
    bool written = write(fd, planted.data(), planted.size()) == static_cast<ssize_t>(planted.size());
    close(fd);
    return written && symlink(victim.c_str(), tmp.c_str()) == 0;
  }));
  struct stat st {};
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  ASSERT_EQ(st.st_uid, kNobody);

  absl::StatusOr<std::unique_ptr<Spool>> spool = Spool::Open({dir_, 1 << 20});
  ASSERT_FALSE(spool.ok());
  EXPECT_EQ(spool.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(spool.status().message()), ::testing::HasSubstr("owned by uid 65534"));
  EXPECT_EQ(ReadAll(victim), "precious");
  EXPECT_EQ(ReadAll(cap), planted);  // left as it was: the agent neither read it to send nor deleted it
}

TEST_F(SpoolTest, AnotherUserCannotPlantInAWorldWritableSpool) {
  if (geteuid() != 0) GTEST_SKIP() << "running a second uid (setuid 65534) needs root";
  std::string parent = fs::path(dir_).parent_path().string();
  std::string planted = ValidSpoolFile(parent + "/other", "planted");
  ASSERT_EQ(chmod(parent.c_str(), 0755), 0);
  // A spool the agent once made, opened up by a careless chmod: the other user plants a capture in it.
  { ASSERT_NE(OpenSpool(), nullptr); }
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  std::string cap = dir_ + "/00000000000000000007.cap";
  ASSERT_TRUE(AsNobody([&] {
    int fd = open(cap.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) return false;
    bool written = write(fd, planted.data(), planted.size()) == static_cast<ssize_t>(planted.size());
    close(fd);
    return written;
  }));
  absl::StatusOr<std::unique_ptr<Spool>> spool = Spool::Open({dir_, 1 << 20});
  ASSERT_FALSE(spool.ok());
  EXPECT_THAT(std::string(spool.status().message()), ::testing::HasSubstr("mode 0777"));
  // Once the folder is private again, the planted file (not the agent's) is still not taken.
  ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
  std::unique_ptr<Spool> reopened = OpenSpool();
  ASSERT_NE(reopened, nullptr);
  EXPECT_TRUE(Ids(*reopened).empty());
  EXPECT_EQ(ReadAll(cap), planted);
}

}  // namespace
}  // namespace memfleet::agent
