#include "server/security/exposure.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace memfleet::security {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

bool IsLoopbackListen(std::string_view listen) {
  if (StartsWith(listen, "unix:") || StartsWith(listen, "unix-abstract:")) return true;
  size_t colon = listen.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string_view host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost" || host == "::1") return true;
  // 127.0.0.0/8, written as four decimal parts.
  if (!StartsWith(host, "127.")) return false;
  int parts = 2;  // "127" and the part after it
  int digits = 0;
  for (char c : host.substr(4)) {
    if (c == '.') {
      if (digits == 0) return false;
      ++parts;
      digits = 0;
    } else if (c >= '0' && c <= '9') {
      if (++digits > 3) return false;
    } else {
      return false;
    }
  }
  return parts == 4 && digits > 0;
}

absl::Status CheckListenExposure(std::string_view listen, const Exposure& exposure) {
  if (exposure.insecure || IsLoopbackListen(listen)) return absl::OkStatus();
  if (exposure.tls && exposure.tokens) return absl::OkStatus();
  std::string missing;
  if (!exposure.tls) missing = "TLS (--tls-cert FILE --tls-key FILE)";
  if (!exposure.tokens) {
    absl::StrAppend(&missing, missing.empty() ? "" : " and ",
                    "tokens (memfleet-server --db FILE token add --kind agent|read|admin --name N ...)");
  }
  return absl::FailedPreconditionError(absl::StrCat("refusing to listen on ", std::string(listen),
                                                    ", an address beyond loopback, without ", missing,
                                                    ": anyone on the network could send captures or read reports. Add ",
                                                    missing, ", or pass --insecure to accept that (docs/security.md)"));
}

}  // namespace memfleet::security
