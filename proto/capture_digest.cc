#include "proto/capture_digest.h"

#include <openssl/evp.h>

#include <memory>
#include <string_view>

#include "absl/strings/cord.h"

namespace memfleet::wire {
namespace {

constexpr char kDomain[] = "memfleet capture sha256 v1";
constexpr char kMismatchPayloadUrl[] = "type.memfleet/capture-digest-mismatch";

struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

void UpdateLength(EVP_MD_CTX* ctx, uint64_t n) {
  unsigned char le[8];
  for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>((n >> (8 * i)) & 0xff);
  EVP_DigestUpdate(ctx, le, sizeof(le));
}

void UpdateField(EVP_MD_CTX* ctx, std::string_view bytes) {
  UpdateLength(ctx, bytes.size());
  EVP_DigestUpdate(ctx, bytes.data(), bytes.size());
}

char KindTag(const capture::Node& node) {
  if (node.is_file()) return 'F';
  if (node.is_directory()) return 'D';
  return 'E';
}

}  // namespace

std::string CaptureSha256(const capture::Capture& capture) {
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (ctx == nullptr || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return std::string();
  // The domain string with its NUL: the digest of a capture can never be taken for another hash of the
  // same bytes.
  EVP_DigestUpdate(ctx.get(), kDomain, sizeof(kDomain));
  for (const auto& [path, node] : capture.nodes()) {
    const char tag = KindTag(node);
    EVP_DigestUpdate(ctx.get(), &tag, 1);
    UpdateField(ctx.get(), path);
    UpdateField(ctx.get(), node.is_directory() ? std::string_view() : std::string_view(node.content));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest, &length) != 1 || length != kCaptureSha256Bytes) return std::string();
  return std::string(reinterpret_cast<const char*>(digest), length);
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
