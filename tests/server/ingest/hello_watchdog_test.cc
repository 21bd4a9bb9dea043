// HelloWatchdog against the real LabServer on loopback (docs/security.md, "Streams before their Hello"):
// a stream that never says Hello is cancelled at its deadline, silent streams beyond the limits are
// refused at once, and a well-behaved agent is served again as soon as they are gone.
#include "server/ingest/hello_watchdog.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tests/support/manual_clock.h"
#include "tests/support/raw_agent.h"
#include "tests/support/test_server.h"
#include "tests/support/wait_for.h"

namespace memfleet::server {
namespace {

using testing::RawAgent;
using testing::TestServer;

TEST(HelloWatchdogTest, PeerHostDropsThePortOnly) {
  EXPECT_EQ(HelloWatchdog::PeerHost("ipv4:10.0.0.7:51234"), "ipv4:10.0.0.7");
  EXPECT_EQ(HelloWatchdog::PeerHost("ipv6:[::1]:5000"), "ipv6:[::1]");
  EXPECT_EQ(HelloWatchdog::PeerHost("ipv6:%5B::1%5D:5000"), "ipv6:%5B::1%5D");
  EXPECT_EQ(HelloWatchdog::PeerHost("unix:/run/memfleet.sock"), "unix:/run/memfleet.sock");
  EXPECT_EQ(HelloWatchdog::PeerHost(""), "");
}

std::unique_ptr<TestServer> StartServer(HelloWatchdogOptions hello) {
  LabServerOptions options;
  options.hello = hello;
  absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start(options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

// Whether the server counts `n` streams as waiting for their Hello within 30 s. A client cannot see
// when the server starts a stream's handler, and a stream started after a probe would be the one
// refused: each test waits for its silent streams to be counted before it probes.
bool WaitingForHello(TestServer& server, size_t n) {
  return testing::WaitFor([&] { return server.server().agent_streams_waiting_for_hello() == n; },
                          std::chrono::seconds(30));
}

// A silent stream that the server refuses answers RESOURCE_EXHAUSTED at once; one it accepts would
// wait (here until the probe's own 2 s deadline).
bool RefusedWhileTheOthersWait(const std::string& target) {
  RawAgent probe(target, grpc::InsecureChannelCredentials(), "", std::chrono::seconds(2));
  grpc::Status s = probe.Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  return s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
         s.error_message().find("waiting for their Hello") != std::string::npos;
}

// An agent that says Hello and is welcomed, once the server has noticed that room was made (the
// silent streams' handlers end a moment after their peers hang up); nullptr if it never is.
std::unique_ptr<RawAgent> WelcomedAgent(const std::string& target) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    auto agent = std::make_unique<RawAgent>(target);
    if (agent->Hello("sim-qcom-101")) return agent;
  }
  return nullptr;
}

TEST(HelloWatchdogTest, AStreamThatNeverSaysHelloIsCancelledAtItsDeadline) {
  testing::ManualSteadyClock clock;
  HelloWatchdogOptions hello;
  hello.hello_timeout = std::chrono::seconds(10);
  hello.clock = &clock;
  std::unique_ptr<TestServer> server = StartServer(hello);
  ASSERT_NE(server, nullptr);
  RawAgent silent(server->target());  // its own deadline is 60 s
  absl::Notification ended;
  std::thread reader([&] {
    EXPECT_FALSE(silent.Read().has_value());  // blocks until the server ends the call
    ended.Notify();
  });
  // The deadline runs from when the server starts watching the stream, which the client cannot see.
  EXPECT_TRUE(WaitingForHello(*server, 1));  // not ASSERT: the reader must be joined
  clock.Advance(hello.hello_timeout - std::chrono::milliseconds(1));
  EXPECT_FALSE(ended.HasBeenNotified());
  EXPECT_EQ(server->server().agent_streams_waiting_for_hello(), 1u);
  // The deadline: Advance returns once the watchdog has cancelled the call, which ends the blocked Read
  // (had it not, the stream would end at its own 60 s deadline with DEADLINE_EXCEEDED).
  clock.Advance(std::chrono::milliseconds(1));
  reader.join();
  grpc::Status s = silent.Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::CANCELLED) << s.error_code() << ": " << s.error_message();
  RawAgent good(server->target());
  EXPECT_TRUE(good.Hello("sim-qcom-101"));
  EXPECT_TRUE(good.Close().ok());
}

TEST(HelloWatchdogTest, SilentStreamsBeyondTheLimitOfOneHostAreRefusedUntilTheyAreGone) {
  testing::ManualSteadyClock clock;
  HelloWatchdogOptions hello;
  hello.hello_timeout = std::chrono::seconds(60);
  hello.clock = &clock;  // never moved: no silent stream times out during the test
  hello.max_waiting_per_host = 3;
  std::unique_ptr<TestServer> server = StartServer(hello);
  ASSERT_NE(server, nullptr);
  std::vector<std::unique_ptr<RawAgent>> silent;
  for (int i = 0; i < 3; ++i) silent.push_back(std::make_unique<RawAgent>(server->target()));
  ASSERT_TRUE(WaitingForHello(*server, 3));
  EXPECT_TRUE(RefusedWhileTheOthersWait(server->target()));
  // The flood gone (its peers hung up), the host's agents get in again.
  silent.clear();
  ASSERT_TRUE(WaitingForHello(*server, 0));
  std::unique_ptr<RawAgent> good = WelcomedAgent(server->target());
  ASSERT_NE(good, nullptr);
  EXPECT_TRUE(good->Close().ok());
}

TEST(HelloWatchdogTest, SilentStreamsBeyondTheLimitOfAllHostsAreRefused) {
  testing::ManualSteadyClock clock;
  HelloWatchdogOptions hello;
  hello.hello_timeout = std::chrono::seconds(60);
  hello.clock = &clock;  // never moved: no silent stream times out during the test
  hello.max_waiting = 2;
  std::unique_ptr<TestServer> server = StartServer(hello);
  ASSERT_NE(server, nullptr);
  std::vector<std::unique_ptr<RawAgent>> silent;
  for (int i = 0; i < 2; ++i) silent.push_back(std::make_unique<RawAgent>(server->target()));
  ASSERT_TRUE(WaitingForHello(*server, 2));
  EXPECT_TRUE(RefusedWhileTheOthersWait(server->target()));
  // A stream that has said Hello no longer counts: one silent stream goes, an agent gets in and stays,
  // and the limit still has room for one silent stream beside it.
  silent.pop_back();
  ASSERT_TRUE(WaitingForHello(*server, 1));
  std::unique_ptr<RawAgent> good = WelcomedAgent(server->target());
  ASSERT_NE(good, nullptr);
  silent.push_back(std::make_unique<RawAgent>(server->target()));
  ASSERT_TRUE(WaitingForHello(*server, 2));
  EXPECT_TRUE(RefusedWhileTheOthersWait(server->target()));
  EXPECT_TRUE(good->Close().ok());
}

}  // namespace
}  // namespace memfleet::server
