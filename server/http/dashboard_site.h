// DashboardSite: the browser dashboard of memfleet-server (--http-listen ... --dashboard; docs/
// dashboard.md). It answers one HTTP request at a time, given as plain values by the HTTP port
// (metrics_http_server.h): it authorizes it (a read token as `Authorization: Bearer`, or the session
// cookie of POST /login, or nothing on loopback without tokens, as gRPC), reads what the page needs from
// the store and has memfleet::dashboard render it. Unknown paths get 404, bad parameters 400, a store
// that cannot answer 503 — each a readable page. POST /login and POST /logout are refused (403) when the
// browser says the form came from another site (Origin, Sec-Fetch-Site): no page elsewhere can log a
// browser in with its own token, or out.
//
//   DashboardSite site(store, registry, authorizer, sessions, &baselines, fleet_or_null);
//   DashboardReply reply = site.Handle({.method = "GET", .target = "/device/pixel-1"});
//
// Thread-safe.
#ifndef MEMFLEET_SERVER_HTTP_DASHBOARD_SITE_H_
#define MEMFLEET_SERVER_HTTP_DASHBOARD_SITE_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "server/fleet/agent_registry.h"
#include "server/fleet/fleet_link.h"
#include "server/query/baseline_service.h"
#include "server/http/dashboard/target.h"
#include "server/http/dashboard_sessions.h"
#include "server/security/authorizer.h"
#include "storage/query_store.h"

namespace memfleet::server {

// The largest POST /login body the port reads (a token and a little form encoding).
inline constexpr size_t kMaxDashboardBodyBytes = 4096;

struct DashboardRequest {
  std::string method;
  std::string target;
  std::optional<std::string> authorization;  // the Authorization header, if sent
  std::string cookie;                        // the Cookie header, "" if none
  std::string host;                          // the Host header, "" if none
  std::string origin;                        // the Origin header, "" if none
  std::string sec_fetch_site;                // the Sec-Fetch-Site header, "" if none
  std::string body;                          // POST /login's form
  bool tls = false;                          // the port speaks HTTPS: the cookie is Secure
};

struct DashboardReply {
  int status = 200;
  std::string body;               // HTML
  std::string location;           // a redirect's target ("" for none)
  std::string set_cookie;         // "" for none
  bool bearer_challenge = false;  // 401 to a request that sent a token: WWW-Authenticate: Bearer
};

class DashboardSite {
 public:
  // `baselines` answers the baselines page; null: the page says the server has no baseline service.
  // `fleet`: the servers sharing the database, whose agents are online too (OnlineDevices); null: alone.
  DashboardSite(storage::QueryStore& store, const AgentRegistry& registry, const security::Authorizer& authorizer,
                DashboardSessions& sessions, BaselineService* baselines = nullptr, FleetLink* fleet = nullptr)
      : store_(store),
        registry_(registry),
        authorizer_(authorizer),
        sessions_(sessions),
        baselines_(baselines),
        fleet_(fleet) {}

  DashboardReply Handle(const DashboardRequest& request);

 private:
  // nullopt: the request may see the pages; else the reply to send instead (a redirect or a refusal).
  // `logged_in_as`: the token's name when a login's session cookie let it in ("" otherwise).
  std::optional<DashboardReply> Authenticate(const DashboardRequest& request, std::string* logged_in_as);
  DashboardReply Login(const DashboardRequest& request);
  DashboardReply Logout(const DashboardRequest& request);
  // The name of the process a kProcess target names: its own, or the one in its capture with its key.
  absl::StatusOr<std::string> ProcessNameOf(const dashboard::DashboardTarget& target);
  absl::StatusOr<std::string> FleetPage(const dashboard::DashboardTarget& target);
  absl::StatusOr<std::string> DevicePage(const dashboard::DashboardTarget& target);
  absl::StatusOr<std::string> ProcessPage(const dashboard::DashboardTarget& target);
  // The process name `typed` means in the device's latest report, as `memfleet process` resolves it.
  absl::StatusOr<std::string> ResolveProcessOfLatest(const std::string& device_id, const std::string& typed);
  absl::StatusOr<std::string> BaselinesPage(const dashboard::DashboardTarget& target);

  storage::QueryStore& store_;
  const AgentRegistry& registry_;
  const security::Authorizer& authorizer_;
  DashboardSessions& sessions_;
  BaselineService* const baselines_;
  FleetLink* const fleet_;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_HTTP_DASHBOARD_SITE_H_
