#include "server/http/dashboard_sessions.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/security/token.h"

namespace memfleet::server {

absl::StatusOr<std::string> DashboardSessions::Create(const std::string& token) {
  absl::StatusOr<std::string> id = security::NewRandomSecret(kDashboardSessionPrefix);
  if (!id.ok()) return id.status();
  const auto now = clock_.Now();
  absl::MutexLock lock(&mu_);
  DropExpiredLocked(now);
  if (auto oldest = OldestIfFullLocked(token); oldest != sessions_.end()) {
    sessions_.erase(oldest);
  } else if (sessions_.size() >= capacity_) {
    return absl::ResourceExhaustedError(absl::StrCat("the dashboard holds ", sessions_.size(),
                                                     " sessions, its most: log in again once some have ended, or send "
                                                     "the token as an Authorization: Bearer header"));
  }
  sessions_[*id] = Session{token, now + lifetime_};
  return id;
}

std::map<std::string, DashboardSessions::Session>::iterator DashboardSessions::OldestIfFullLocked(
    const std::string& token) {
  size_t held = 0;
  auto oldest = sessions_.end();
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->second.token != token) continue;
    ++held;
    if (oldest == sessions_.end() || it->second.expires < oldest->second.expires) oldest = it;
  }
  return held >= per_token_ ? oldest : sessions_.end();
}

std::optional<std::string> DashboardSessions::TokenOf(const std::string& session) {
  const auto now = clock_.Now();
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return std::nullopt;
  if (it->second.expires <= now) {
    sessions_.erase(it);
    return std::nullopt;
  }
  return it->second.token;
}

void DashboardSessions::Drop(const std::string& session) {
  absl::MutexLock lock(&mu_);
  sessions_.erase(session);
}

void DashboardSessions::DropExpiredLocked(std::chrono::steady_clock::time_point now) {
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    it = it->second.expires <= now ? sessions_.erase(it) : std::next(it);
  }
}

std::string CookieValue(const std::string& cookie_header, const std::string& name) {
  for (absl::string_view pair : absl::StrSplit(cookie_header, ';')) {
    pair = absl::StripAsciiWhitespace(pair);
    if (absl::ConsumePrefix(&pair, name) && absl::ConsumePrefix(&pair, "=")) return std::string(pair);
  }
  return "";
}

}  // namespace memfleet::server
