#include "server/http/metrics_http_server.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "absl/strings/str_cat.h"
#include "server/core/clock.h"
#include "server/http/connection_slots.h"
#include "server/http/metrics/exposition.h"
#include "server/http/metrics/scrape_request.h"

namespace memfleet::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

// What every connection shares; kept alive by the connections themselves until the last one ends.
struct Shared {
  Shared(const MetricsHttpOptions& o, const security::Authorizer& a, MetricsSource& s, DashboardSite* d)
      : options(o), authorizer(a), source(s), dashboard(d), slots(o.max_connections, o.max_connections_per_peer) {}
  const MetricsHttpOptions options;
  const security::Authorizer& authorizer;
  MetricsSource& source;
  DashboardSite* const dashboard;     // null: only /metrics
  std::unique_ptr<ssl::context> tls;  // null: plain HTTP
  ConnectionSlots slots;
};

// The most a request may carry: the header's bound, and a body only as big as the login form.
size_t BodyLimit(const Shared& shared) { return shared.dashboard != nullptr ? kMaxDashboardBodyBytes : 0; }

// What a connection holds of what it read, at most: one whole request. A client that sends more before
// it is answered (a line that never ends, requests piled up) meets the limit, not a growing buffer.
size_t ReadBufferLimit(const Shared& shared) { return shared.options.max_header_bytes + BodyLimit(shared); }

std::string ToStd(beast::string_view text) { return std::string(text.data(), text.size()); }

Response PlainText(http::status status, std::string body, unsigned version, bool keep_alive) {
  Response res{status, version};
  res.set(http::field::content_type, "text/plain; charset=utf-8");
  res.set(http::field::cache_control, "no-store");
  res.keep_alive(keep_alive);
  res.body() = std::move(body);
  res.body() += '\n';
  res.prepare_payload();
  return res;
}

// The answer when authorization fails: 401 (with the scheme to use), 403, or 503 when the server cannot
// read its tokens (never a pass).
Response Refusal(const absl::Status& status, unsigned version, bool keep_alive) {
  http::status code = http::status::service_unavailable;
  if (status.code() == absl::StatusCode::kUnauthenticated) code = http::status::unauthorized;
  if (status.code() == absl::StatusCode::kPermissionDenied) code = http::status::forbidden;
  Response res = PlainText(code, std::string(status.message()), version, keep_alive);
  if (code == http::status::unauthorized) res.set(http::field::www_authenticate, "Bearer realm=\"memfleet\"");
  return res;
}

