// Access tokens as the server sees them: a fresh secret, its SHA-256 (all the store keeps), the three
// kinds, and the `authorization: Bearer <token>` metadata value clients send. docs/security.md.
//
//   absl::StatusOr<std::string> secret = NewTokenSecret();      // "mft_3f9c...": printed once, never stored
//   std::string hash = Sha256Hex(*secret);                      // what the tokens table holds
//   absl::StatusOr<std::string> t = ParseBearer("Bearer mft_3f9c...");
//
// Pure functions (NewTokenSecret reads the OS random source through OpenSSL); thread-safe.
#ifndef MEMFLEET_SERVER_SECURITY_TOKEN_H_
#define MEMFLEET_SERVER_SECURITY_TOKEN_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace memfleet::security {

enum class TokenKind { kAgent, kRead, kAdmin };

inline constexpr char kTokenPrefix[] = "mft_";
inline constexpr size_t kMaxTokenBytes = 256;
inline constexpr size_t kMaxTokenNameBytes = 64;

// "agent" | "read" | "admin" (as stored and as `token add --kind` takes them).
std::string_view TokenKindName(TokenKind kind);
std::optional<TokenKind> ParseTokenKind(std::string_view name);

// Lowercase hex SHA-256 of `text` (64 characters).
std::string Sha256Hex(std::string_view text);

// "mft_" + 64 hex digits of 32 random bytes (256 bits: no salt or slow hash needed, nothing to guess).
absl::StatusOr<std::string> NewTokenSecret();

// `prefix` + 64 hex digits of 32 random bytes: a secret that is not a token (a dashboard session) with a
// prefix of its own, so nobody (nor a secret scanner) takes one for the other.
absl::StatusOr<std::string> NewRandomSecret(std::string_view prefix);

// A token name: 1..kMaxTokenNameBytes of [A-Za-z0-9._-].
absl::Status CheckTokenName(std::string_view name);

// The token of an `authorization` metadata value "Bearer <token>" (scheme case-insensitive). Errors say
// what is wrong without echoing the secret.
absl::StatusOr<std::string> ParseBearer(std::string_view authorization);

}  // namespace memfleet::security

#endif  // MEMFLEET_SERVER_SECURITY_TOKEN_H_
