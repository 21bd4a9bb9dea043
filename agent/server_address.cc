#include "agent/server_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace memfleet::agent {
namespace {

bool IsIpv4(const std::string& host) {
  in_addr a;
  return inet_pton(AF_INET, host.c_str(), &a) == 1;
}

bool IsIpv6(const std::string& host) {
  in6_addr a;
  return inet_pton(AF_INET6, host.c_str(), &a) == 1;
}

absl::Status CheckPort(absl::string_view server, absl::string_view port) {
  uint32_t value = 0;
  bool digits = !port.empty() && std::all_of(port.begin(), port.end(), absl::ascii_isdigit);
  if (!digits || !absl::SimpleAtoi(port, &value) || value == 0 || value > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--server ", server, ": the port must be a number from 1 to 65535, as in 127.0.0.1:7070"));
  }
  return absl::OkStatus();
}

bool IsGrpcUri(absl::string_view server) {
  for (absl::string_view scheme : {"ipv4:", "ipv6:", "unix:", "unix-abstract:"}) {
    if (absl::StartsWith(server, scheme)) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<ServerAddress> ParseServerAddress(absl::string_view server) {
  ServerAddress out;
  if (IsGrpcUri(server)) {
    out.kind = ServerAddress::Kind::kGrpcUri;
    out.host = std::string(server);
    return out;
  }
  absl::string_view host, port;
  if (absl::StartsWith(server, "[")) {
    size_t close = server.find(']');
    if (close == absl::string_view::npos || close + 1 >= server.size() || server[close + 1] != ':') {
      return absl::InvalidArgumentError(absl::StrCat("--server ", server, ": an IPv6 address is [ADDRESS]:PORT"));
    }
    host = server.substr(1, close - 1);
    port = server.substr(close + 2);
  } else {
    size_t colon = server.rfind(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("--server ", server, ": no port; give HOST:PORT"));
    }
    host = server.substr(0, colon);
    port = server.substr(colon + 1);
    if (absl::StrContains(host, ':')) {
      return absl::InvalidArgumentError(
          absl::StrCat("--server ", server, ": an IPv6 address goes in brackets, [ADDRESS]:PORT"));
    }
  }
  if (host.empty()) return absl::InvalidArgumentError(absl::StrCat("--server ", server, ": no host"));
  if (absl::Status s = CheckPort(server, port); !s.ok()) return s;
  out.host = std::string(host);
  out.port = std::string(port);
  if (IsIpv4(out.host)) {
    out.kind = ServerAddress::Kind::kIpv4;
  } else if (IsIpv6(out.host)) {
    out.kind = ServerAddress::Kind::kIpv6;
  } else if (server.front() == '[') {
    return absl::InvalidArgumentError(absl::StrCat("--server ", server, ": not an IPv6 address in the brackets"));
  } else {
    out.kind = ServerAddress::Kind::kHostName;
  }
  return out;
}

absl::StatusOr<std::vector<ServerAddress>> ParseServerList(absl::string_view servers) {
  if (IsGrpcUri(servers) || !absl::StrContains(servers, ',')) {
    absl::StatusOr<ServerAddress> one = ParseServerAddress(servers);
    if (!one.ok()) return one.status();
    return std::vector<ServerAddress>{*std::move(one)};
  }
  std::vector<ServerAddress> out;
  for (absl::string_view item : absl::StrSplit(servers, ',')) {
    if (item.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--server ", servers, ": an empty address in the list; separate addresses by one comma"));
    }
    if (out.size() == kMaxServers) {
      return absl::InvalidArgumentError(absl::StrCat("--server ", servers, ": more than ", kMaxServers, " servers"));
    }
    absl::StatusOr<ServerAddress> address = ParseServerAddress(item);
    if (!address.ok()) return address.status();
    for (const ServerAddress& seen : out) {
      if (GrpcTarget(seen) == GrpcTarget(*address)) {
        return absl::InvalidArgumentError(absl::StrCat("--server ", servers, ": ", item, " is listed twice"));
      }
    }
    out.push_back(*std::move(address));
  }
  return out;
}

std::string GrpcTarget(const ServerAddress& address) {
  switch (address.kind) {
    case ServerAddress::Kind::kIpv4:
      return absl::StrCat("ipv4:", address.host, ":", address.port);
    case ServerAddress::Kind::kIpv6:
      return absl::StrCat("ipv6:[", address.host, "]:", address.port);
    case ServerAddress::Kind::kGrpcUri:
      return address.host;
    case ServerAddress::Kind::kHostName:
      break;
  }
  return absl::StrCat(address.host, ":", address.port);
}

absl::Status CheckResolvable(const ServerAddress& address) {
  if (address.kind != ServerAddress::Kind::kHostName) return absl::OkStatus();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(address.host.c_str(), address.port.c_str(), &hints, &found);
  if (found != nullptr) freeaddrinfo(found);
  if (rc == 0) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat(
      "--server ", address.host, ":", address.port, ": cannot resolve host name \"", address.host, "\" (",
      gai_strerror(rc),
      "). Give the server as an address instead, which needs no name lookup: 127.0.0.1:", address.port,
      " (on a phone, after adb reverse tcp:", address.port, " tcp:", address.port, "), A.B.C.D:", address.port,
      " or [IPV6]:", address.port, ". The static agent built for phones cannot resolve names at all."));
}

}  // namespace memfleet::agent