// A dashboard page (dashboard_site.h), with headers that keep a browser from running or framing anything.
Response DashboardAnswer(Shared& shared, const Request& req) {
  DashboardRequest request;
  request.method = ToStd(req.method_string());
  request.target = ToStd(req.target());
  if (auto it = req.find(http::field::authorization); it != req.end()) request.authorization = ToStd(it->value());
  if (auto it = req.find(http::field::cookie); it != req.end()) request.cookie = ToStd(it->value());
  if (auto it = req.find(http::field::host); it != req.end()) request.host = ToStd(it->value());
  if (auto it = req.find(http::field::origin); it != req.end()) request.origin = ToStd(it->value());
  if (auto it = req.find("Sec-Fetch-Site"); it != req.end()) request.sec_fetch_site = ToStd(it->value());
  request.body = req.body();
  request.tls = shared.tls != nullptr;
  DashboardReply reply = shared.dashboard->Handle(request);
  Response res{static_cast<http::status>(reply.status), req.version()};
  res.set(http::field::content_type, "text/html; charset=utf-8");
  res.set(http::field::cache_control, "no-store");
  res.set("Content-Security-Policy",
          "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
  res.set("X-Content-Type-Options", "nosniff");
  if (!reply.location.empty()) res.set(http::field::location, reply.location);
  if (!reply.set_cookie.empty()) res.set(http::field::set_cookie, reply.set_cookie);
  if (reply.bearer_challenge) res.set(http::field::www_authenticate, "Bearer realm=\"memfleet\"");
  res.keep_alive(req.keep_alive() && reply.status < 400);  // a refusal ends its connection
  if (req.method() == http::verb::head) {
    res.content_length(reply.body.size());
  } else {
    res.body() = std::move(reply.body);
    res.prepare_payload();
  }
  return res;
}

Response Answer(Shared& shared, const Request& req) {
  const size_t field_count = static_cast<size_t>(std::distance(req.begin(), req.end()));
  const metrics::ScrapeRoute route =
      metrics::RouteScrapeRequest(ToStd(req.method_string()), ToStd(req.target()), field_count);
  if (route.answer == metrics::ScrapeAnswer::kNotFound && shared.dashboard != nullptr) {
    return DashboardAnswer(shared, req);
  }
  if (route.answer != metrics::ScrapeAnswer::kMetrics) {
    Response res = PlainText(static_cast<http::status>(route.status), route.reason, req.version(), false);
    if (route.answer == metrics::ScrapeAnswer::kMethodNotAllowed) res.set(http::field::allow, "GET, HEAD");
    return res;
  }
  std::optional<std::string> authorization;
  if (auto it = req.find(http::field::authorization); it != req.end()) authorization = ToStd(it->value());
  if (absl::StatusOr<security::Principal> who =
          shared.authorizer.Authorize(security::kHttpMetricsMethod, authorization);
      !who.ok()) {
    return Refusal(who.status(), req.version(), false);  // a refusal ends its connection
  }
  absl::StatusOr<std::string> text = shared.source.Render();
  if (!text.ok())
    return PlainText(http::status::service_unavailable, std::string(text.status().message()), req.version(), false);
  Response res{http::status::ok, req.version()};
  res.set(http::field::content_type, metrics::kExpositionContentType);
  res.keep_alive(req.keep_alive());
  if (route.head) {
    res.content_length(text->size());
  } else {
    res.body() = std::move(*text);
    res.prepare_payload();
  }
  return res;
}

template <class Stream>
constexpr bool kIsTls = !std::is_same_v<Stream, beast::tcp_stream>;

// What the port answers, before the body is read, to a request whose header it will not serve: one with a
// Transfer-Encoding (no request needs one; a chunk line is not bounded by the header or body limits), or
// whose Host does not name this server. nullopt: read the body and answer it.
std::optional<Response> RefusedHeader(const Shared& shared, const Request& req) {
  if (req.find(http::field::transfer_encoding) != req.end()) {
    return PlainText(http::status::bad_request,
                     "bad request: a body must come with Content-Length (Transfer-Encoding is not accepted)", 11,
                     false);
  }
  std::optional<std::string_view> host;
  if (auto it = req.find(http::field::host); it != req.end()) {
    host = std::string_view(it->value().data(), it->value().size());
  }
  if (!metrics::HostNamesThisServer(host, shared.options.host_names)) {
    return PlainText(http::status::misdirected_request,
                     "the Host header does not name this server: use its address, localhost, or a name given "
                     "to memfleet-server with --http-host",
                     req.version(), false);
  }
  return std::nullopt;
}

// One connection: (TLS handshake,) then requests one at a time until the client closes, a request is bad
// or refused, no request begins within the idle timeout, or one begun does not arrive within the read
// timeout. It holds its slot (ConnectionSlots) until it ends.
template <class Stream>
class Connection : public std::enable_shared_from_this<Connection<Stream>> {
 public:
  Connection(Stream stream, std::shared_ptr<Shared> shared, ConnectionSlots::Slot slot)
      : stream_(std::move(stream)),
        shared_(std::move(shared)),
        slot_(std::move(slot)),
        buffer_(ReadBufferLimit(*shared_)) {}

  void Start() {
    beast::get_lowest_layer(stream_).expires_after(shared_->options.read_timeout);
    if constexpr (kIsTls<Stream>) {
      stream_.async_handshake(ssl::stream_base::server, [self = this->shared_from_this()](beast::error_code ec) {
        if (!ec) self->AwaitRequest();
      });
    } else {
      AwaitRequest();
    }
  }

 private:
  // Waits, up to the idle timeout, for the first bytes of the next request (unless they are here).
  void AwaitRequest() {
    if (buffer_.size() > 0) return ReadHeader();
    beast::get_lowest_layer(stream_).expires_after(
        std::min(shared_->options.idle_timeout, shared_->options.read_timeout));
    stream_.async_read_some(buffer_.prepare(beast::read_size(buffer_, 4096)),
                            [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                              self->buffer_.commit(n);
                              if (ec == net::error::eof) return self->Close();
                              if (ec) return;  // idle too long, reset, TLS failure: the connection just ends
                              self->ReadHeader();
                            });
  }

  void ReadHeader() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(shared_->options.max_header_bytes));
    parser_->body_limit(BodyLimit(*shared_));
    beast::get_lowest_layer(stream_).expires_after(shared_->options.read_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return OnRead(ec);
    if (std::optional<Response> refused = RefusedHeader(*shared_, parser_->get())) return Write(std::move(*refused));
    if (parser_->is_done()) return OnRead(ec);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code read_ec, size_t) { self->OnRead(read_ec); });
  }

  void OnRead(beast::error_code ec) {
    if (ec == http::error::end_of_stream) return Close();
    if (ec && ec.category() == beast::http::make_error_code(http::error::bad_target).category()) {
      // The request itself is malformed or over a limit: say so, then close.
      return Write(PlainText(http::status::bad_request, absl::StrCat("bad request: ", ec.message()), 11, false));
    }
    if (ec) return;  // timeout, reset, TLS failure: the connection just ends
    Write(Answer(*shared_, parser_->get()));
  }

  void Write(Response response) {
    response_ = std::move(response);
    beast::get_lowest_layer(stream_).expires_after(shared_->options.read_timeout);
    http::async_write(stream_, response_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return;
      if (self->response_.keep_alive()) return self->AwaitRequest();
      self->Close();
    });
  }

  void Close() {
    if constexpr (kIsTls<Stream>) {
      beast::get_lowest_layer(stream_).expires_after(shared_->options.read_timeout);
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {});
    } else {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  Stream stream_;
  std::shared_ptr<Shared> shared_;
  ConnectionSlots::Slot slot_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Response response_;
};

