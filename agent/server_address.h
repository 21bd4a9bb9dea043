// The gRPC target the agent dials for --server, chosen so that it never needs a name lookup when it is
// given an address: the static agent on a phone has no working resolver (static glibc, no NSS, no
// /etc/resolv.conf), so a phone reaches the lab server as 127.0.0.1:PORT (adb reverse) or an address.
//
//   GrpcTarget("127.0.0.1:7070")   -> "ipv4:127.0.0.1:7070"   (no resolver involved)
//   GrpcTarget("[::1]:7070")       -> "ipv6:[::1]:7070"
//   GrpcTarget("ipv4:10.0.0.2:7070") -> unchanged (gRPC's own literal schemes)
//   GrpcTarget("lab:7070")         -> "lab:7070", after CheckResolvable("lab", "7070") at start-up
//
//   ParseServerList("10.0.0.2:7070,10.0.0.3:7070") -> two addresses, tried in that order (failover)
//
// ParseServerAddress, ParseServerList and GrpcTarget are pure; CheckResolvable does the one lookup a host
// name needs.
#ifndef MEMFLEET_AGENT_SERVER_ADDRESS_H_
#define MEMFLEET_AGENT_SERVER_ADDRESS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace memfleet::agent {

struct ServerAddress {
  enum class Kind { kIpv4, kIpv6, kHostName, kGrpcUri };
  Kind kind = Kind::kHostName;
  std::string host;  // without brackets; for kGrpcUri the whole --server text
  std::string port;  // digits; empty for kGrpcUri
};

// --server as HOST:PORT, IPV4:PORT, [IPV6]:PORT, or a gRPC address URI with a literal (ipv4:, ipv6:,
// unix:). An error names what is wrong (no port, a port out of range, an empty host).
absl::StatusOr<ServerAddress> ParseServerAddress(absl::string_view server);

// Most servers one --server may list.
inline constexpr size_t kMaxServers = 8;

// --server as one address or several separated by commas, each as ParseServerAddress takes it, in the
// order the agent tries them. A text that starts with a gRPC URI scheme is one address whatever it holds
// (gRPC's ipv4:/ipv6: URIs have comma-separated lists of their own). No empty item, no address twice.
absl::StatusOr<std::vector<ServerAddress>> ParseServerList(absl::string_view servers);

// What to hand gRPC: numeric addresses as ipv4:/ipv6: URIs, so that gRPC's DNS resolver never runs.
std::string GrpcTarget(const ServerAddress& address);

// One lookup of a host name at start-up. An error says the name did not resolve and to give an address
// instead: a phone's agent can resolve no name, and failing at once beats retrying a name forever.
absl::Status CheckResolvable(const ServerAddress& address);

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_SERVER_ADDRESS_H_
