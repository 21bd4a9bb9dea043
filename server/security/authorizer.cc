#include "server/security/authorizer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/core/grpc_status.h"

namespace memfleet::security {
namespace {

struct MethodAccess {
  std::string_view method;
  Access access;
};

// Every RPC the server offers. A new RPC must be added here or it is denied to everyone
// (tests/server/authorizer_test.cc checks every method of every linked service has an entry).
constexpr MethodAccess kMethodTable[] = {
    {"/memfleet.v1.AgentService/Connect", Access::kAgent},
    {"/memfleet.v1.QueryService/ListDevices", Access::kRead},
    {"/memfleet.v1.QueryService/GetReport", Access::kRead},
    {"/memfleet.v1.QueryService/GetProcessHistory", Access::kRead},
    {"/memfleet.v1.QueryService/GetFleet", Access::kRead},
    {"/memfleet.v1.QueryService/StartSweep", Access::kAdmin},
    {"/memfleet.v1.QueryService/Reaccount", Access::kAdmin},
    {"/memfleet.v1.BaselineService/ImportBaseline", Access::kAdmin},
    {"/memfleet.v1.AdminService/MintAgentToken", Access::kAdmin},
    {"/memfleet.v1.AdminService/RetireDevice", Access::kAdmin},
    {"/memfleet.v1.BaselineService/GetBaseline", Access::kRead},
    {"/memfleet.v1.BaselineService/CheckBaseline", Access::kRead},
    {"/memfleet.v1.BaselineService/Regressions", Access::kRead},
    {kHttpMetricsMethod, Access::kRead},
    {kHttpDashboardMethod, Access::kRead},
};

bool KindAllows(TokenKind kind, Access access) {
  switch (access) {
    case Access::kAgent:
      return kind == TokenKind::kAgent;
    case Access::kRead:
      return kind == TokenKind::kRead || kind == TokenKind::kAdmin;
    case Access::kAdmin:
      return kind == TokenKind::kAdmin;
  }
  return false;
}

std::string_view ShortMethod(std::string_view full_method) {
  size_t slash = full_method.rfind('/');
  return slash == std::string_view::npos ? full_method : full_method.substr(slash + 1);
}

}  // namespace

std::optional<Access> RequiredAccess(std::string_view full_method) {
  for (const MethodAccess& m : kMethodTable) {
    if (m.method == full_method) return m.access;
  }
  return std::nullopt;
}

std::string_view AccessName(Access access) {
  switch (access) {
    case Access::kAgent:
      return "an agent token";
    case Access::kRead:
      return "a read or admin token";
    case Access::kAdmin:
      return "an admin token";
  }
  return "?";
}

absl::StatusOr<bool> Authorizer::Enabled() const {
  if (options_.require_tokens) return true;
  absl::StatusOr<bool> any = tokens_.HasTokens();
  if (!any.ok()) {
    // Failing open would let anyone in while the database is unreadable: fail closed.
    return absl::UnavailableError(absl::StrCat("the server cannot read its tokens: ", any.status().message()));
  }
  return *any;
}

absl::StatusOr<Principal> Authorizer::Authorize(std::string_view full_method,
                                                const std::optional<std::string>& authorization) const {
  std::optional<Access> access = RequiredAccess(full_method);
  if (!access.has_value()) {
    return absl::PermissionDeniedError(
        absl::StrCat("method ", std::string(full_method), " is not in the server's access table"));
  }
  absl::StatusOr<bool> enabled = Enabled();
  if (!enabled.ok()) return enabled.status();
  if (!*enabled) return Principal();
  if (!authorization.has_value()) {
    return absl::UnauthenticatedError(
        absl::StrCat("this server requires a token: ", std::string(ShortMethod(full_method)), " needs ",
                     std::string(AccessName(*access)),
                     *access == Access::kAgent ? " (memfleet-agent --token-file FILE)"
                                               : " (memfleet --token T, --token-file FILE or $MEMFLEET_TOKEN)"));
  }
  absl::StatusOr<std::string> secret = ParseBearer(*authorization);
  if (!secret.ok()) return secret.status();
  absl::StatusOr<std::optional<storage::TokenRecord>> record = tokens_.FindTokenByHash(Sha256Hex(*secret));
  if (!record.ok()) {
    return absl::UnavailableError(absl::StrCat("the server cannot read its tokens: ", record.status().message()));
  }
  if (!record->has_value()) return absl::UnauthenticatedError("the token is not known to this server");
  const storage::TokenRecord& t = **record;
  if (!t.revoked_at.empty()) {
    return absl::UnauthenticatedError(absl::StrCat("token \"", t.name, "\" was revoked at ", t.revoked_at));
  }
  std::optional<TokenKind> kind = ParseTokenKind(t.kind);
  if (!kind.has_value()) return absl::PermissionDeniedError(absl::StrCat("token \"", t.name, "\" has no valid kind"));
  if (!KindAllows(*kind, *access)) {
    return absl::PermissionDeniedError(absl::StrCat("token \"", t.name, "\" is a ", std::string(TokenKindName(*kind)),
                                                    " token; ", std::string(ShortMethod(full_method)), " needs ",
                                                    std::string(AccessName(*access))));
  }
  Principal p;
  p.authenticated = true;
  p.token_name = t.name;
  p.kind = *kind;
  p.device_id = t.device_id;
  return p;
}

absl::Status Authorizer::StillValid(const Principal& principal) const {
  if (!principal.authenticated) return absl::OkStatus();
  absl::StatusOr<std::vector<storage::TokenRecord>> tokens = tokens_.ListTokens();
  if (!tokens.ok()) {
    return absl::UnavailableError(absl::StrCat("the server cannot read its tokens: ", tokens.status().message()));
  }
  for (const storage::TokenRecord& t : *tokens) {
    if (t.name != principal.token_name) continue;
    if (!t.revoked_at.empty()) {
      return absl::UnauthenticatedError(absl::StrCat("token \"", t.name, "\" was revoked at ", t.revoked_at));
    }
    return absl::OkStatus();
  }
  return absl::UnauthenticatedError(absl::StrCat("token \"", principal.token_name, "\" no longer exists"));
}

grpc::Status AuthorizeCall(const Authorizer& authorizer, const grpc::ServerContextBase* context,
                           std::string_view full_method, Principal* principal) {
  *principal = Principal();
  std::optional<std::string> authorization;
  const auto& metadata = context->client_metadata();
  auto it = metadata.find("authorization");
  if (it != metadata.end()) authorization = std::string(it->second.data(), it->second.size());
  absl::StatusOr<Principal> p = authorizer.Authorize(full_method, authorization);
  if (!p.ok()) return server::ToGrpcStatus(p.status());
  if (authorizer.options().agents_need_client_cert && RequiredAccess(full_method) == Access::kAgent) {
    std::shared_ptr<const grpc::AuthContext> auth = context->auth_context();
    if (auth == nullptr || !auth->IsPeerAuthenticated()) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "mutual TLS: an agent must present a client certificate signed by the server's --client-ca "
                          "(memfleet-agent --tls-cert FILE --tls-key FILE)");
    }
  }
  *principal = std::move(*p);
  return grpc::Status::OK;
}

}  // namespace memfleet::security
