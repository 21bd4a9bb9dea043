#include "tests/support/http_get.h"

#include <chrono>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace memfleet::testing {

namespace {

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

}  // namespace

HttpReply HttpGet(const std::string& host, int port, const std::string& target, const HttpOptions& o) {
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
  if (o.ca_file.empty()) return Exchange(tcp, host, target, o);
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
  return Exchange(stream, host, target, o);
}

}  // namespace memfleet::testing
