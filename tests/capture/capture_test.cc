#include "capture/capture.h"

#include <gtest/gtest.h>

namespace memfleet::capture {
namespace {

TEST(CaptureTest, AddingAFileRecordsItsParents) {
  Capture c;
  c.AddFile("sys/class/kgsl/kgsl/proc/12/gpumem_mapped", "4096\n");
  EXPECT_TRUE(c.IsDirectory("sys/class/kgsl/kgsl"));
  EXPECT_TRUE(c.IsDirectory("sys/class/kgsl/kgsl/proc/12"));
  EXPECT_FALSE(c.IsDirectory("sys/class/kgsl/kgsl/proc/12/gpumem_mapped"));
  ASSERT_NE(c.FileContent("sys/class/kgsl/kgsl/proc/12/gpumem_mapped"), nullptr);
  EXPECT_EQ(*c.FileContent("sys/class/kgsl/kgsl/proc/12/gpumem_mapped"), "4096\n");
}

TEST(CaptureTest, ErrorNodesAreNeitherFilesNorDirectories) {
  Capture c;
  c.AddError("proc/7/oom_score_adj", "EACCES");
  const Node* n = c.Find("proc/7/oom_score_adj");
  ASSERT_NE(n, nullptr);
  EXPECT_TRUE(n->is_error());
  EXPECT_EQ(n->content, "EACCES");
  EXPECT_EQ(c.FileContent("proc/7/oom_score_adj"), nullptr);
}

TEST(CaptureTest, ChildrenListsImmediateNamesOnceAndSorted) {
  Capture c;
  c.AddFile("proc/10/smaps", "x");
  c.AddFile("proc/10/fdinfo/3", "x");
  c.AddFile("proc/1-x", "x");  // sorts between "proc/1" and "proc/1/..."
  c.AddFile("proc/1/smaps", "x");
  c.AddFile("proc/meminfo", "x");
  c.AddFile("procfoo/1", "x");  // a sibling whose name starts like the folder is not a child
  EXPECT_EQ(c.Children("proc"), (std::vector<std::string>{"1", "1-x", "10", "meminfo"}));
  EXPECT_EQ(c.Children("proc/10"), (std::vector<std::string>{"fdinfo", "smaps"}));
  EXPECT_EQ(c.Children(""), (std::vector<std::string>{"proc", "procfoo"}));
  EXPECT_TRUE(c.Children("nope").empty());
}

}  // namespace
}  // namespace memfleet::capture
