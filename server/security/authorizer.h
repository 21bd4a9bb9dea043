// Authorizer: who may call what. Every gRPC handler asks it first (AuthorizeCall) with its full method
// name; the access table (RequiredAccess) says which token kind a method needs, and a method missing from
// the table is denied. Tokens are looked up by hash in the store on every call, so a token revoked with
// `memfleet-server token revoke` (even from another process) is refused on the next call. docs/security.md.
//
//   Authorizer auth(store, {.require_tokens = !loopback});
//   Principal who;
//   if (grpc::Status s = AuthorizeCall(auth, context, kConnectMethod, &who); !s.ok()) return s;
//
// Authentication is on when require_tokens is set (the server listens beyond loopback) or when the
// tokens table has any row; otherwise every call is allowed (the loopback demo and tests). A token store
// that cannot answer refuses the call (Unavailable), never lets it through. Thread-safe.
#ifndef MEMFLEET_SERVER_SECURITY_AUTHORIZER_H_
#define MEMFLEET_SERVER_SECURITY_AUTHORIZER_H_

#include <grpcpp/grpcpp.h>

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/security/token.h"
#include "storage/token_store.h"

namespace memfleet::security {

// The access-table name of memfleet-server's HTTP endpoint (--http-listen): a read or admin token.
inline constexpr char kHttpMetricsMethod[] = "HTTP GET /metrics";
// The browser dashboard on the same port (--dashboard): a read or admin token, or its session cookie.
inline constexpr char kHttpDashboardMethod[] = "HTTP GET /";

// What a method needs: an agent token, a read (or admin) token, an admin token.
enum class Access { kAgent, kRead, kAdmin };

// By full gRPC method name ("/memfleet.v1.QueryService/StartSweep"); nullopt: not in the table (denied).
std::optional<Access> RequiredAccess(std::string_view full_method);
std::string_view AccessName(Access access);

struct Principal {
  bool authenticated = false;  // false: auth is off and the call was let through
  std::string token_name;
  TokenKind kind = TokenKind::kRead;
  std::string device_id;  // agent tokens: the device it may speak for
};

struct AuthorizerOptions {
  bool require_tokens = false;           // on even with an empty tokens table
  bool agents_need_client_cert = false;  // mutual TLS: agent streams must present a verified certificate
};

class Authorizer {
 public:
  // Over the token store only: a store that cannot answer (an error) makes every call refused.
  Authorizer(storage::TokenStore& tokens, AuthorizerOptions options) : tokens_(tokens), options_(options) {}

  const AuthorizerOptions& options() const { return options_; }

  // The decision for one call: `authorization` is the metadata value (nullopt: none sent).
  // Unauthenticated: no, malformed, unknown or revoked token; PermissionDenied: the token's kind may not
  // call the method, or the method is unknown; Unavailable: the store could not be read.
  absl::StatusOr<Principal> Authorize(std::string_view full_method,
                                      const std::optional<std::string>& authorization) const;
  // OK while the principal's token is still valid (long agent streams re-check it per capture).
  absl::Status StillValid(const Principal& principal) const;

 private:
  absl::StatusOr<bool> Enabled() const;

  storage::TokenStore& tokens_;
  const AuthorizerOptions options_;
};

// Authorize for a gRPC call: reads `authorization` from the client metadata and, for agent methods with
// agents_need_client_cert, checks the TLS peer was verified. There is no "no authorizer": every service
// is built over one, so no wiring mistake can leave a service open.
grpc::Status AuthorizeCall(const Authorizer& authorizer, const grpc::ServerContextBase* context,
                           std::string_view full_method, Principal* principal);

}  // namespace memfleet::security

#endif  // MEMFLEET_SERVER_SECURITY_AUTHORIZER_H_
