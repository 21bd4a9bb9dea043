#include "proto/capture_digest.h"

// The low-level SHA-256 rather than EVP: the agent digests every capture it sends, and EVP's first use
// (provider and configuration loading, algorithm fetch) runs code spread over all of libcrypto, which
// then stays mapped: ~2 MB of the static agent's resident size (docs/performance.md, "Agent footprint").
// OpenSSL 3 marks these functions deprecated, not removed; the digest is the same.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include <string_view>

#include "absl/strings/cord.h"

namespace memfleet::wire {
namespace {

constexpr char kDomain[] = "memfleet capture sha256 v1";
constexpr char kMismatchPayloadUrl[] = "type.memfleet/capture-digest-mismatch";

void UpdateLength(SHA256_CTX* ctx, uint64_t n) {
  unsigned char le[8];
  for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>((n >> (8 * i)) & 0xff);
  SHA256_Update(ctx, le, sizeof(le));
}

void UpdateField(SHA256_CTX* ctx, std::string_view bytes) {
  UpdateLength(ctx, bytes.size());
  SHA256_Update(ctx, bytes.data(), bytes.size());
}

char KindTag(const capture::Node& node) {
  if (node.is_file()) return 'F';
  if (node.is_directory()) return 'D';
  return 'E';
}

}  // namespace

std::string CaptureSha256(const capture::Capture& capture) {
  static_assert(SHA256_DIGEST_LENGTH == kCaptureSha256Bytes);
  SHA256_CTX ctx;
  if (SHA256_Init(&ctx) != 1) return std::string();
  // The domain string with its NUL: the digest of a capture can never be taken for another hash of the
  // same bytes.
  SHA256_Update(&ctx, kDomain, sizeof(kDomain));
  for (const auto& [path, node] : capture.nodes()) {
    const char tag = KindTag(node);
    SHA256_Update(&ctx, &tag, 1);
    UpdateField(&ctx, path);
    UpdateField(&ctx, node.is_directory() ? std::string_view() : std::string_view(node.content));
  }
  unsigned char digest[SHA256_DIGEST_LENGTH];
  if (SHA256_Final(digest, &ctx) != 1) return std::string();
  return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

std::string HexDigest(const std::string& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(digest.size() * 2);
  for (unsigned char c : digest) {
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  }
  return out;
}

absl::Status DigestMismatchError(const std::string& message) {
  absl::Status s = absl::DataLossError(message);
  s.SetPayload(kMismatchPayloadUrl, absl::Cord("1"));
  return s;
}

bool IsDigestMismatch(const absl::Status& status) {
  return status.code() == absl::StatusCode::kDataLoss && status.GetPayload(kMismatchPayloadUrl).has_value();
}

}  // namespace memfleet::wire
