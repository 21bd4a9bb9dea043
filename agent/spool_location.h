// Where the agent keeps its spool when --spool is not given: a persistent folder that only the agent can
// write (a spool in /tmp is lost at reboot, and another user could create it first and plant captures or
// symlinks). Spool::Open then creates it 0700 and checks it.
//
//   std::string dir = DefaultSpoolDir("bench-3", SpoolHost::ThisHost());
//   // phone: /data/local/tmp/memfleet/spool; Linux as root: /var/lib/memfleet-agent/bench-3;
//   // Linux as another user: $XDG_STATE_HOME (or ~/.local/state)/memfleet-agent/bench-3
//
// DefaultSpoolDir is pure; SpoolHost::ThisHost reads the environment and stats one file.
#ifndef MEMFLEET_AGENT_SPOOL_LOCATION_H_
#define MEMFLEET_AGENT_SPOOL_LOCATION_H_

#include <string>

namespace memfleet::agent {

struct SpoolHost {
  // An Android device. The agent is a static binary that may be built without the NDK, so besides
  // __ANDROID__ this is decided at run time: /system/build.prop exists on every Android system.
  bool android = false;
  bool root = false;           // effective uid 0
  std::string xdg_state_home;  // $XDG_STATE_HOME, "" when unset
  std::string home;            // $HOME, "" when unset

  static SpoolHost ThisHost();
};

// The default spool folder of the agent of `device_id` (made safe to be one path segment) on `host`.
// Empty when no persistent private place is known (not root, no $HOME): the agent then asks for --spool.
std::string DefaultSpoolDir(const std::string& device_id, const SpoolHost& host);

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_SPOOL_LOCATION_H_
