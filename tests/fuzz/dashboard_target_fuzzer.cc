// libFuzzer target for the dashboard's request targets and login form (server/http/dashboard/target.h): the
// routing and the bounded percent-decoding. Besides "no crash, no UB", it checks the bounds the HTTP
// shell relies on, and that escaping anything decoded leaves no markup (html.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "server/http/dashboard/html.h"
#include "server/http/dashboard/target.h"

namespace {

void CheckDecoded(const std::string& text) {
  if (text.size() > memfleet::dashboard::kMaxDecodedBytes) __builtin_trap();
  if (text.find('\0') != std::string::npos) __builtin_trap();
  const std::string html = memfleet::dashboard::Html(text);
  if (html.find_first_of("<>\"'") != std::string::npos) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<memfleet::dashboard::DashboardTarget> target = memfleet::dashboard::ParseDashboardTarget(text);
  if (target.ok()) {
    if (target->query.size() > memfleet::dashboard::kMaxParameters) __builtin_trap();
    CheckDecoded(target->device_id);
    CheckDecoded(target->process_name);
    for (const auto& [name, value] : target->query) {
      CheckDecoded(name);
      CheckDecoded(value);
    }
    const bool named = target->page == memfleet::dashboard::DashboardPage::kDevice ||
                       target->page == memfleet::dashboard::DashboardPage::kProcess;
    if (named && target->device_id.empty()) __builtin_trap();
  }
  absl::StatusOr<memfleet::dashboard::Parameters> form = memfleet::dashboard::ParseParameters(text);
  if (form.ok() && form->size() > memfleet::dashboard::kMaxParameters) __builtin_trap();
  // An encoded component never carries a separator of the address.
  const std::string encoded = memfleet::dashboard::UrlComponent(text);
  if (encoded.find_first_of("/?&=# ") != std::string::npos) __builtin_trap();
  return 0;
}
