#include "server/security/token.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace memfleet::security {
namespace {

std::string Hex(const unsigned char* bytes, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xf]);
  }
  return out;
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

}  // namespace

std::string_view TokenKindName(TokenKind kind) {
  switch (kind) {
    case TokenKind::kAgent:
      return "agent";
    case TokenKind::kRead:
      return "read";
    case TokenKind::kAdmin:
      return "admin";
  }
  return "unknown";
}

std::optional<TokenKind> ParseTokenKind(std::string_view name) {
  if (name == "agent") return TokenKind::kAgent;
  if (name == "read") return TokenKind::kRead;
  if (name == "admin") return TokenKind::kAdmin;
  return std::nullopt;
}

std::string Sha256Hex(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // EVP_Digest cannot fail for SHA-256 on in-memory input short of allocation failure.
  if (EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr) != 1) return std::string();
  return Hex(digest, length);
}

absl::StatusOr<std::string> NewTokenSecret() { return NewRandomSecret(kTokenPrefix); }

absl::StatusOr<std::string> NewRandomSecret(std::string_view prefix) {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    return absl::UnavailableError("the system random source gave no bytes; cannot make a secret");
  }
  return std::string(prefix) + Hex(bytes, sizeof(bytes));
}

absl::Status CheckTokenName(std::string_view name) {
  if (name.empty() || name.size() > kMaxTokenNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a token name has 1 to ", kMaxTokenNameBytes, " characters of [A-Za-z0-9._-]"));
  }
  for (char c : name) {
    if (!IsNameChar(c)) {
      return absl::InvalidArgumentError("a token name has only the characters [A-Za-z0-9._-]");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ParseBearer(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() < kScheme.size() ||
      absl::AsciiStrToLower(std::string(authorization.substr(0, kScheme.size()))) != kScheme) {
    return absl::UnauthenticatedError("the authorization metadata is not \"Bearer <token>\"");
  }
  std::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && (token.back() == ' ' || token.back() == '\r' || token.back() == '\n')) {
    token.remove_suffix(1);
  }
  if (token.empty()) return absl::UnauthenticatedError("the authorization metadata has an empty token");
  if (token.size() > kMaxTokenBytes) return absl::UnauthenticatedError("the token is too long to be a memfleet token");
  for (char c : token) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) return absl::UnauthenticatedError("the token has a character no memfleet token has");
  }
  return std::string(token);
}

}  // namespace memfleet::security
