// Whether memfleet-server may listen where it was asked to: beyond loopback it needs TLS and tokens,
// or an explicit --insecure. Loopback (127.0.0.0/8, ::1, localhost, unix sockets) stays open for the
// demo and the tests. docs/security.md.
//
//   if (absl::Status s = CheckListenExposure("0.0.0.0:7070", {.tls = false, .tokens = true}); !s.ok()) ...
//
// Pure functions; thread-safe.
#ifndef MEMFLEET_SERVER_SECURITY_EXPOSURE_H_
#define MEMFLEET_SERVER_SECURITY_EXPOSURE_H_

#include <string_view>

#include "absl/status/status.h"

namespace memfleet::security {

// The host part of HOST:PORT ("[::1]:7070" -> "::1"), or a "unix:" target, is reachable only from this
// machine.
bool IsLoopbackListen(std::string_view listen);

struct Exposure {
  bool tls = false;       // --tls-cert and --tls-key given
  bool tokens = false;    // the tokens table has at least one valid token
  bool insecure = false;  // --insecure
};

// FailedPrecondition naming what to add when `listen` is beyond loopback without TLS and tokens.
absl::Status CheckListenExposure(std::string_view listen, const Exposure& exposure);

}  // namespace memfleet::security

#endif  // MEMFLEET_SERVER_SECURITY_EXPOSURE_H_
