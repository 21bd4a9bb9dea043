#include "server/http/dashboard/message_page.h"

#include "absl/strings/str_cat.h"
#include "server/http/dashboard/html.h"

namespace memfleet::dashboard {

std::string RenderLoginPage(absl::string_view problem) {
  return HtmlPage(
      "Log in",
      absl::StrCat("<h1>Log in</h1>\n",
                   problem.empty() ? "" : absl::StrCat("<p class=\"warn\">", Html(problem), "</p>\n"),
                   "<p>Paste a read token (<code>memfleet-server token add --kind read</code>). The browser keeps a "
                   "session cookie, not the token.</p>\n<form method=\"post\" action=\"/login\">"
                   "<input type=\"password\" name=\"token\" autocomplete=\"off\" size=\"60\"> "
                   "<button type=\"submit\">Log in</button></form>\n"));
}

std::string RenderMessagePage(int status, absl::string_view message) {
  return HtmlPage(absl::StrCat("Error ", status),
                  absl::StrCat("<h1>", status, "</h1>\n<p class=\"warn\">", Html(message),
                               "</p>\n<p><a href=\"/\">Back to the fleet</a></p>\n"));
}

}  // namespace memfleet::dashboard
