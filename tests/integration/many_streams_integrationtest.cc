// Many agent streams against the real memfleet-server on loopback, and the server process's threads
// while they are all open (docs/performance.md, "Many agents on one server"). The agent service runs on
// gRPC's callback API: its streams share a few gRPC threads and the worker pool, so the server's thread
// count does not grow with its streams. (When each stream held a gRPC sync thread, 300 streams meant
// 300 threads more than an idle server: 314 in all, where this design measured 16.)
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "memfleet/v1/query_service.grpc.pb.h"
#include "tests/support/raw_agent.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"

namespace memfleet {
namespace many_streams_scenario {
namespace {

using testing::RawAgent;
using testing::ServerProcess;

constexpr int kStreams = 300;
// Idle, the server runs ~15 threads (gRPC's pollers and executor, the worker pool, the sweep and Hello
// watchdogs, the metrics server). The bound leaves room for gRPC growing its executor under load, and is
// far below one thread per stream.
constexpr int kMaxServerThreads = 64;

// The `Threads:` line of /proc/<pid>/status; -1 when it cannot be read.
int ThreadsOf(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  }
  return -1;
}

std::string DeviceId(int i) {
  char name[32];
  std::snprintf(name, sizeof name, "many-%04d", i);
  return name;
}

TEST(ManyStreamsTest, ThreeHundredStreamsAreServedByABoundedNumberOfServerThreads) {
  const std::string dir = testing::MakeTempDir("memfleet-many-streams-");
  ServerProcess server(dir);
  ASSERT_FALSE(server.address().empty());
  const pid_t pid = server.process().pid();

  // Each with its own channel (its own connection), as real agents connect.
  std::vector<std::unique_ptr<RawAgent>> agents;
  for (int i = 0; i < kStreams; ++i) {
    agents.push_back(std::make_unique<RawAgent>(server.address()));
    ASSERT_TRUE(agents.back()->Hello(DeviceId(i))) << "stream " << i << ": no Welcome\n" << server.Log();
  }
  const int threads_connected = ThreadsOf(pid);
  RecordProperty("server_threads_with_streams_open", threads_connected);
  EXPECT_GT(threads_connected, 0);
  EXPECT_LT(threads_connected, kMaxServerThreads) << kStreams << " streams open";

  // A sweep reaches every open stream, and every stream's answer reaches the sweep.
  grpc::ClientContext sweep_context;
  sweep_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  v1::SweepRequest request;
  request.set_deadline_s(90);
  auto progress = server.query().StartSweep(&sweep_context, request);
  for (int i = 0; i < kStreams; ++i) {
    std::optional<v1::ServerMessage> command = agents[static_cast<size_t>(i)]->Read();
    ASSERT_TRUE(command.has_value() && command->has_capture_now()) << "stream " << i << ": no capture command";
    v1::AgentMessage failed;
    failed.mutable_command_failed()->set_sweep_id(command->capture_now().sweep_id());
    failed.mutable_command_failed()->set_message("this test agent does not capture");
    ASSERT_TRUE(agents[static_cast<size_t>(i)]->Write(failed));
  }
  std::map<std::string, v1::SweepProgress::State> states;
  v1::SweepProgress p;
  bool finished = false;
  while (progress->Read(&p)) {
    if (!p.device_id().empty()) states[p.device_id()] = p.state();
    finished = finished || p.finished();
  }
  ASSERT_TRUE(progress->Finish().ok());
  EXPECT_TRUE(finished);
  ASSERT_EQ(states.size(), static_cast<size_t>(kStreams));
  for (const auto& [device, state] : states) EXPECT_EQ(state, v1::SweepProgress::FAILED) << device;
  const int threads_after_sweep = ThreadsOf(pid);
  RecordProperty("server_threads_after_sweep", threads_after_sweep);
  EXPECT_GT(threads_after_sweep, 0);
  EXPECT_LT(threads_after_sweep, kMaxServerThreads) << kStreams << " streams open, after a sweep over them";

  for (auto& agent : agents) EXPECT_TRUE(agent->Close().ok());
  server.process().Kill();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace many_streams_scenario
}  // namespace memfleet
