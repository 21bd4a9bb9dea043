// Spool: captures survive a restart in order, a full spool drops (and counts) the oldest first, and a
// damaged spool file is skipped and counted — never a crash, never a wrong capture.
#include "agent/spool.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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
    ASSERT_TRUE(spool->Put("d-20261202T162000Z-000002", "2026-12-02T16:20:00Z", "sweep-7", std::string("b\0two", 5)).ok());
    ASSERT_TRUE(spool->Put("d-20261202T162500Z-000003", "2026-12-02T16:25:00Z", "", "").ok());
  }
  std::unique_ptr<Spool> spool = OpenSpool();
  ASSERT_NE(spool, nullptr);
  EXPECT_THAT(Ids(*spool), ElementsAre("d-20261202T161500Z-000001", "d-20261202T162000Z-000002",
                                       "d-20261202T162500Z-000003"));
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

}  // namespace
}  // namespace memfleet::agent
