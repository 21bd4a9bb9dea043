// The /metrics HTTP port of a real LabServer on loopback: a tokens table that cannot be read refuses
// (503), never serves; the connection bound closes connections beyond it at once and serves again once
// they are gone; an idle connection is closed at the read timeout; out of file descriptors, the port
// waits instead of spinning and serves the queued connection once they are back; the ingest counters
// count a real agent's capture. Over HTTP and HTTPS: one address holding every connection it may leaves
// a scrape from another address answered; a refusal or a 400 closes its connection, an idle connection
// is closed soon after its answer. Device text with bidi controls is escaped in the label values.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>
#include <memory>
#include <string>

#include "server/security/token_admin.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/failing_store.h"
#include "tests/support/http_connection.h"
#include "tests/support/http_get.h"
#include "tests/support/load_tree.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/raw_agent.h"
#include "tests/support/sample_capture.h"
#include "tests/support/sanitizers.h"
#include "tests/support/test_data.h"
#include "tests/support/test_server.h"

namespace memfleet {
namespace {

using testing::FailingStore;
using testing::FindSample;
using testing::HttpConnection;
using testing::HttpConnectionOptions;
using testing::HttpGet;
using testing::HttpOptions;
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

// Connects the TCP socket `fd` to the port; its reads give up after 10 s. Closes it and gives -1 on
// failure, else gives `fd`.
int ConnectSocket(int fd, int port) {
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

// A connected TCP socket to the port (-1 on failure), whose reads give up after 10 s.
int Connect(int port) { return ConnectSocket(socket(AF_INET, SOCK_STREAM, 0), port); }

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

// CPU time the whole process has used, user and system.
std::chrono::milliseconds ProcessCpuTime() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto ms = [](const timeval& t) { return t.tv_sec * 1000 + t.tv_usec / 1000; };
  return std::chrono::milliseconds(ms(usage.ru_utime) + ms(usage.ru_stime));
}

// Takes every file descriptor the process may still open (the soft limit lowered to just above the
// highest one open), and gives them back, with the limit, when destroyed.
class FileDescriptorsExhausted {
 public:
  FileDescriptorsExhausted() {
    getrlimit(RLIMIT_NOFILE, &saved_);
    int highest = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
      highest = std::max(highest, std::atoi(entry.path().filename().c_str()));
    }
    rlimit low = saved_;
    low.rlim_cur = static_cast<rlim_t>(highest) + 1;
    setrlimit(RLIMIT_NOFILE, &low);
    for (int fd = dup(0); fd >= 0; fd = dup(0)) held_.push_back(fd);
  }
  ~FileDescriptorsExhausted() {
    for (int fd : held_) close(fd);
    setrlimit(RLIMIT_NOFILE, &saved_);
  }

