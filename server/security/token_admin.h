// The `memfleet-server token add|list|revoke` subcommands, on a TokenStore: the secret is made here, printed
// once by the caller, and only its SHA-256 is stored. docs/security.md.
//
//   absl::StatusOr<std::string> secret = AddToken(store, {"bench-3", TokenKind::kAgent, "bench-3"}, now);
//   absl::StatusOr<std::string> table = ListTokensText(store);   // names, kinds, devices; never secrets
//   absl::Status s = RevokeToken(store, "bench-3", now);         // NotFound when no valid token has it
//
// Thread-safe as the store is.
#ifndef MEMFLEET_SERVER_SECURITY_TOKEN_ADMIN_H_
#define MEMFLEET_SERVER_SECURITY_TOKEN_ADMIN_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/security/token.h"
#include "storage/token_store.h"

namespace memfleet::security {

struct NewToken {
  std::string name;
  TokenKind kind = TokenKind::kRead;
  std::string device_id;  // required for agent tokens, refused for the others
};

// Returns the secret. InvalidArgument for a bad name/device id, AlreadyExists for a taken name.
absl::StatusOr<std::string> AddToken(storage::TokenStore& store, const NewToken& token, const std::string& now);
// One line per token: name, kind, device, created, revoked (or "valid").
absl::StatusOr<std::string> ListTokensText(storage::TokenStore& store);
absl::Status RevokeToken(storage::TokenStore& store, const std::string& name, const std::string& now);
// Revokes every valid agent token bound to `device_id` (a device retired from the farm: its phone may no
// longer stream); returns their names, by name. Read and admin tokens are never bound to a device.
absl::StatusOr<std::vector<std::string>> RevokeDeviceAgentTokens(storage::TokenStore& store,
                                                                 const std::string& device_id, const std::string& now);

// The agent token a device's phone is to hold (`memfleet agents deploy --mint-tokens`).
struct MintedAgentToken {
  std::string secret;        // new; "" when the phone's current token stays
  std::string name;          // the token the phone holds from now on
  std::string revoked_name;  // the one rotation revoked ("" none)
};
// Keeps `current_secret` when it is a valid agent token of `device_id` and !rotate; otherwise adds a new
// agent token bound to the device, named "agent-DEVICE" (then "-2", "-3", ...: names stay taken), and with
// `rotate` revokes the current one. InvalidArgument for a bad device id.
absl::StatusOr<MintedAgentToken> MintAgentToken(storage::TokenStore& store, const std::string& device_id,
                                                const std::string& current_secret, bool rotate, const std::string& now);

}  // namespace memfleet::security

#endif  // MEMFLEET_SERVER_SECURITY_TOKEN_ADMIN_H_
