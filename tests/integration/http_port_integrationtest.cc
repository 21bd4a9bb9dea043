// The HTTP port of a real memfleet-server (--http-listen 127.0.0.1:0), over HTTP and HTTPS, against what
// anyone who reaches it can send before any token is checked: a chunked body whose first chunk line never
// ends (`1;x=eeee...`, 200 MiB, no CRLF) on four connections at once. The server's peak RSS (VmHWM of
// its process) stays where it was, the senders are cut off long before their 200 MiB, and the port still
// answers a scrape afterwards.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/http_connection.h"
#include "tests/support/http_get.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_data.h"

namespace memfleet {
namespace http_port_scenario {
namespace {

using testing::HttpConnection;
using testing::HttpConnectionOptions;
using testing::HttpGet;
using testing::HttpOptions;
using testing::HttpReply;

const std::string kTls = testing::TestData("tls");
constexpr int64_t kMiB = 1 << 20;

// The peak resident set of process `pid` so far (VmHWM of /proc/PID/status), in kB; -1 when unreadable.
int64_t PeakRssKb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

// Sends the head of a chunked POST and then its first chunk line, never ended, up to `line_bytes`, in
// 1 MiB writes; returns the bytes the server took before it closed the connection (or all of them).
int64_t SendEndlessChunkLine(int port, const std::string& ca_file, int64_t line_bytes) {
  HttpConnection c("127.0.0.1", port, HttpConnectionOptions{"", ca_file});
  if (!c.ok()) return 0;
  int64_t sent = 0;
  if (!c.Send("POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n1;x=")) return sent;
  const std::string piece(kMiB, 'e');
  while (sent < line_bytes && c.Send(piece)) sent += kMiB;
  return sent;
}

class HttpPortTest : public ::testing::TestWithParam<bool> {  // GetParam(): HTTPS
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("memfleet-http-port-");
    ASSERT_FALSE(dir_.empty());
    read_token_ = testing::AddServerToken(dir_, "read", "prometheus");
    std::vector<std::string> extra = {"--http-listen", "127.0.0.1:0"};
    if (GetParam()) {
      extra.insert(extra.end(), {"--tls-cert", kTls + "/server.pem", "--tls-key", kTls + "/server.key"});
      ca_file_ = kTls + "/ca.pem";
    }
    server_ = std::make_unique<testing::ServerProcess>(dir_, extra);
    const std::string line =
        server_->process().WaitForLine("memfleet-server metrics on http", std::chrono::seconds(30));
    port_ = std::atoi(line.substr(line.rfind(':') + 1).c_str());
    ASSERT_GT(port_, 0) << server_->Log();
  }
  void TearDown() override {
    server_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  HttpReply Scrape() {
    HttpOptions o;
    o.bearer = read_token_;
    o.ca_file = ca_file_;
    return HttpGet("127.0.0.1", port_, "/metrics", o);
  }

  std::string dir_;
  std::string read_token_;
  std::string ca_file_;
  std::unique_ptr<testing::ServerProcess> server_;
  int port_ = 0;
};

TEST_P(HttpPortTest, AnEndlessChunkLineOnFourConnectionsLeavesThePeakRssWhereItWas) {
  ASSERT_EQ(Scrape().status, 200);
  const pid_t pid = server_->process().pid();
  const int64_t before_kb = PeakRssKb(pid);
  ASSERT_GT(before_kb, 0);

  constexpr int kConnections = 4;
  constexpr int64_t kLineBytes = 200 * kMiB;
  std::vector<int64_t> sent(kConnections, 0);
  std::vector<std::thread> senders;
  for (int i = 0; i < kConnections; ++i) {
    senders.emplace_back([&, i] { sent[i] = SendEndlessChunkLine(port_, ca_file_, kLineBytes); });
  }
  for (std::thread& t : senders) t.join();

  const int64_t after_kb = PeakRssKb(pid);
  // Buffered whole, each line would add its 200 MiB; bounded, the four add at most a few buffers.
  EXPECT_LT(after_kb - before_kb, 32 * 1024) << "peak RSS went from " << before_kb << " kB to " << after_kb << " kB";
  for (int i = 0; i < kConnections; ++i) {
    // What the kernel's socket buffers take after the server stopped reading is a few MiB.
    EXPECT_LT(sent[i], 16 * kMiB) << "connection " << i << ": the server kept reading a chunk line";
  }
  EXPECT_EQ(Scrape().status, 200) << "the port still answers";
}

TEST_P(HttpPortTest, ARequestTransferEncodingIsRefusedAndItsConnectionClosed) {
  for (const char* coding : {"chunked", "gzip, chunked", "identity"}) {
    HttpConnection c("127.0.0.1", port_, HttpConnectionOptions{"", ca_file_});
    ASSERT_TRUE(c.ok()) << c.error();
    ASSERT_TRUE(c.Send(std::string("POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: ") + coding +
                       "\r\n\r\n5;ext=1\r\nhello\r\n0\r\n\r\n"));
    const testing::HttpAnswer answer = c.ReadAnswer();
    EXPECT_EQ(answer.status, 400) << coding << ": " << answer.error;
    EXPECT_FALSE(answer.keep_alive) << coding;
    EXPECT_TRUE(c.ClosedByServerWithin(std::chrono::seconds(5))) << coding;
  }
  EXPECT_EQ(Scrape().status, 200);
}

INSTANTIATE_TEST_SUITE_P(Transports, HttpPortTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Https" : "Http"; });

}  // namespace
}  // namespace http_port_scenario
}  // namespace memfleet