 private:
  rlimit saved_{};
  std::vector<int> held_;
};

// The sanitizers' runtimes need file descriptors of their own (UBSan's check of a dynamic type probes
// memory through a pipe, and reads an object as invalid when it cannot make one), so with none left
// they report errors that are not the server's. The plain build runs this test; CI runs that build.
TEST(MetricsHttpServerTest, OutOfFileDescriptorsThePortWaitsAndServesOnceTheyAreBack) {
  if (testing::kSanitizerRuntime) GTEST_SKIP() << "a sanitizer runtime needs file descriptors this test takes away";
  server::LabServerOptions options = WithHttp();
  options.http.accept_retry_delay = std::chrono::milliseconds(200);
  absl::StatusOr<std::unique_ptr<TestServer>> server = TestServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = HttpPort(**server);
  int client = socket(AF_INET, SOCK_STREAM, 0);
  std::chrono::milliseconds cpu_while_failing{0};
  {
    FileDescriptorsExhausted exhausted;
    // The kernel completes the handshake into the listen queue; the server's accept() gets EMFILE.
    client = ConnectSocket(client, port);
    ASSERT_GE(client, 0);
    // Not synchronisation: the window over which the failing accepts' CPU is measured. Retried at once,
    // they would keep a core busy for all of it.
    const std::chrono::milliseconds before = ProcessCpuTime();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    cpu_while_failing = ProcessCpuTime() - before;
  }
  EXPECT_LT(cpu_while_failing.count(), 300) << "ms of CPU while every accept failed";
  // The descriptors are back: the queued connection is accepted and answered.
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(send(client, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  std::string reply;
  char buffer[4096];
  for (ssize_t n; (n = recv(client, buffer, sizeof(buffer), 0)) > 0;) reply.append(buffer, static_cast<size_t>(n));
  close(client);
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply.substr(0, 200);
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
  // The ingest's load: one capture, one transaction of the writer (counted before its ack went out), the
  // default in-flight budget of 64 MiB, and nobody waiting for it.
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_commits_total", {}), 1.0);
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_inflight_capacity_bytes", {}), 67108864.0);
  EXPECT_EQ(FindSample(samples, "memfleet_ingest_streams_waiting", {}), 0.0);
  EXPECT_EQ(FindSample(samples, "memfleet_device_up", {{"device_id", "sim-qcom-101"}}), 1.0);
  EXPECT_EQ(FindSample(samples, "memfleet_device_last_capture_timestamp_seconds", {{"device_id", "sim-qcom-101"}}),
            1796025600.0);  // 2026-11-30T08:00:00Z
  EXPECT_TRUE(FindSample(samples, "memfleet_device_total_bytes", {{"device_id", "sim-qcom-101"}}).has_value());
}

// The port over plain HTTP and (GetParam()) over HTTPS with the test certificates.
class HttpPortConnectionsTest : public ::testing::TestWithParam<bool> {
 protected:
  void Start(server::LabServerOptions options = WithHttp()) {
    if (GetParam()) {
      options.tls_cert_file = testing::TestData("tls/server.pem");
      options.tls_key_file = testing::TestData("tls/server.key");
      ca_file_ = testing::TestData("tls/ca.pem");
    }
    absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start(options);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    port_ = HttpPort(*server_);
  }
  std::unique_ptr<HttpConnection> Open(const std::string& from = "") {
    return std::make_unique<HttpConnection>("127.0.0.1", port_, HttpConnectionOptions{from, ca_file_});
  }
  testing::HttpReply Get(const std::string& target, HttpOptions o = {}) {
    o.ca_file = ca_file_;
    return HttpGet("127.0.0.1", port_, target, o);
  }

  std::unique_ptr<TestServer> server_;
  std::string ca_file_;
  int port_ = 0;
};

TEST_P(HttpPortConnectionsTest, OneAddressHoldingItsMaximumLeavesAScrapeFromAnotherAnswered) {
  Start();
  const size_t all = server::MetricsHttpOptions().max_connections;
  std::vector<std::unique_ptr<HttpConnection>> idle;
  size_t held = 0;
  for (size_t i = 0; i < all; ++i) {
    idle.push_back(Open("127.0.0.1"));
    if (idle.back()->ok() && !idle.back()->ClosedByServerWithin(std::chrono::milliseconds(50))) ++held;
  }
  EXPECT_LT(held, all) << "one address holds every connection of the port";
  HttpOptions from_elsewhere;
  from_elsewhere.source_address = "127.0.0.2";
  testing::HttpReply scrape = Get("/metrics", from_elsewhere);
  EXPECT_EQ(scrape.status, 200) << scrape.error;
  // The address at its maximum is refused a new connection at once.
  std::unique_ptr<HttpConnection> more = Open("127.0.0.1");
  EXPECT_TRUE(!more->ok() || more->ClosedByServerWithin(std::chrono::seconds(5)));
  idle.clear();
}

TEST_P(HttpPortConnectionsTest, ARefusalOrA400ClosesItsConnectionAnAnswerKeepsIt) {
  Start();
  absl::StatusOr<std::string> token =
      security::AddToken(server_->store(), {"prometheus", security::TokenKind::kRead, ""}, "2026-11-30T08:00:00Z");
  ASSERT_TRUE(token.ok()) << token.status();
  const std::vector<std::pair<std::string, int>> refused = {
      {"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 401},
      {"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer mft_nonsense\r\n\r\n", 401},
      {"GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404},
      {"DELETE /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405},
      {"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc", 400},
  };
  for (const auto& [request, status] : refused) {
    std::unique_ptr<HttpConnection> c = Open();
    ASSERT_TRUE(c->ok()) << c->error();
    ASSERT_TRUE(c->Send(request));
    const testing::HttpAnswer answer = c->ReadAnswer();
    EXPECT_EQ(answer.status, status) << request << answer.error;
    EXPECT_FALSE(answer.keep_alive) << request;
    EXPECT_TRUE(c->ClosedByServerWithin(std::chrono::seconds(5))) << request;
  }
  // A scrape that is answered keeps its connection for the next one.
  std::unique_ptr<HttpConnection> c = Open();
  ASSERT_TRUE(c->ok()) << c->error();
  const std::string scrape = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + *token + "\r\n\r\n";
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(c->Send(scrape));
    const testing::HttpAnswer answer = c->ReadAnswer();
    EXPECT_EQ(answer.status, 200) << answer.error;
    EXPECT_TRUE(answer.keep_alive);
  }
}

TEST_P(HttpPortConnectionsTest, AnIdleConnectionIsClosedSoonAfterItsAnswer) {
  server::LabServerOptions options = WithHttp();
  options.http.read_timeout = std::chrono::seconds(30);
  Start(options);
  std::unique_ptr<HttpConnection> c = Open();
  ASSERT_TRUE(c->ok()) << c->error();
  ASSERT_TRUE(c->Send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  const testing::HttpAnswer answer = c->ReadAnswer();
  ASSERT_EQ(answer.status, 200) << answer.error;
  EXPECT_TRUE(answer.keep_alive);
  // Well before the 30 s a request may take to arrive once it has begun.
  EXPECT_TRUE(c->ClosedByServerWithin(std::chrono::seconds(10)));
}

INSTANTIATE_TEST_SUITE_P(Transports, HttpPortConnectionsTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Https" : "Http"; });

// A bidi override in device text is shown as an escape in the label, as the CLI's tables show it: the
// raw bytes would make a dashboard draw the rest of the label reversed.
TEST(MetricsHttpServerTest, BidiControlsInDeviceTextAreEscapedInLabels) {
  absl::StatusOr<std::unique_ptr<TestServer>> server = TestServer::Start(WithHttp());
  ASSERT_TRUE(server.ok()) << server.status();
  testing::RawAgent agent((*server)->target());
  ASSERT_TRUE(agent.Hello("sim-qcom-101",
                          "Pixel \xe2\x80\xae"
                          "7gnp.exe"));
  testing::HttpReply reply = HttpGet("127.0.0.1", HttpPort(**server), "/metrics");
  ASSERT_EQ(reply.status, 200) << reply.error;
  EXPECT_EQ(reply.body.find("\xe2\x80\xae"), std::string::npos) << "the raw U+202E is not sent";
  const std::vector<testing::PromSample> samples = testing::ParsePrometheusText(reply.body);
  EXPECT_EQ(
      FindSample(samples, "memfleet_device_up", {{"device_id", "sim-qcom-101"}, {"model", "Pixel \\u202e7gnp.exe"}}),
      1.0)
      << reply.body;
}

}  // namespace
}  // namespace memfleet
