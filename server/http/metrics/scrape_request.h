// Which HTTP requests memfleet-server's --http-listen port answers, decided from what the client sent
// before anything is read from the store: GET (or HEAD) /metrics, with any query string ignored. The
// HTTP parsing itself is Boost.Beast's; this is the part memfleet writes (tests/fuzz/scrape_request_fuzzer).
//
//   ScrapeRoute r = RouteScrapeRequest("GET", "/metrics?x=1", /*field_count=*/4);   // {200, kMetrics}
//
// Pure; thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_METRICS_SCRAPE_REQUEST_H_
#define MEMFLEET_SERVER_HTTP_METRICS_SCRAPE_REQUEST_H_

#include <cstddef>
#include <string>
#include <string_view>

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

}  // namespace memfleet::metrics

#endif  // MEMFLEET_SERVER_HTTP_METRICS_SCRAPE_REQUEST_H_
