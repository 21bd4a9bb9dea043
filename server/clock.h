// Wall-clock helpers for the server (the engine itself reads no clock): the store's RFC 3339 UTC form
// and the compact form used inside ids.
//
//   std::string now = NowRfc3339();        // "2026-12-02T16:15:00Z"
//   CompactUtc(now);                       // "20261202T161500Z"
//
// Thread-safe.
#ifndef MEMFLEET_SERVER_CLOCK_H_
#define MEMFLEET_SERVER_CLOCK_H_

#include <string>
#include <string_view>

namespace memfleet::server {

std::string NowRfc3339();
// "YYYY-MM-DDTHH:MM:SSZ" -> "YYYYMMDDTHHMMSSZ"; other text is returned with '-' and ':' removed.
std::string CompactUtc(std::string_view rfc3339);

// One line on stderr, prefixed with the time: the server's operational log (common/log_line.h).
void LogLine(std::string_view message);

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_CLOCK_H_
