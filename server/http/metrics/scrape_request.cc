#include "server/http/metrics/scrape_request.h"

#include <arpa/inet.h>

#include <algorithm>

#include "absl/strings/match.h"
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

// ":PORT" (1 to 5 digits) or nothing.
bool IsPortSuffix(std::string_view text) {
  if (text.empty()) return true;
  if (text.front() != ':' || text.size() < 2 || text.size() > 6) return false;
  for (char c : text.substr(1)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// The whole text is the address: inet_pton reads a C string, so a NUL inside would end it early and let
// "[::\0anything]" pass as "::".
bool IsAddress(int family, std::string_view text) {
  if (text.find('\0') != std::string_view::npos) return false;
  unsigned char address[16];
  return inet_pton(family, std::string(text).c_str(), address) == 1;
}

}  // namespace

bool HostNamesThisServer(std::optional<std::string_view> host_header, const std::vector<std::string>& host_names) {
  if (!host_header) return true;
  const std::string_view host = *host_header;
  if (!host.empty() && host.front() == '[') {
    const size_t close = host.find(']');
    return close != std::string_view::npos && IsAddress(AF_INET6, host.substr(1, close - 1)) &&
           IsPortSuffix(host.substr(close + 1));
  }
  const size_t colon = host.find(':');
  const absl::string_view name(host.data(), std::min(colon, host.size()));
  if (name.empty() || !IsPortSuffix(colon == std::string_view::npos ? "" : host.substr(colon))) return false;
  if (IsAddress(AF_INET, std::string_view(name.data(), name.size())) || absl::EqualsIgnoreCase(name, "localhost")) {
    return true;
  }
  for (const std::string& allowed : host_names) {
    if (absl::EqualsIgnoreCase(name, allowed)) return true;
  }
  return false;
}

ScrapeRoute RouteScrapeRequest(std::string_view method, std::string_view target, size_t field_count) {
  if (field_count > kMaxRequestFields) {
    return Answer(ScrapeAnswer::kBadRequest, 400, absl::StrCat("more than ", kMaxRequestFields, " header fields"));
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