absl::StatusOr<tcp::endpoint> ListenEndpoint(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    return absl::InvalidArgumentError(absl::StrCat("--http-listen \"", listen, "\" is not HOST:PORT"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") host = "127.0.0.1";
  beast::error_code ec;
  const net::ip::address address = net::ip::make_address(host, ec);
  const std::string port_text = listen.substr(colon + 1);
  char* end = nullptr;
  const unsigned long port = std::strtoul(port_text.c_str(), &end, 10);
  if (ec || *end != '\0' || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http-listen \"", listen, "\": HOST must be an IP address or localhost, PORT 0-65535"));
  }
  return tcp::endpoint(address, static_cast<unsigned short>(port));
}

absl::StatusOr<std::unique_ptr<ssl::context>> TlsContext(const MetricsHttpOptions& o) {
  if (o.tls_cert_file.empty() && o.tls_key_file.empty()) return nullptr;
  auto tls = std::make_unique<ssl::context>(ssl::context::tls_server);
  tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  beast::error_code ec;
  tls->use_certificate_chain_file(o.tls_cert_file, ec);
  if (!ec) tls->use_private_key_file(o.tls_key_file, ssl::context::pem, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat("HTTPS: cannot load --tls-cert/--tls-key: ", ec.message()));
  return tls;
}

}  // namespace

class MetricsHttpServer::Impl {
 public:
  explicit Impl(std::shared_ptr<Shared> shared) : shared_(std::move(shared)), acceptor_(net::make_strand(ioc_)) {}

  absl::Status Listen() {
    absl::StatusOr<tcp::endpoint> endpoint = ListenEndpoint(shared_->options.listen);
    if (!endpoint.ok()) return endpoint.status();
    beast::error_code ec;
    acceptor_.open(endpoint->protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(*endpoint, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("cannot listen on ", shared_->options.listen, " for HTTP: ", ec.message()));
    }
    const std::string& listen = shared_->options.listen;
    address_ = absl::StrCat(listen.substr(0, listen.rfind(':')), ":", acceptor_.local_endpoint().port());
    return absl::OkStatus();
  }

  void Run() {
    Accept();
    for (size_t i = 0; i < std::max<size_t>(1, shared_->options.threads); ++i) {
      threads_.emplace_back([this] { ioc_.run(); });
    }
  }

