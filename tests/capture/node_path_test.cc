// The one node-path rule that the agent's file systems, the wire's decoder and the engine share.
#include "capture/node_path.h"

#include <string>

#include "gtest/gtest.h"

namespace memfleet::capture {
namespace {

TEST(NodePathTest, RealNodePathsAreSafe) {
  EXPECT_TRUE(IsSafeNodePath("proc/meminfo"));
  EXPECT_TRUE(IsSafeNodePath("proc/dma_heap/rss_pid@123"));
  EXPECT_TRUE(IsSafeNodePath("sys/kernel/mm/cma/linux,cma/used"));
  EXPECT_TRUE(IsSafeNodePath("proc/1234/fdinfo/17"));
  EXPECT_TRUE(IsSafeNodePath(".hidden/x"));  // a dot file is a name, not a parent
}

TEST(NodePathTest, PathsThatLeaveTheCaptureOrAreAmbiguousAreNot) {
  for (const std::string& path :
       {std::string(""), std::string("/proc/meminfo"), std::string("proc/"), std::string("proc//meminfo"),
        std::string("../etc/passwd"), std::string("proc/../../etc"), std::string("proc/./meminfo"), std::string("."),
        std::string(".."), std::string("proc/mem\0info", 13)}) {
    EXPECT_FALSE(IsSafeNodePath(path)) << "\"" << path << "\"";
  }
}

TEST(NodePathTest, TheLengthLimitIsPathMax) {
  EXPECT_TRUE(IsSafeNodePath(std::string(kMaxNodePathBytes, 'a')));
  EXPECT_FALSE(IsSafeNodePath(std::string(kMaxNodePathBytes + 1, 'a')));
}

TEST(NodePathTest, ANativeHeapNodeIsNamedAfterItsPid) { EXPECT_EQ(NativeHeapNode(4242), "cmd/native_heap@4242"); }

}  // namespace
}  // namespace memfleet::capture
