// The /metrics HTTP port of a real LabServer on loopback: a tokens table that cannot be read refuses
// (503), never serves; the connection bound closes connections beyond it at once and serves again once
// they are gone; an idle connection is closed at the read timeout; the ingest counters count a real
// agent's capture.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

#include "storage/sqlite_store.h"
#include "tests/support/failing_store.h"
#include "tests/support/http_get.h"
#include "tests/support/load_tree.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/raw_agent.h"
#include "tests/support/sample_capture.h"
#include "tests/support/test_server.h"

namespace memfleet {
namespace {

using testing::FailingStore;
using testing::FindSample;
using testing::HttpGet;
using testing::TestServer;

int HttpPort(TestServer& server) {
  const std::string address = server.server().http_address();
  return std::atoi(address.substr(address.rfind(':') + 1).c_str());
}

server::LabServerOptions WithHttp() {
  server::LabServerOptions options;
  options.http.listen = "127.0.0.1:0";
  return options;
}

// A connected TCP socket to the port (-1 on failure), whose reads give up after 10 s.
int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// True when the server closed the connection (a read returns end of file) within the socket's timeout.
bool ClosedByServer(int fd) {
  char c;
  return recv(fd, &c, 1, 0) == 0;
}

TEST(MetricsHttpServerTest, AnUnreadableTokenTableRefusesTheScrape) {
  absl::StatusOr<std::unique_ptr<storage::Store>> sqlite = storage::OpenSqliteStore(":memory:");
  ASSERT_TRUE(sqlite.ok());
  auto failing = std::make_unique<FailingStore>(std::move(*sqlite));
  failing->fail_token_reads = true;
  absl::StatusOr<std::unique_ptr<TestServer>> server = TestServer::StartWithStore(std::move(failing), WithHttp());
  ASSERT_TRUE(server.ok()) << server.status();
  testing::HttpReply reply = HttpGet("127.0.0.1", HttpPort(**server), "/metrics");
  EXPECT_EQ(reply.status, 503) << reply.error;
  EXPECT_NE(reply.body.find("cannot read its tokens"), std::string::npos) << reply.body;
  EXPECT_EQ(reply.body.find("memfleet_"), std::string::npos);
}

TEST(MetricsHttpServerTest, ConnectionsBeyondTheBoundAreClosedAndIdleOnesTimeOut) {
  server::LabServerOptions options = WithHttp();
  options.http.max_connections = 2;
  options.http.read_timeout = std::chrono::milliseconds(1500);
  absl::StatusOr<std::unique_ptr<TestServer>> server = TestServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = HttpPort(**server);
  const int idle1 = Connect(port);
  const int idle2 = Connect(port);
  ASSERT_GE(idle1, 0);
  ASSERT_GE(idle2, 0);
  // Both held: a request now gets no answer, its connection is closed at once.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(HttpGet("127.0.0.1", port, "/metrics").status, 0);
  // The idle ones are closed at the read timeout, not kept forever.
  EXPECT_TRUE(ClosedByServer(idle1));
  EXPECT_TRUE(ClosedByServer(idle2));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8));
  close(idle1);
  close(idle2);
  EXPECT_EQ(HttpGet("127.0.0.1", port, "/metrics").status, 200) << "served again";
}

TEST(MetricsHttpServerTest, AStoredCaptureIsCountedAndItsDeviceShown) {
  absl::StatusOr<std::unique_ptr<TestServer>> server = TestServer::Start(WithHttp());
  ASSERT_TRUE(server.ok()) << server.status();
  testing::RawAgent agent((*server)->target());
  ASSERT_TRUE(agent.Hello("sim-qcom-101"));
  std::optional<v1::ServerMessage> answer =
      agent.SendCapture(testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree").c_str()),
                        testing::CaptureId("sim-qcom-101", 1), "2026-11-30T08:00:00Z");
  ASSERT_TRUE(answer.has_value() && answer->has_ack());
  testing::HttpReply reply = HttpGet("127.0.0.1", HttpPort(**server), "/metrics");
  ASSERT_EQ(reply.status, 200) << reply.error;
  const std::vector<testing::PromSample> samples = testing::ParsePrometheusText(reply.body);
  EXPECT_EQ(FindSample(samples, "memfleet_captures_stored_total", {}), 1.0);
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_latency_seconds_count", {}), 1.0);
  EXPECT_EQ(FindSample(samples, "memfleet_agents_connected", {}), 1.0);
  EXPECT_EQ(FindSample(samples, "memfleet_device_up", {{"device_id", "sim-qcom-101"}}), 1.0);
  EXPECT_EQ(FindSample(samples, "memfleet_device_last_capture_timestamp_seconds", {{"device_id", "sim-qcom-101"}}),
            1796025600.0);  // 2026-11-30T08:00:00Z
  EXPECT_TRUE(FindSample(samples, "memfleet_device_memory_bytes", {{"device_id", "sim-qcom-101"}, {"part", "total"}})
                  .has_value());
}

}  // namespace
}  // namespace memfleet
