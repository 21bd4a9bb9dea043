// ChooseRootKind: only "/" (or a folder the user names a live system with --live-root) is a live root
// whose programs run; a folder with a capture.json that is no readable file inside it is an error that
// says what is wrong with it, never a fallback to a live root.
#include "agent/reader/root_kind.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/status/statusor.h"
#include "agent/reader/capture_tree_fs.h"
#include "agent/reader/collector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace memfleet::agent {
namespace {

namespace fs = std::filesystem;
using memfleet::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Message(const absl::StatusOr<RootKind>& kind) { return std::string(kind.status().message()); }

TEST(RootKindTest, SampleTreeIsACaptureTreeAndSlashIsLive) {
  EXPECT_EQ(*ChooseRootKind(testing::TestData("captures/qcom-sm8450/tree"), false), RootKind::kCaptureTree);
  ASSERT_FALSE(fs::exists("/capture.json"));
  EXPECT_EQ(*ChooseRootKind("/", false), RootKind::kLiveRoot);
  EXPECT_EQ(*ChooseRootKind("/", true), RootKind::kLiveRoot);
}

TEST(RootKindTest, SymlinkToSlashIsLive) {
  TempDir dir;
  fs::create_symlink("/", dir.path() + "/slash");
  EXPECT_EQ(*ChooseRootKind(dir.path() + "/slash", false), RootKind::kLiveRoot);
}

TEST(RootKindTest, DanglingCaptureJsonIsAnErrorNotALiveRoot) {
  TempDir dir;
  dir.Write("proc/meminfo", "MemTotal: 1000 kB\n");
  fs::create_symlink("nowhere.json", dir.path() + "/capture.json");
  absl::StatusOr<RootKind> kind = ChooseRootKind(dir.path(), false);
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(kind), HasSubstr(dir.path() + "/capture.json is a symlink to nothing (a dangling link)"));
  // Saying it is a live root does not make its capture.json go away.
  kind = ChooseRootKind(dir.path(), true);
  ASSERT_FALSE(kind.ok());
  EXPECT_THAT(Message(kind), HasSubstr("leave out --live-root"));
  // Dangling whether it points inside or (absolute) outside the folder.
  fs::remove(dir.path() + "/capture.json");
  fs::create_symlink("/nonexistent/memfleet/capture.json", dir.path() + "/capture.json");
  EXPECT_THAT(Message(ChooseRootKind(dir.path(), false)), HasSubstr("is a symlink to nothing (a dangling link)"));
}

TEST(RootKindTest, FolderLaidOutLikeARootIsLiveOnlyWithTheFlag) {
  TempDir dir;
  dir.Write("proc/meminfo", "MemTotal: 1000 kB\n");
  dir.Write("system/bin/dumpsys", "#!/bin/sh\n", true);
  absl::StatusOr<RootKind> kind = ChooseRootKind(dir.path(), false);
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(kind), HasSubstr("is not a capture tree (no capture.json) and not the live root /"));
  EXPECT_THAT(Message(kind), HasSubstr("pass --live-root"));
  EXPECT_EQ(*ChooseRootKind(dir.path(), true), RootKind::kLiveRoot);
}

TEST(RootKindTest, EscapingCaptureJsonSaysItIsNotFollowed) {
  TempDir dir;
  std::string outside = dir.Write("outside.json", "{\"format\": 1}");
  dir.Write("tree/proc/meminfo", "MemTotal: 1000 kB\n");
  fs::create_symlink(outside, dir.path() + "/tree/capture.json");
  absl::StatusOr<RootKind> kind = ChooseRootKind(dir.path() + "/tree", false);
  ASSERT_FALSE(kind.ok());
  EXPECT_THAT(Message(kind), HasSubstr("is a symlink that leads out of the folder; memfleet does not follow links"));
  EXPECT_THAT(Message(kind), Not(HasSubstr("permissions")));

  // The collector, given such a tree anyway, says the same rather than "fix its permissions".
  CaptureTreeFs tree(dir.path() + "/tree");
  absl::StatusOr<capture::Capture> c = CollectCapture(tree, CollectOptions{});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("a symlink that leads out of the tree is not followed"));
  EXPECT_THAT(std::string(c.status().message()), Not(HasSubstr("permissions")));
}

TEST(RootKindTest, CaptureJsonMustBeARegularFile) {
  TempDir dir;
  ASSERT_TRUE(fs::create_directories(dir.path() + "/dir/capture.json"));
  EXPECT_THAT(Message(ChooseRootKind(dir.path() + "/dir", false)), HasSubstr("capture.json is not a regular file"));
  ASSERT_TRUE(fs::create_directories(dir.path() + "/fifo"));
  ASSERT_EQ(mkfifo((dir.path() + "/fifo/capture.json").c_str(), 0600), 0);
  EXPECT_THAT(Message(ChooseRootKind(dir.path() + "/fifo", false)), HasSubstr("capture.json is not a regular file"));
  // A relative link to a file inside the tree is fine; an absolute one is refused, and said so.
  dir.Write("linked/real.json", "{}");
  fs::create_symlink("real.json", dir.path() + "/linked/capture.json");
  EXPECT_EQ(*ChooseRootKind(dir.path() + "/linked", false), RootKind::kCaptureTree);
  dir.Write("absolute/real.json", "{}");
  fs::create_symlink(dir.path() + "/absolute/real.json", dir.path() + "/absolute/capture.json");
  absl::StatusOr<RootKind> absolute = ChooseRootKind(dir.path() + "/absolute", false);
  if (!absolute.ok()) {
    EXPECT_THAT(Message(absolute), HasSubstr("is an absolute symlink"));
  }
}

TEST(RootKindTest, MissingOrFileRootIsNotFound) {
  TempDir dir;
  std::string file = dir.Write("file", "x");
  EXPECT_EQ(ChooseRootKind(file, false).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ChooseRootKind(dir.path() + "/none", true).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ChooseRootKind("", false).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace memfleet::agent
