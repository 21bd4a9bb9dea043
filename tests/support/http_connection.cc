#include "tests/support/http_connection.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace memfleet::testing {

class HttpConnection::Impl {
 public:
  Impl(const std::string& host, int port, const HttpConnectionOptions& o) {
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

  HttpAnswer ReadAnswer(std::chrono::milliseconds timeout) {
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

HttpConnection::HttpConnection(const std::string& host, int port, const HttpConnectionOptions& o)
    : impl_(std::make_unique<Impl>(host, port, o)) {}
HttpConnection::~HttpConnection() = default;
bool HttpConnection::ok() const { return impl_->ok(); }
const std::string& HttpConnection::error() const { return impl_->error(); }
bool HttpConnection::Send(std::string_view bytes) { return impl_->Send(bytes); }
HttpAnswer HttpConnection::ReadAnswer(std::chrono::milliseconds timeout) { return impl_->ReadAnswer(timeout); }
bool HttpConnection::ClosedByServerWithin(std::chrono::milliseconds timeout) {
  return impl_->ClosedByServerWithin(timeout);
}

}  // namespace memfleet::testing
