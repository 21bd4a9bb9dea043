#include "agent/spool_location.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace memfleet::agent {
namespace {

// A device id as one path segment: anything but [A-Za-z0-9._-] becomes '_', and "." / ".." cannot name
// a parent.
std::string PathSegment(const std::string& id) {
  std::string out;
  for (char c : id) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    out.push_back(ok ? c : '_');
  }
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

}  // namespace

SpoolHost SpoolHost::ThisHost() {
  SpoolHost host;
#if defined(__ANDROID__)
  host.android = true;
#else
  struct stat st {};
  host.android = stat("/system/build.prop", &st) == 0 && S_ISREG(st.st_mode);
#endif
  host.root = geteuid() == 0;
  host.xdg_state_home = Env("XDG_STATE_HOME");
  host.home = Env("HOME");
  return host;
}

std::string DefaultSpoolDir(const std::string& device_id, const SpoolHost& host) {
  // One agent per phone; /data/local/tmp is the folder both shell and root may write, and survives reboots.
  if (host.android) return "/data/local/tmp/memfleet/spool";
  const std::string segment = "/memfleet-agent/" + PathSegment(device_id);
  if (host.root) return "/var/lib" + segment;
  // The XDG base-directory spec: $XDG_STATE_HOME must be absolute to count, else ~/.local/state.
  if (!host.xdg_state_home.empty() && host.xdg_state_home[0] == '/') return host.xdg_state_home + segment;
  if (!host.home.empty() && host.home[0] == '/') return host.home + "/.local/state" + segment;
  return "";
}

}  // namespace memfleet::agent
