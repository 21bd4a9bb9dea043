#include "accounting/kernel_config.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "accounting/text_util.h"

namespace memfleet::accounting {
namespace {

constexpr size_t kMaxInflatedBytes = size_t{64} << 20;

bool IsGzip(absl::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

bool IsConfigNameChar(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Ends the zlib stream on every return path.
class InflateStream {
 public:
  InflateStream() = default;
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;
  ~InflateStream() {
    if (initialized_) inflateEnd(&zs_);
  }

  absl::Status Init() {
    // 16 + MAX_WBITS: a gzip wrapper (header and CRC trailer), which is what /proc/config.gz is.
    if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) {
      return absl::InternalError("kernel config: zlib inflateInit2 failed");
    }
    initialized_ = true;
    return absl::OkStatus();
  }
  z_stream& zs() { return zs_; }

 private:
  z_stream zs_{};
  bool initialized_ = false;
};

absl::StatusOr<std::string> Gunzip(absl::string_view bytes, size_t max_inflated_bytes) {
  InflateStream stream;
  MEMFLEET_RETURN_IF_ERROR(stream.Init());
  z_stream& zs = stream.zs();

  std::string out;
  char buffer[64 * 1024];
  size_t consumed = 0;  // bytes of `bytes` already handed to zlib
  zs.avail_in = 0;
  for (;;) {
    if (zs.avail_in == 0 && consumed < bytes.size()) {
      // avail_in is 32-bit: feed huge inputs in pieces.
      const size_t chunk = std::min<size_t>(bytes.size() - consumed, UINT_MAX);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + consumed));
      zs.avail_in = static_cast<uInt>(chunk);
      consumed += chunk;
    }
    zs.next_out = reinterpret_cast<Bytef*>(buffer);
    zs.avail_out = sizeof(buffer);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    const size_t produced = sizeof(buffer) - zs.avail_out;
    if (produced > max_inflated_bytes - out.size()) {
      return absl::InvalidArgumentError(absl::StrCat("kernel config: gzip inflates past ", max_inflated_bytes,
                                                     " bytes; refused (not a kernel config, or a gzip bomb)"));
    }
    out.append(buffer, produced);

    switch (rc) {
      case Z_OK:
        break;
      case Z_STREAM_END: {
        const size_t left = zs.avail_in + (bytes.size() - consumed);
        if (left == 0) return out;
        // A second gzip member (gzip concatenation) continues the text; anything else after the
        // trailer is ignored, as gzip(1) does.
        const absl::string_view rest = bytes.substr(bytes.size() - left);
        if (!IsGzip(rest)) return out;
        if (inflateReset(&zs) != Z_OK) {
          return absl::InternalError("kernel config: zlib inflateReset failed");
        }
        break;
      }
      case Z_BUF_ERROR:
        // No progress was possible: either zlib wants more input and there is none (truncated), or
        // the output buffer was full, which cannot be since we hand it an empty one each time.
        if (zs.avail_in == 0 && consumed == bytes.size()) {
          return absl::DataLossError(absl::StrCat("kernel config: gzip stream ends early after ", bytes.size(),
                                                  " bytes (truncated config.gz)"));
        }
        return absl::DataLossError("kernel config: gzip stream makes no progress (corrupt config.gz)");
      case Z_MEM_ERROR:
        return absl::ResourceExhaustedError("kernel config: zlib out of memory");
      default:  // Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_ERROR
        return absl::DataLossError(
            absl::StrCat("kernel config: corrupt gzip stream: ", zs.msg != nullptr ? zs.msg : "unknown error"));
    }
    if (rc == Z_OK && zs.avail_in == 0 && consumed == bytes.size() && zs.avail_out != 0) {
      // zlib took every byte, emptied its window and still has not seen the end of the stream.
      return absl::DataLossError(
          absl::StrCat("kernel config: gzip stream ends early after ", bytes.size(), " bytes (truncated config.gz)"));
    }
  }
}

}  // namespace

absl::StatusOr<KernelConfig> ParseKernelConfigText(std::string_view text_in) {
  const absl::string_view text(text_in.data(), text_in.size());
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError("kernel config: empty text");
  }
  KernelConfig config;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;  // includes "# CONFIG_X is not set"
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(absl::StrCat("kernel config line ", line_number,
                                                     ": expected CONFIG_NAME=value or a # comment, got \"",
                                                     Snippet(ToStd(line), 60), "\""));
    }
    const absl::string_view name = line.substr(0, eq);
    const absl::string_view value = line.substr(eq + 1);
    if (!std::all_of(name.begin(), name.end(), IsConfigNameChar)) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel config line ", line_number, ": bad option name \"", Snippet(ToStd(name), 60), "\""));
    }
    if (value.empty()) {
      // Kconfig always writes a value (strings as ""): an empty one is a cut line.
      return absl::InvalidArgumentError(
          absl::StrCat("kernel config line ", line_number, ": ", Snippet(ToStd(name), 60), " has no value"));
    }
    // A later assignment wins, as when Kconfig reads a .config.
    config.options[std::string(name)] = std::string(value);
  }
  return config;
}

absl::StatusOr<KernelConfig> ParseKernelConfigGz(std::string_view bytes_in) {
  const absl::string_view bytes(bytes_in.data(), bytes_in.size());
  return ParseKernelConfigGz(bytes_in, kMaxInflatedBytes);
}

absl::StatusOr<KernelConfig> ParseKernelConfigGz(std::string_view bytes_in, size_t max_inflated_bytes) {
  const absl::string_view bytes(bytes_in.data(), bytes_in.size());
  if (!IsGzip(bytes)) return ParseKernelConfigText(bytes_in);
  MEMFLEET_ASSIGN_OR_RETURN(const std::string text, Gunzip(bytes, max_inflated_bytes));
  return ParseKernelConfigText(text);
}

}  // namespace memfleet::accounting
