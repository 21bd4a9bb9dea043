// DashboardSessions: the browser dashboard's logins. POST /login with a read token makes a session: a
// random value the browser keeps in an HttpOnly cookie, while the token stays in the server's memory. A
// later request with the cookie is authorized with that token again, so a revoked token ends its
// sessions at once; POST /logout ends one. Sessions last `lifetime` and die with the server. Each token
// keeps at most `per_token` (its own oldest makes room for its next), and the server at most `capacity`:
// when all are taken a new login is refused until some end, so no token's logins can end another
// token's session.
//
//   DashboardSessions sessions(RealSteadyClock());
//   absl::StatusOr<std::string> id = sessions.Create(token);   // the cookie value
//   std::optional<std::string> token = sessions.TokenOf(*id);   // nullopt: unknown or expired
//   sessions.Drop(*id);                                          // logged out
//
// Thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_DASHBOARD_SESSIONS_H_
#define MEMFLEET_SERVER_HTTP_DASHBOARD_SESSIONS_H_

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/core/clock.h"

namespace memfleet::server {

// The cookie's name: over HTTPS with the __Host- prefix, which makes the browser keep it only when it is
// Secure, for Path=/ and this host alone (no Domain), so no sibling host can set or shadow it.
inline constexpr char kDashboardSessionCookie[] = "memfleet_session";
inline constexpr char kDashboardSessionCookieTls[] = "__Host-memfleet_session";
inline const char* DashboardSessionCookie(bool tls) {
  return tls ? kDashboardSessionCookieTls : kDashboardSessionCookie;
}

// A session value: this prefix and 256 random bits in hex. Not a token's "mft_": it is no token.
inline constexpr char kDashboardSessionPrefix[] = "mfs_";

class DashboardSessions {
 public:
  explicit DashboardSessions(SteadyClock& clock, std::chrono::seconds lifetime = std::chrono::hours(12),
                             size_t capacity = 1024, size_t per_token = 16)
      : clock_(clock), lifetime_(lifetime), capacity_(capacity), per_token_(per_token) {}

  // A new session for `token`, ending the token's oldest when it has per_token already. Unavailable when
  // the OS gives no random bytes; ResourceExhausted when `capacity` sessions of other tokens are open.
  absl::StatusOr<std::string> Create(const std::string& token) ABSL_LOCKS_EXCLUDED(mu_);
  std::optional<std::string> TokenOf(const std::string& session) ABSL_LOCKS_EXCLUDED(mu_);
  void Drop(const std::string& session) ABSL_LOCKS_EXCLUDED(mu_);
  std::chrono::seconds lifetime() const { return lifetime_; }

 private:
  struct Session {
    std::string token;
    std::chrono::steady_clock::time_point expires;
  };
  void DropExpiredLocked(std::chrono::steady_clock::time_point now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The token's oldest session when it holds per_token_ of them; sessions_.end() otherwise.
  std::map<std::string, Session>::iterator OldestIfFullLocked(const std::string& token)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  SteadyClock& clock_;
  const std::chrono::seconds lifetime_;
  const size_t capacity_;
  const size_t per_token_;
  absl::Mutex mu_;
  std::map<std::string, Session> sessions_ ABSL_GUARDED_BY(mu_);  // by the cookie value
};

// The value of cookie `name` in a Cookie header ("a=1; memfleet_session=..."); "" when absent.
std::string CookieValue(const std::string& cookie_header, const std::string& name);

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_HTTP_DASHBOARD_SESSIONS_H_
