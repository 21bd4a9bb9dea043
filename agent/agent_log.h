// The agent's log: one line per event on stderr, prefixed with a UTC timestamp, so that an operator can
// follow connects, captures and acks in a device's logcat or a terminal.
//
//   LogLine(absl::StrCat("connected to ", server));
//   // 2026-12-02T16:15:00.123Z memfleet-agent: connected to lab:7070
//
// Thread-safe: each line is written whole (common/log_line.h, shared with the server).
#ifndef MEMFLEET_AGENT_AGENT_LOG_H_
#define MEMFLEET_AGENT_AGENT_LOG_H_

#include <string_view>

namespace memfleet::agent {

void LogLine(std::string_view message);

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_AGENT_LOG_H_
