// Test support: one HTTP(S) connection to a server on this machine, held open and driven by hand — for
// the HTTP port's connection rules: any bytes sent (a request that never ends), one answer read, whether
// the server closed it, and from which local address it comes. Every wait is bounded by a timeout.
// Compiled once in memfleet_test_http (http_connection.cc, Boost.Beast), so its users do not parse Beast.
//
//   HttpConnection c("127.0.0.1", port, {.source_address = "127.0.0.2", .ca_file = ca});
//   ASSERT_TRUE(c.ok()) << c.error();
//   c.Send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
//   EXPECT_EQ(c.ReadAnswer().status, 401);
//   EXPECT_TRUE(c.ClosedByServerWithin(std::chrono::seconds(2)));
#ifndef MEMFLEET_TESTS_SUPPORT_HTTP_CONNECTION_H_
#define MEMFLEET_TESTS_SUPPORT_HTTP_CONNECTION_H_

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace memfleet::testing {

struct HttpConnectionOptions {
  std::string source_address;  // "": the system's choice; else the local address to connect from
  std::string ca_file;         // "": plain HTTP; else HTTPS, the server's certificate checked against this CA
};

struct HttpAnswer {
  int status = 0;  // 0: none (error says why)
  bool keep_alive = false;
  std::string body;
  std::string error;
};

class HttpConnection {
 public:
  // Connects, and for HTTPS completes the handshake, within 10 s; ok() says whether it did.
  HttpConnection(const std::string& host, int port, const HttpConnectionOptions& o = {});
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  bool ok() const;
  const std::string& error() const;

  // Writes all of `bytes` within 30 s; false (error() says why) when the server closed or reset the
  // connection first.
  bool Send(std::string_view bytes);

  // One response, read within `timeout`.
  HttpAnswer ReadAnswer(std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // True when the server ends the connection (end of stream, a reset, a TLS close) within `timeout`;
  // false when the timeout passes first (the connection stays open) or the server sends more bytes.
  bool ClosedByServerWithin(std::chrono::milliseconds timeout);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_HTTP_CONNECTION_H_
