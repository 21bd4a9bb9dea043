#include "agent/agent_log.h"

#include "common/log_line.h"

namespace memfleet::agent {

void LogLine(std::string_view message) { WriteLogLine("memfleet-agent", message); }

}  // namespace memfleet::agent
