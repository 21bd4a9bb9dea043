// Which HTTP requests memfleet-server's --http-listen port answers, decided from what the client sent
// before anything is read from the store: GET (or HEAD) /metrics, with any query string ignored, from a
// client that names this server in its Host header. The HTTP parsing itself is Boost.Beast's; this is
// the part memfleet writes (tests/fuzz/scrape_request_fuzzer).
//
//   ScrapeRoute r = RouteScrapeRequest("GET", "/metrics?x=1", /*field_count=*/4);   // {200, kMetrics}
//   if (!HostNamesThisServer("evil.example:9420", {"lab-a"})) ...;                   // 421, closed
//
// Pure; thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_METRICS_SCRAPE_REQUEST_H_
#define MEMFLEET_SERVER_HTTP_METRICS_SCRAPE_REQUEST_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memfleet::metrics {

// Bounds on a request, besides Beast's header size limit.
inline constexpr size_t kMaxRequestTargetBytes = 2048;
inline constexpr size_t kMaxRequestFields = 64;

enum class ScrapeAnswer {
  kMetrics,           // 200 after authorization: the exposition text (no body for HEAD)
  kBadRequest,        // 400
  kNotFound,          // 404
  kMethodNotAllowed,  // 405, Allow: GET, HEAD
};

struct ScrapeRoute {
  ScrapeAnswer answer = ScrapeAnswer::kBadRequest;
  int status = 400;
  bool head = false;   // HEAD: headers only
  std::string reason;  // for the plain-text body of an error; never echoes the request
};

ScrapeRoute RouteScrapeRequest(std::string_view method, std::string_view target, size_t field_count);

// Whether a request's Host header names this server. Against DNS rebinding: a page of another site whose
// name its owner has pointed at this server's address (127.0.0.1, say) sends that name as its Host, and
// the browser lets the page read the answer. Such a name is never an address, so these are allowed, with
// or without ":PORT": an IP address literal (IPv4, or IPv6 in brackets), "localhost", and `host_names`
// (the --http-host names, without case). No Host field at all (nullopt) is allowed: browsers always
// send one.
bool HostNamesThisServer(std::optional<std::string_view> host_header, const std::vector<std::string>& host_names);

}  // namespace memfleet::metrics

#endif  // MEMFLEET_SERVER_HTTP_METRICS_SCRAPE_REQUEST_H_
