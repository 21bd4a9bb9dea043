// libFuzzer target: ParseMtkRssPid on any bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "accounting/mtk_rss_pid.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<memfleet::accounting::RssPid> r = memfleet::accounting::ParseMtkRssPid(text);
  if (r.ok()) (void)r->Find(24117);
  return 0;
}
