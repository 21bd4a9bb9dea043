// MetricsHttpServer: memfleet-server's HTTP port (--http-listen HOST:PORT) serving GET /metrics to
// Prometheus, over Boost.Beast on its own small Asio thread pool. HTTPS with the server's TLS certificate
// when it has one; every request is authorized like a gRPC call (an `Authorization: Bearer` read or admin
// token when authentication is on: docs/security.md); with a DashboardSite, every other path is the
// browser dashboard (dashboard_site.h, docs/dashboard.md). Anyone who reaches the port can send anything
// before a token is looked at, so everything is bounded: header bytes and fields, the request target, a
// body only as big as the login form (with Content-Length: a request Transfer-Encoding is refused), what
// a connection holds of what it read, connections in all and from each peer address, the time a request
// may take once begun and the idle time before the next. A request whose Host does not name this server
// (DNS rebinding) gets 421. A request that is refused or bad gets its answer and its connection is
// closed. A failing accept (the process out of file descriptors) is retried after a pause, not in a busy
// loop.
//
//   absl::StatusOr<std::unique_ptr<MetricsHttpServer>> http = MetricsHttpServer::Start(options, auth, source);
//   std::string where = (*http)->address();   // "127.0.0.1:41234"
//   (*http)->Stop();
//
// Thread-safe: Stop may be called from any thread, and is idempotent.
#ifndef MEMFLEET_SERVER_HTTP_METRICS_HTTP_SERVER_H_
#define MEMFLEET_SERVER_HTTP_METRICS_HTTP_SERVER_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/http/dashboard_site.h"
#include "server/http/metrics_source.h"
#include "server/security/authorizer.h"

namespace memfleet::server {

struct MetricsHttpOptions {
  std::string listen;         // HOST:PORT (an IP address or localhost); port 0 picks a free one
  std::string tls_cert_file;  // with tls_key_file: HTTPS (PEM, as for gRPC)
  std::string tls_key_file;
  std::vector<std::string> host_names;  // names a Host header may give besides addresses and localhost
  size_t threads = 2;
  size_t max_connections = 64;                        // beyond it a new connection is closed at once
  size_t max_connections_per_peer = 16;               // from one peer address; beyond it the same
  size_t max_header_bytes = 16 * 1024;                // request line and header fields together
  std::chrono::milliseconds read_timeout{10000};      // a request once its first byte came, and the TLS handshake
  std::chrono::milliseconds idle_timeout{5000};       // a connection waiting for its next request's first byte
  std::chrono::milliseconds accept_retry_delay{100};  // after a failed accept (no file descriptor left)
};

class MetricsHttpServer {
 public:
  // `dashboard` may be null (only /metrics); it must outlive the server.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(const MetricsHttpOptions& options,
                                                                  const security::Authorizer& authorizer,
                                                                  MetricsSource& source,
                                                                  DashboardSite* dashboard = nullptr);
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;
  ~MetricsHttpServer();  // Stop()

  // HOST:PORT as listening, with the real port.
  const std::string& address() const;
  // Closes the port and every connection, and joins the threads.
  void Stop();

  class Impl;

 private:
  explicit MetricsHttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_HTTP_METRICS_HTTP_SERVER_H_
