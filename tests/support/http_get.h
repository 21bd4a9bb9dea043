// Test support: one HTTP(S) request to a server on this machine with Boost.Beast, as Prometheus or curl
// would send it — for memfleet-server's /metrics and Prometheus' own API. Header-only; needs Boost and,
// for HTTPS, OpenSSL.
//
//   HttpReply r = HttpGet("127.0.0.1", port, "/metrics", {.bearer = token, .ca_file = ca});
//   EXPECT_EQ(r.status, 200) << r.error;
//   HttpReply login = HttpGet(host, port, "/login", {.method = "POST", .body = "token=..."});   // a form
#ifndef MEMFLEET_TESTS_SUPPORT_HTTP_GET_H_
#define MEMFLEET_TESTS_SUPPORT_HTTP_GET_H_

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace memfleet::testing {

struct HttpOptions {
  std::string bearer;   // "": no Authorization header
  std::string ca_file;  // "": plain HTTP; else HTTPS, the server's certificate checked against this CA
  std::string method = "GET";
  std::string cookie;  // "": no Cookie header
  std::string body;    // sent as application/x-www-form-urlencoded when not ""
  std::string source_address;  // "": the system's choice; else the local address to connect from ("127.0.0.2")
  std::vector<std::pair<std::string, std::string>> headers;  // more fields; a "Host" here replaces the default
};

struct HttpReply {
  int status = 0;  // 0: no answer (error says why)
  std::string content_type;
  std::string www_authenticate;
  std::string location;
  std::string set_cookie;
  std::string content_security_policy;
  bool keep_alive = false;  // the server said it keeps the connection open
  std::string body;
  std::string error;
};

namespace http_get_internal {

template <class Stream>
HttpReply Exchange(Stream& stream, const std::string& host, const std::string& target, const HttpOptions& o) {
  namespace http = boost::beast::http;
  http::request<http::string_body> req{http::string_to_verb(o.method), target, 11};
  req.set(http::field::host, host);
  req.set(http::field::user_agent, "memfleet-test");
  for (const auto& [name, value] : o.headers) req.set(name, value);
  if (!o.bearer.empty()) req.set(http::field::authorization, "Bearer " + o.bearer);
  if (!o.cookie.empty()) req.set(http::field::cookie, o.cookie);
  if (!o.body.empty()) {
    req.set(http::field::content_type, "application/x-www-form-urlencoded");
    req.body() = o.body;
    req.prepare_payload();
  }
  HttpReply reply;
  boost::beast::error_code ec;
  http::write(stream, req, ec);
  if (ec) {
    reply.error = "write: " + ec.message();
    return reply;
  }
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(256 << 20);
  parser.skip(o.method == "HEAD");
  http::read(stream, buffer, parser, ec);
  if (ec) {
    reply.error = "read: " + ec.message();
    return reply;
  }
  const auto& res = parser.get();
  reply.status = static_cast<int>(res.result_int());
  reply.content_type = std::string(res[http::field::content_type]);
  reply.www_authenticate = std::string(res[http::field::www_authenticate]);
  reply.location = std::string(res[http::field::location]);
  reply.set_cookie = std::string(res[http::field::set_cookie]);
  reply.content_security_policy = std::string(res["Content-Security-Policy"]);
  reply.keep_alive = res.keep_alive();
  reply.body = res.body();
  return reply;
}

}  // namespace http_get_internal

inline HttpReply HttpGet(const std::string& host, int port, const std::string& target, const HttpOptions& o = {}) {
  namespace net = boost::asio;
  namespace beast = boost::beast;
  net::io_context ioc;
  beast::error_code ec;
  net::ip::tcp::endpoint endpoint(net::ip::make_address(host, ec), static_cast<unsigned short>(port));
  HttpReply reply;
  if (ec) {
    reply.error = "address: " + ec.message();
    return reply;
  }
  beast::tcp_stream tcp(ioc);
  tcp.expires_after(std::chrono::seconds(30));
  if (!o.source_address.empty()) {
    tcp.socket().open(endpoint.protocol(), ec);
    if (!ec) tcp.socket().bind(net::ip::tcp::endpoint(net::ip::make_address(o.source_address, ec), 0), ec);
    if (ec) {
      reply.error = "bind " + o.source_address + ": " + ec.message();
      return reply;
    }
  }
  tcp.connect(endpoint, ec);
  if (ec) {
    reply.error = "connect: " + ec.message();
    return reply;
  }
  if (o.ca_file.empty()) return http_get_internal::Exchange(tcp, host, target, o);
  net::ssl::context tls(net::ssl::context::tls_client);
  tls.load_verify_file(o.ca_file, ec);
  if (ec) {
    reply.error = "CA file: " + ec.message();
    return reply;
  }
  tls.set_verify_mode(net::ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> stream(std::move(tcp), tls);
  stream.set_verify_callback(net::ssl::host_name_verification(host));
  stream.handshake(net::ssl::stream_base::client, ec);
  if (ec) {
    reply.error = "TLS handshake: " + ec.message();
    return reply;
  }
  return http_get_internal::Exchange(stream, host, target, o);
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_HTTP_GET_H_
