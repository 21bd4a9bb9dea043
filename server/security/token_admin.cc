#include "server/security/token_admin.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"

namespace memfleet::security {
namespace {

// The server's device id alphabet (server/core/validation.h), kept here so this library does not depend on
// the server library it is part of.
absl::Status CheckTokenDeviceId(const std::string& id) {
  if (id.empty() || id.size() > 128) return absl::InvalidArgumentError("--device-id has 1 to 128 characters");
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-' || c == ':' || c == '@' || c == '+';
    if (!ok) return absl::InvalidArgumentError("--device-id has a character outside [A-Za-z0-9._:@+-]");
  }
  return absl::OkStatus();
}

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

}  // namespace

absl::StatusOr<std::string> AddToken(storage::TokenStore& store, const NewToken& token, const std::string& now) {
  if (absl::Status s = CheckTokenName(token.name); !s.ok()) return s;
  if (token.kind == TokenKind::kAgent) {
    if (token.device_id.empty()) {
      return absl::InvalidArgumentError("an agent token is for one device: add --device-id D");
    }
    if (absl::Status s = CheckTokenDeviceId(token.device_id); !s.ok()) return s;
  } else if (!token.device_id.empty()) {
    return absl::InvalidArgumentError("--device-id is only for agent tokens");
  }
  absl::StatusOr<std::string> secret = NewTokenSecret();
  if (!secret.ok()) return secret.status();
  storage::TokenRecord record;
  record.name = token.name;
  record.kind = std::string(TokenKindName(token.kind));
  record.device_id = token.device_id;
  record.sha256_hex = Sha256Hex(*secret);
  record.created_at = now;
  if (absl::Status s = store.PutToken(record); !s.ok()) return s;
  return secret;
}

absl::StatusOr<std::string> ListTokensText(storage::TokenStore& store) {
  absl::StatusOr<std::vector<storage::TokenRecord>> tokens = store.ListTokens();
  if (!tokens.ok()) return tokens.status();
  // Each column as wide as its widest cell, one space between: a stored time ("...:00.000Z") is longer
  // than the one typed, and a kind or name of any length keeps the columns under their headings.
  size_t name_width = 4, kind_width = 4, device_width = 6, created_width = 7;
  for (const storage::TokenRecord& t : *tokens) {
    name_width = std::max(name_width, t.name.size());
    kind_width = std::max(kind_width, t.kind.size());
    device_width = std::max(device_width, t.device_id.size());
    created_width = std::max(created_width, t.created_at.size());
  }
  std::string out = absl::StrCat(Pad("NAME", name_width + 1), Pad("KIND", kind_width + 1),
                                 Pad("DEVICE", device_width + 1), Pad("CREATED", created_width + 1), "STATE\n");
  for (const storage::TokenRecord& t : *tokens) {
    absl::StrAppend(&out, Pad(t.name, name_width + 1), Pad(t.kind, kind_width + 1),
                    Pad(t.device_id.empty() ? "-" : t.device_id, device_width + 1),
                    Pad(t.created_at, created_width + 1),
                    t.revoked_at.empty() ? "valid" : absl::StrCat("revoked ", t.revoked_at), "\n");
  }
  return out;
}

absl::Status RevokeToken(storage::TokenStore& store, const std::string& name, const std::string& now) {
  absl::StatusOr<bool> revoked = store.RevokeToken(name, now);
  if (!revoked.ok()) return revoked.status();
  if (!*revoked) {
    return absl::NotFoundError(absl::StrCat("no valid token named \"", name, "\" (see `token list`)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> RevokeDeviceAgentTokens(storage::TokenStore& store,
                                                                 const std::string& device_id, const std::string& now) {
  absl::StatusOr<std::vector<storage::TokenRecord>> tokens = store.ListTokens();
  if (!tokens.ok()) return tokens.status();
  std::vector<std::string> revoked;
  for (const storage::TokenRecord& t : *tokens) {
    if (t.kind != TokenKindName(TokenKind::kAgent) || t.device_id != device_id || !t.revoked_at.empty()) continue;
    absl::StatusOr<bool> done = store.RevokeToken(t.name, now);
    if (!done.ok()) return done.status();
    if (*done) revoked.push_back(t.name);  // false: revoked meanwhile by another caller
  }
  return revoked;
}

namespace {

// "agent-" and the device id in the token name alphabet, short enough for a "-NNN" suffix.
std::string MintedTokenBase(const std::string& device_id) {
  std::string base = "agent-";
  for (char c : device_id.substr(0, kMaxTokenNameBytes - 10)) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    base.push_back(ok ? c : '_');
  }
  return base;
}

}  // namespace

absl::StatusOr<MintedAgentToken> MintAgentToken(storage::TokenStore& store, const std::string& device_id,
                                                const std::string& current_secret, bool rotate,
                                                const std::string& now) {
  if (absl::Status s = CheckTokenDeviceId(device_id); !s.ok()) return s;
  std::optional<storage::TokenRecord> current;
  if (!current_secret.empty()) {
    absl::StatusOr<std::optional<storage::TokenRecord>> found = store.FindTokenByHash(Sha256Hex(current_secret));
    if (!found.ok()) return found.status();
    if (found->has_value() && (*found)->revoked_at.empty() && (*found)->kind == TokenKindName(TokenKind::kAgent) &&
        (*found)->device_id == device_id) {
      current = **found;
    }
  }
  MintedAgentToken minted;
  if (current.has_value() && !rotate) {
    minted.name = current->name;
    return minted;
  }
  const std::string base = MintedTokenBase(device_id);
  for (int n = 1; n <= 1000 && minted.secret.empty(); ++n) {
    const std::string name = n == 1 ? base : absl::StrCat(base, "-", n);
    absl::StatusOr<std::string> secret = AddToken(store, {name, TokenKind::kAgent, device_id}, now);
    if (absl::IsAlreadyExists(secret.status())) continue;
    if (!secret.ok()) return secret.status();
    minted.secret = *secret;
    minted.name = name;
  }
  if (minted.secret.empty()) return absl::ResourceExhaustedError("1000 agent tokens of this device already exist");
  if (current.has_value()) {
    if (absl::Status s = RevokeToken(store, current->name, now); !s.ok()) return s;
    minted.revoked_name = current->name;
  }
  return minted;
}

}  // namespace memfleet::security
