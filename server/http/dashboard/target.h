// Which dashboard page a request target names, with its path segments and query (or form) parameters
// percent-decoded under bounds: "/", "/device/<id>", "/device/<id>/process/<name>",
// "/device/<id>/capture/<capture id>/process/<name key>", "/baselines", "/login", "/logout". A target
// that cannot be decoded is InvalidArgument with a reason fit for a 400 page; a path no page has is
// kNotFound.
//
//   absl::StatusOr<DashboardTarget> t = ParseDashboardTarget("/device/pixel%2D1?window=7d");
//   // t->page == DashboardPage::kDevice, t->device_id == "pixel-1", t->Param("window") == "7d"
//
// Pure; thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_DASHBOARD_TARGET_H_
#define MEMFLEET_SERVER_HTTP_DASHBOARD_TARGET_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace memfleet::dashboard {

inline constexpr size_t kMaxDecodedBytes = 1024;  // per path segment, parameter name or value
inline constexpr size_t kMaxParameters = 32;

enum class DashboardPage { kFleet, kDevice, kProcess, kBaselines, kLogin, kLogout, kNotFound };

using Parameters = std::vector<std::pair<std::string, std::string>>;

struct DashboardTarget {
  DashboardPage page = DashboardPage::kNotFound;
  std::string device_id;     // kDevice, kProcess
  std::string process_name;  // kProcess named by its name
  std::string capture_id;    // kProcess named by a stored capture that holds the name, and its key
  std::string process_key;   //   ProcessKey(name)
  Parameters query;          // in order; a name may repeat (where=...&where=...)

  // The last value of `name`, "" when absent.
  std::string Param(absl::string_view name) const;
  // Every value of `name`, in order.
  std::vector<std::string> Params(absl::string_view name) const;
};

// %XX and (in queries) '+' as space. InvalidArgument: a broken escape, a NUL, or more than max_bytes.
absl::StatusOr<std::string> PercentDecode(absl::string_view text, bool plus_is_space, size_t max_bytes);

// name=value pairs joined by '&' (a query string or an application/x-www-form-urlencoded body).
absl::StatusOr<Parameters> ParseParameters(absl::string_view text);

absl::StatusOr<DashboardTarget> ParseDashboardTarget(absl::string_view target);

// A short stand-in for a process name in a link: 16 lowercase hex digits (FNV-1a, 64 bits) of the name.
// A command line may be thousands of bytes, which no address can carry; the page finds the name again in
// the capture the link names. Not a secret and not collision-proof: a capture holds one device's names,
// all from its own agent.
std::string ProcessKey(absl::string_view process_name);

}  // namespace memfleet::dashboard

#endif  // MEMFLEET_SERVER_HTTP_DASHBOARD_TARGET_H_
