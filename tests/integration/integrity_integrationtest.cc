// End to end with the real binaries: memfleet-agent --once against memfleet-server on 127.0.0.1. The
// agent's capture_sha256 is verified by the server (stored as verified, no warning), and a tree of sparse
// nodes bigger than the capture cap is still delivered, capped, with the nodes it left out named.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "memfleet/v1/query_service.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/support/load_tree.h"
#include "tests/support/server_process.h"
#include "tests/support/sparse_tree.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace memfleet {
namespace integrity_scenario {
namespace {

using nlohmann::json;
using testing::Subprocess;

using testing::Bin;

class IntegrityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-integrity-");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    server_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  std::string StartServer(std::vector<std::string> extra = {}) {
    server_ = std::make_unique<testing::ServerProcess>(dir_, extra);
    return server_->address();
  }

  // memfleet-agent --once; its exit code (0: the server acked the capture).
  int RunAgentOnce(const std::string& address, const std::string& root, const std::string& device_id,
                   std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {
        Bin("memfleet-agent"), "--server", address,  "--root",  root,
        "--device-id",         device_id,  "--once", "--spool", dir_ + "/spool-" + device_id};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Subprocess agent(argv, dir_ + "/agent-" + device_id + ".log");
    int code = agent.WaitExit(std::chrono::seconds(120));
    EXPECT_EQ(code, 0) << agent.Log() << "\n--- server ---\n" << server_->Log();
    return code;
  }

  json Report(const std::string& device_id) { return server_->Report(device_id); }

  std::string dir_;
  std::unique_ptr<testing::ServerProcess> server_;
};

TEST_F(IntegrityTest, TheAgentsDigestIsVerifiedByTheServer) {
  std::string address = StartServer();
  ASSERT_EQ(RunAgentOnce(address, testing::TestData("captures/qcom-sm8450/tree"), "sim-qcom-101"), 0);
  json report = Report("sim-qcom-101");
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["warnings"].dump().find("capture_sha256"), std::string::npos) << report["warnings"].dump();
  const std::string log = server_->Log();
  EXPECT_NE(log.find("stored capture sim-qcom-101-"), std::string::npos) << log;
  EXPECT_EQ(log.find("stored unverified"), std::string::npos) << log;
}

// Before: the agent took all six nodes (180 MB), over the server's 100 MiB limit, and the capture was
// refused for good. Now the agent stops at its own cap and the server stores what it sent.
TEST_F(IntegrityTest, ATreeOverTheCaptureCapIsDeliveredCappedWithTheLeftOutNodesNamed) {
  testing::TempDir tree("integrity_sparse");
  ASSERT_FALSE(tree.path().empty());
  ASSERT_TRUE(testing::WriteSparseSmapsTree(tree, {101, 102, 103, 104, 105, 106}, 30'000'000));
  std::string address = StartServer({"--max-capture-mb", "100"});
  ASSERT_EQ(RunAgentOnce(address, tree.path(), "sparse-1", {"--max-capture-mb", "100"}), 0);
  json report = Report("sparse-1");
  ASSERT_TRUE(report.is_object());
  const std::string warnings = report["warnings"].dump();
  EXPECT_NE(warnings.find("proc/104/smaps: unreadable (ECAPTURE_FULL)"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("proc/106/smaps: unreadable (ECAPTURE_FULL)"), std::string::npos) << warnings;
  EXPECT_EQ(warnings.find("proc/103/smaps: unreadable"), std::string::npos) << warnings;
}

}  // namespace
}  // namespace integrity_scenario
}  // namespace memfleet
