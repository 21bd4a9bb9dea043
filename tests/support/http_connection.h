// Test support: one HTTP(S) connection to a server on this machine, held open and driven by hand — for
// the HTTP port's connection rules: any bytes sent (a request that never ends), one answer read, whether
// the server closed it, and from which local address it comes. Every wait is bounded by a timeout.
// Header-only; needs Boost and, for HTTPS, OpenSSL.
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

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

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
  HttpConnection(const std::string& host, int port, const HttpConnectionOptions& o = {}) {
    namespace net = boost::asio;
    boost::beast::error_code ec;
    const net::ip::tcp::endpoint endpoint(net::ip::make_address(host, ec), static_cast<unsigned short>(port));
    if (ec) {
      Fail("address", ec);
      return;
    }
    boost::beast::tcp_stream tcp(ioc_);
    if (!o.source_address.empty()) {
      tcp.socket().open(endpoint.protocol(), ec);
      if (!ec) tcp.socket().bind(net::ip::tcp::endpoint(net::ip::make_address(o.source_address, ec), 0), ec);
      if (ec) {
        Fail("bind", ec);
        return;
      }
    }
    tcp.expires_after(std::chrono::seconds(10));
    tcp.async_connect(endpoint, [&](boost::beast::error_code e) { ec = e; });
    Run();
    if (ec) {
      Fail("connect", ec);
      return;
    }
    if (o.ca_file.empty()) {
      plain_ = std::make_unique<boost::beast::tcp_stream>(std::move(tcp));
      ok_ = true;
      return;
    }
    tls_context_ = std::make_unique<net::ssl::context>(net::ssl::context::tls_client);
    tls_context_->load_verify_file(o.ca_file, ec);
    if (ec) {
      Fail("CA file", ec);
      return;
    }
    tls_context_->set_verify_mode(net::ssl::verify_peer);
    tls_ = std::make_unique<boost::beast::ssl_stream<boost::beast::tcp_stream>>(std::move(tcp), *tls_context_);
    tls_->set_verify_callback(net::ssl::host_name_verification(host));
    boost::beast::get_lowest_layer(*tls_).expires_after(std::chrono::seconds(10));
    tls_->async_handshake(net::ssl::stream_base::client, [&](boost::beast::error_code e) { ec = e; });
    Run();
    if (ec) {
      Fail("TLS handshake", ec);
      return;
    }
    ok_ = true;
  }

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

  // Writes all of `bytes` within 30 s; false (error() says why) when the server closed or reset the
  // connection first.
  bool Send(std::string_view bytes) {
    if (!ok_) return false;
    boost::beast::error_code ec;
    OnStream([&](auto& stream) {
      boost::beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
      boost::asio::async_write(stream, boost::asio::buffer(bytes.data(), bytes.size()),
                               [&](boost::beast::error_code e, size_t) { ec = e; });
    });
    Run();
    if (ec) Fail("send", ec);
    return !ec;
  }

  // One response, read within `timeout`.
  HttpAnswer ReadAnswer(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    HttpAnswer answer;
    if (!ok_) {
      answer.error = error_;
      return answer;
    }
    namespace http = boost::beast::http;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    boost::beast::error_code ec;
    OnStream([&](auto& stream) {
      boost::beast::get_lowest_layer(stream).expires_after(timeout);
      http::async_read(stream, buffer_, parser, [&](boost::beast::error_code e, size_t) { ec = e; });
    });
    Run();
    if (ec) {
      answer.error = "read: " + ec.message();
      return answer;
    }
    answer.status = static_cast<int>(parser.get().result_int());
    answer.keep_alive = parser.get().keep_alive();
    answer.body = parser.get().body();
    return answer;
  }

  // True when the server ends the connection (end of stream, a reset, a TLS close) within `timeout`;
  // false when the timeout passes first (the connection stays open) or the server sends more bytes.
  bool ClosedByServerWithin(std::chrono::milliseconds timeout) {
    if (!ok_) return true;
    if (buffer_.size() > 0) return false;
    boost::beast::error_code ec;
    bool timed_out = false;
    char byte;
    // A timer that cancels the read, not the stream's own timeout, which would close the connection.
    boost::asio::steady_timer timer(ioc_, timeout);
    timer.async_wait([&](boost::beast::error_code e) {
      if (e) return;
      timed_out = true;
      OnStream([](auto& stream) { boost::beast::get_lowest_layer(stream).cancel(); });
    });
    OnStream([&](auto& stream) {
      boost::beast::get_lowest_layer(stream).expires_never();
      stream.async_read_some(boost::asio::buffer(&byte, 1), [&](boost::beast::error_code e, size_t) {
        ec = e;
        timer.cancel();
      });
    });
    Run();
    return !timed_out && ec;
  }

 private:
  template <class F>
  void OnStream(F f) {
    if (tls_ != nullptr) {
      f(*tls_);
    } else {
      f(*plain_);
    }
  }
  void Run() {
    ioc_.restart();
    ioc_.run();
  }
  void Fail(const char* what, const boost::beast::error_code& ec) {
    ok_ = false;
    error_ = std::string(what) + ": " + ec.message();
  }

  boost::asio::io_context ioc_;
  std::unique_ptr<boost::asio::ssl::context> tls_context_;
  std::unique_ptr<boost::beast::tcp_stream> plain_;
  std::unique_ptr<boost::beast::ssl_stream<boost::beast::tcp_stream>> tls_;
  boost::beast::flat_buffer buffer_;
  bool ok_ = false;
  std::string error_;
};

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_HTTP_CONNECTION_H_
