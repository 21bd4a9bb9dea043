// libFuzzer target for what memfleet writes of the /metrics HTTP port's input handling (Boost.Beast parses
// HTTP itself): the routing of a request (method, target, field count), the Host header check and the
// escaping of label values from device text. Besides "no crash, no UB", it checks the properties the
// port and the format rely on.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/untrusted_text.h"
#include "server/http/metrics/exposition.h"
#include "server/http/metrics/scrape_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // First byte: the field count; then "METHOD TARGET".
  const size_t fields = size > 0 ? data[0] : 0;
  const std::string_view rest = size > 0 ? text.substr(1) : text;
  const size_t space = rest.find(' ');
  const std::string_view method = rest.substr(0, space);
  const std::string_view target = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  const memfleet::metrics::ScrapeRoute route = memfleet::metrics::RouteScrapeRequest(method, target, fields);
  if (route.answer == memfleet::metrics::ScrapeAnswer::kMetrics) {
    // Only GET/HEAD of /metrics (any query), within the bounds.
    if (method != "GET" && method != "HEAD") __builtin_trap();
    if (target.substr(0, target.find('?')) != "/metrics") __builtin_trap();
    if (fields > memfleet::metrics::kMaxRequestFields) __builtin_trap();
  }
  if (route.status < 200 || route.status > 599) __builtin_trap();
  // The reason is the server's own text, safe to send back: no control characters, whatever was asked.
  for (char c : route.reason) {
    if (static_cast<unsigned char>(c) < 0x20) __builtin_trap();
  }

  // A Host let through with no --http-host name is an address or localhost: letters other than hex digits
  // (IPv6) come only from "localhost", so no name someone could point at this server passes.
  if (memfleet::metrics::HostNamesThisServer(text, {})) {
    const std::string_view name = text.substr(0, text.find(':'));
    const bool localhost = name.size() == 9 && (name[0] | 0x20) == 'l';
    for (char c : text) {
      const bool hex = (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
      if (!hex && c != '.' && c != ':' && c != '[' && c != ']' && !localhost) __builtin_trap();
    }
  }

  // An escaped label value has no raw newline, and every quote is escaped: it cannot end its label.
  const std::string escaped = memfleet::metrics::EscapeLabelValue(text);
  if (escaped.find('\n') != std::string::npos) __builtin_trap();
  for (size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] == '\\') {
      if (i + 1 >= escaped.size()) __builtin_trap();
      const char next = escaped[i + 1];
      if (next != '\\' && next != '"' && next != 'n') __builtin_trap();
      ++i;
    } else if (escaped[i] == '"') {
      __builtin_trap();
    }
  }
  // Nor any control or bidi formatting character a dashboard would act on: each is a visible escape.
  for (size_t i = 0; i < escaped.size();) {
    char32_t cp = 0;
    const size_t length = memfleet::DecodeUtf8(escaped, i, &cp);
    if (length == 0 || memfleet::IsUnsafeCodePoint(cp)) __builtin_trap();
    i += length;
  }
  return 0;
}
