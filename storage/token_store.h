// TokenStore: access tokens as stored — never the secret, only its SHA-256 (docs/security.md). The
// Authorizer reads it on every call. Every method is pure and there is no "no tokens" default: a store
// that cannot answer returns an error, and the Authorizer then refuses the call.
#ifndef MEMFLEET_STORAGE_TOKEN_STORE_H_
#define MEMFLEET_STORAGE_TOKEN_STORE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace memfleet::storage {

struct TokenRecord {
  std::string name;        // unique, chosen by the admin ("bench-3", "ci-reader")
  std::string kind;        // "agent" | "read" | "admin"
  std::string device_id;   // agent tokens: the one device the token may speak for; "" otherwise
  std::string sha256_hex;  // lowercase hex SHA-256 of the secret
  std::string created_at;  // RFC 3339
  std::string revoked_at;  // "" while the token is valid
};

class TokenStore {
 public:
  virtual ~TokenStore() = default;

  // AlreadyExists when the name is taken (revoked names stay taken).
  virtual absl::Status PutToken(const TokenRecord& token) = 0;
  // The token (valid or revoked) whose secret hashes to sha256_hex; nullopt: none.
  virtual absl::StatusOr<std::optional<TokenRecord>> FindTokenByHash(const std::string& sha256_hex) = 0;
  // Every token, revoked ones included, by name.
  virtual absl::StatusOr<std::vector<TokenRecord>> ListTokens() = 0;
  // True when any token row exists (revoked included): authentication is then on.
  virtual absl::StatusOr<bool> HasTokens() = 0;
  // Sets revoked_at; false when no valid token has that name.
  virtual absl::StatusOr<bool> RevokeToken(const std::string& name, const std::string& revoked_at) = 0;
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_TOKEN_STORE_H_
