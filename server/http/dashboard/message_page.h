// The dashboard's login form and its error pages (400, 404, 401 ...): short pages that say what went
// wrong and link back to the fleet. The message is escaped; it may quote what the user typed.
//
//   std::string html = RenderLoginPage("");                     // the form
//   std::string bad = RenderMessagePage(400, "cannot sort by \"x\"");
//
// Pure; thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_DASHBOARD_MESSAGE_PAGE_H_
#define MEMFLEET_SERVER_HTTP_DASHBOARD_MESSAGE_PAGE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace memfleet::dashboard {

// A form POSTing `token` to /login; `problem` ("" for none) is shown above it.
std::string RenderLoginPage(absl::string_view problem);

std::string RenderMessagePage(int status, absl::string_view message);

}  // namespace memfleet::dashboard

#endif  // MEMFLEET_SERVER_HTTP_DASHBOARD_MESSAGE_PAGE_H_
