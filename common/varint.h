// Variable-length integers as protobuf writes them (7 bits a byte, least significant first, the high bit
// set on every byte but the last) and zigzag for signed ones (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...), for
// compact binary records.
//
//   std::string out;
//   AppendVarint(out, ZigZag(-3));
//   std::string_view in = out;
//   std::optional<uint64_t> v = ReadVarint(in);   // consumes the bytes it read; UnZigZag(*v) == -3
//
// Header-only; pure.
#ifndef MEMFLEET_COMMON_VARINT_H_
#define MEMFLEET_COMMON_VARINT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memfleet {

inline void AppendVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// The varint at the front of `in`, which loses its bytes; nullopt (and `in` unchanged) when `in` ends
// inside it or it is longer than 10 bytes or overflows 64 bits.
inline std::optional<uint64_t> ReadVarint(std::string_view& in) {
  uint64_t v = 0;
  for (size_t i = 0; i < in.size() && i < 10; ++i) {
    const uint64_t byte = static_cast<unsigned char>(in[i]);
    if (i == 9 && byte > 1) return std::nullopt;  // past 64 bits
    v |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      in.remove_prefix(i + 1);
      return v;
    }
  }
  return std::nullopt;
}

inline uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }

inline int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

}  // namespace memfleet

#endif  // MEMFLEET_COMMON_VARINT_H_
