#include "server/http/metrics/scrape_request.h"

#include "absl/strings/str_cat.h"

namespace memfleet::metrics {
namespace {

ScrapeRoute Answer(ScrapeAnswer answer, int status, std::string reason) {
  ScrapeRoute r;
  r.answer = answer;
  r.status = status;
  r.reason = std::move(reason);
  return r;
}

// Origin form ("/path?query") of visible ASCII only: no spaces, controls or bytes above 0x7e.
bool IsOriginForm(std::string_view target) {
  if (target.empty() || target.front() != '/') return false;
  for (char c : target) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) return false;
  }
  return true;
}

}  // namespace

ScrapeRoute RouteScrapeRequest(std::string_view method, std::string_view target, size_t field_count) {
  if (field_count > kMaxRequestFields) {
    return Answer(ScrapeAnswer::kBadRequest, 400,
                  absl::StrCat("more than ", kMaxRequestFields, " header fields"));
  }
  if (target.size() > kMaxRequestTargetBytes) {
    return Answer(ScrapeAnswer::kBadRequest, 400,
                  absl::StrCat("request target longer than ", kMaxRequestTargetBytes, " bytes"));
  }
  if (!IsOriginForm(target)) {
    return Answer(ScrapeAnswer::kBadRequest, 400, "the request target is not a path of visible ASCII");
  }
  const std::string_view path = target.substr(0, target.find('?'));
  if (path != "/metrics") return Answer(ScrapeAnswer::kNotFound, 404, "not found: this port serves GET /metrics");
  if (method != "GET" && method != "HEAD") {
    return Answer(ScrapeAnswer::kMethodNotAllowed, 405, "/metrics answers GET and HEAD");
  }
  ScrapeRoute r = Answer(ScrapeAnswer::kMetrics, 200, "");
  r.head = method == "HEAD";
  return r;
}

}  // namespace memfleet::metrics