  void Stop() {
    if (stopped_.exchange(true)) return;
    ioc_.stop();
    for (std::thread& t : threads_) t.join();
    // No thread runs handlers any more: the port closes now; open connections close with the io_context.
    beast::error_code ignored;
    acceptor_.close(ignored);
  }

  const std::string& address() const { return address_; }

 private:
  void Accept() {
    acceptor_.async_accept(net::make_strand(ioc_), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted) return;
      if (ec) {
        AcceptLater(ec);
        return;
      }
      accept_failing_ = false;
      Serve(std::move(socket));
      Accept();
    });
  }

  // An accept that fails (out of file descriptors, say) fails again at once while the cause lasts, with
  // the connection still queued: retrying at once would spin a core. Waits, says so once per run of
  // failures, and serves the queued connection once the cause is gone.
  void AcceptLater(const beast::error_code& ec) {
    if (!accept_failing_) {
      LogLine(absl::StrCat("HTTP port: cannot accept a connection (", ec.message(), "); retrying every ",
                           shared_->options.accept_retry_delay.count(), " ms"));
    }
    accept_failing_ = true;
    retry_timer_.expires_after(shared_->options.accept_retry_delay);
    retry_timer_.async_wait([this](beast::error_code wait_ec) {
      if (wait_ec != net::error::operation_aborted) Accept();
    });
  }

  void Serve(tcp::socket socket) {
    beast::error_code ec;
    const tcp::endpoint peer = socket.remote_endpoint(ec);
    std::optional<ConnectionSlots::Slot> slot =
        ec ? std::optional<ConnectionSlots::Slot>() : shared_->slots.TryTake(PeerHost(peer.address()));
    if (!slot) {
      // The port, or this peer address, holds all the connections it may: closed at once, no answer.
      socket.close(ec);
      return;
    }
    if (shared_->tls != nullptr) {
      std::make_shared<Connection<beast::ssl_stream<beast::tcp_stream>>>(
          beast::ssl_stream<beast::tcp_stream>(std::move(socket), *shared_->tls), shared_, std::move(*slot))
          ->Start();
    } else {
      std::make_shared<Connection<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)), shared_, std::move(*slot))
          ->Start();
    }
  }

  // A peer's address as one host: an IPv4 address mapped into IPv6 counts as the IPv4 address.
  static std::string PeerHost(const net::ip::address& address) {
    if (address.is_v6() && address.to_v6().is_v4_mapped()) {
      return net::ip::make_address_v4(net::ip::v4_mapped, address.to_v6()).to_string();
    }
    return address.to_string();
  }

  std::shared_ptr<Shared> shared_;
  net::io_context ioc_;  // before the acceptor (destroyed after it); pending connections die with it
  tcp::acceptor acceptor_;
  net::steady_timer retry_timer_{ioc_};
  bool accept_failing_ = false;  // only the pending accept's handler (one at a time) touches it
  std::vector<std::thread> threads_;
  std::string address_;
  std::atomic<bool> stopped_{false};
};

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(const MetricsHttpOptions& options,
                                                                            const security::Authorizer& authorizer,
                                                                            MetricsSource& source,
                                                                            DashboardSite* dashboard) {
  auto shared = std::make_shared<Shared>(options, authorizer, source, dashboard);
  absl::StatusOr<std::unique_ptr<ssl::context>> tls = TlsContext(options);
  if (!tls.ok()) return tls.status();
  shared->tls = std::move(*tls);
  auto impl = std::make_unique<Impl>(std::move(shared));
  if (absl::Status s = impl->Listen(); !s.ok()) return s;
  impl->Run();
  LogLine(absl::StrCat("serving GET /metrics", dashboard != nullptr ? " and the dashboard" : "", " on ",
                       impl->address(), options.tls_cert_file.empty() ? " (HTTP)" : " (HTTPS)"));
  return std::unique_ptr<MetricsHttpServer>(new MetricsHttpServer(std::move(impl)));
}

MetricsHttpServer::MetricsHttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MetricsHttpServer::~MetricsHttpServer() { Stop(); }
const std::string& MetricsHttpServer::address() const { return impl_->address(); }
void MetricsHttpServer::Stop() { impl_->Stop(); }

}  // namespace memfleet::server
