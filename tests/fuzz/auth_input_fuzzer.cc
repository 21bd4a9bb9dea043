// libFuzzer target for what a client controls before any authorization: the `authorization` metadata
// (ParseBearer), token names (CheckTokenName) and listen addresses (IsLoopbackListen). Besides "no crash,
// no UB", it checks the properties the server relies on.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "server/security/exposure.h"
#include "server/security/token.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::string> token = memfleet::security::ParseBearer(text);
  if (token.ok()) {
    // A parsed token is printable ASCII without spaces and bounded: safe to hash and to compare.
    if (token->empty() || token->size() > memfleet::security::kMaxTokenBytes) __builtin_trap();
    for (char c : *token) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u <= 0x20 || u >= 0x7f) __builtin_trap();
    }
    if (memfleet::security::Sha256Hex(*token).size() != 64) __builtin_trap();
  } else if (token.status().code() != absl::StatusCode::kUnauthenticated) {
    __builtin_trap();
  }
  if (memfleet::security::CheckTokenName(text).ok()) {
    if (text.empty() || text.size() > memfleet::security::kMaxTokenNameBytes) __builtin_trap();
    if (text.find_first_of("/\n\0 '\"", 0, 6) != std::string_view::npos) __builtin_trap();
  }
  if (memfleet::security::IsLoopbackListen(text)) {
    // Loopback means a unix socket, localhost, ::1 or 127.x.y.z: never the wildcard address.
    if (text.find("0.0.0.0") == 0 || text.find("[::]") == 0) __builtin_trap();
  }
  return 0;
}
