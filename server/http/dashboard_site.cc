#include "server/http/dashboard_site.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/process_name_match.h"
#include "common/utc_time.h"
#include "report/report_json.h"
#include "server/core/clock.h"
#include "server/http/dashboard/baselines_page.h"
#include "server/http/dashboard/device_page.h"
#include "server/http/dashboard/fleet_page.h"
#include "server/http/dashboard/html.h"
#include "server/http/dashboard/message_page.h"
#include "server/http/dashboard/process_page.h"
#include "report/process_figure.h"
#include "selector/selector.h"
#include "server/fleet/selected_devices.h"
#include "server/query/process_report_history.h"
#include "server/query/query_service.h"

namespace memfleet::server {
namespace {

using dashboard::DashboardPage;
using dashboard::DashboardTarget;

constexpr int kDefaultTrendDays = 30;
constexpr int kMaxTrendDays = 3650;
constexpr uint32_t kMaxTrendPoints = 5000;
// The App Summary chart reads a stored report per point (server/query/process_report_history.h).
constexpr uint32_t kMaxSummaryPoints = 500;
constexpr int kSparklineDays = 7;

DashboardReply Page(int status, std::string body) {
  DashboardReply reply;
  reply.status = status;
  reply.body = std::move(body);
  return reply;
}

DashboardReply Message(int status, absl::string_view message) {
  return Page(status, dashboard::RenderMessagePage(status, message));
}

DashboardReply Redirect(std::string location) {
  DashboardReply reply = Page(303, "");
  reply.location = std::move(location);
  return reply;
}

// A failed read or a bad parameter as a page: 400 for the user's mistake, 404 for what is not there,
// 503 when the store cannot answer.
DashboardReply ErrorPage(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      return Message(400, status.message());
    case absl::StatusCode::kNotFound:
      return Message(404, status.message());
    default:
      return Message(503, absl::StrCat("the store cannot answer now: ", status.message()));
  }
}

// The refusal of an authorization that failed: 401 (with the Bearer challenge when a token was sent),
// 403, or 503 when the tokens cannot be read — never a pass.
DashboardReply Refusal(const absl::Status& status, bool sent_token) {
  if (status.code() == absl::StatusCode::kUnauthenticated) {
    DashboardReply reply = Page(401, dashboard::RenderLoginPage(status.message()));
    reply.bearer_challenge = sent_token;
    return reply;
  }
  if (status.code() == absl::StatusCode::kPermissionDenied) return Message(403, status.message());
  return Message(503, status.message());
}

// `online`: OnlineDevices' answer, so the marks are those of `memfleet devices` and /metrics.
dashboard::FleetDevice FleetDeviceOf(const storage::DeviceRecord& d, const std::map<std::string, std::string>& online) {
  dashboard::FleetDevice row;
  row.device_id = d.device_id;
  row.model = d.model;
  row.platform = d.platform;
  row.build = d.build_fingerprint;
  row.tier = d.tier;
  row.online = online.count(d.device_id) != 0;
  return row;
}

std::vector<dashboard::FleetGroup> GroupsByModel(const std::vector<dashboard::FleetDevice>& rows) {
  std::map<std::string, std::vector<int64_t>> totals;
  std::map<std::string, size_t> unknown;
  std::map<std::string, report::TierCounts> tiers;  // of the known totals, as `memfleet fleet` counts them
  for (const dashboard::FleetDevice& d : rows) {
    std::vector<int64_t>& values = totals[d.model];  // a model of unknown totals only is still listed
    if (d.total_kb) {
      values.push_back(*d.total_kb);
      tiers[d.model].Add(d.tier);
    } else {
      ++unknown[d.model];  // counted, never dropped
    }
  }
  std::vector<dashboard::FleetGroup> groups;
  for (auto& [model, values] : totals) {
    std::sort(values.begin(), values.end());
    dashboard::FleetGroup g{model, values.size()};
    g.unknown = unknown[model];
    g.tiers = tiers[model];
    if (!values.empty()) {
      g.min_kb = values.front();
      g.p50_kb = NearestRankPercentile(values, 50);
      g.p90_kb = NearestRankPercentile(values, 90);
      g.max_kb = values.back();
    }
    groups.push_back(g);
  }
  return groups;
}

// RFC 3339 of `days` ago: the start of a trend's window.
std::string DaysAgo(int days) {
  return FormatUtcMillis(std::chrono::system_clock::now() - std::chrono::hours(24) * days);
}

absl::StatusOr<int> TrendDays(const DashboardTarget& target) {
  const std::string text = target.Param("days");
  if (text.empty()) return kDefaultTrendDays;
  int days = 0;
  if (text.size() > 4 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      (days = std::stoi(text)) < 1 || days > kMaxTrendDays) {
    return absl::InvalidArgumentError(absl::StrCat("days must be a whole number from 1 to ", kMaxTrendDays));
  }
  return days;
}

// The App Summary's parts over time (the stacked chart) and the latest heaps, from the process's reports.
void AddBreakdown(const std::vector<ProcessSnapshot>& history, dashboard::ProcessPageInput& in) {
  for (const ProcessSnapshot& s : history) {
    const std::optional<int64_t> at_ms = UtcMillisOf(s.captured_at);
    if (!s.process || !s.process->app_summary || !at_ms) {
      ++in.summary_missing;
      continue;
    }
    chart::StackedPoint point{*at_ms / 1000, {}};
    for (size_t i = 0; i < report::kAppSummaryParts; ++i) {
      point.values_kb.push_back((*s.process->app_summary).*(report::kAppSummaryFields[i].member));
    }
    in.summary_history.push_back(std::move(point));
    if (s.process->heaps) {
      in.latest_breakdown = *s.process;
      in.latest_breakdown_at = s.captured_at;
    }
  }
}

// A form POSTed from this dashboard's own pages, as far as the browser says: Sec-Fetch-Site, when sent,
// is same-origin (or none: typed by the user), and Origin, when sent, is this server as the browser
// reached it. A script (curl) sends neither and passes; it holds the token anyway.
bool FromThisSite(const DashboardRequest& request) {
  if (!request.sec_fetch_site.empty() && request.sec_fetch_site != "same-origin" && request.sec_fetch_site != "none") {
    return false;
  }
  if (request.origin.empty()) return true;
  return !request.host.empty() &&
         absl::EqualsIgnoreCase(request.origin, absl::StrCat(request.tls ? "https://" : "http://", request.host));
}

// The session cookie's attributes: no Max-Age or Expires, so the browser forgets it when it closes (the
// server forgets the session after its lifetime either way).
std::string SessionCookie(const std::string& value, bool tls, bool forget = false) {
  return absl::StrCat(DashboardSessionCookie(tls), "=", value, "; Path=/; HttpOnly; SameSite=Strict",
                      forget ? "; Max-Age=0" : "", tls ? "; Secure" : "");
}

}  // namespace

DashboardReply DashboardSite::Handle(const DashboardRequest& request) {
  absl::StatusOr<DashboardTarget> target = dashboard::ParseDashboardTarget(request.target);
  if (!target.ok()) return Message(400, target.status().message());
  if (target->page == DashboardPage::kNotFound) return Message(404, "no such page");
  if (target->page == DashboardPage::kLogout) {
    if (request.method == "POST") return Logout(request);
    return Message(405, "/logout answers POST (the Log out button)");
  }
  if (target->page == DashboardPage::kLogin) {
    if (request.method == "POST") return Login(request);
    if (request.method == "GET" || request.method == "HEAD") return Page(200, dashboard::RenderLoginPage(""));
    return Message(405, "/login answers GET and POST");
  }
  if (request.method != "GET" && request.method != "HEAD") return Message(405, "the dashboard answers GET and HEAD");
  std::string logged_in_as;
  if (std::optional<DashboardReply> refused = Authenticate(request, &logged_in_as)) return *refused;
  absl::StatusOr<std::string> html = target->page == DashboardPage::kFleet       ? FleetPage(*target)
                                     : target->page == DashboardPage::kDevice    ? DevicePage(*target)
                                     : target->page == DashboardPage::kBaselines ? BaselinesPage(*target)
                                                                                 : ProcessPage(*target);
  if (!html.ok()) return ErrorPage(html.status());
  if (!logged_in_as.empty()) return Page(200, dashboard::LoggedInPage(*std::move(html), logged_in_as));
  return Page(200, std::move(*html));
}

std::optional<DashboardReply> DashboardSite::Authenticate(const DashboardRequest& request, std::string* logged_in_as) {
  if (request.authorization) {
    absl::StatusOr<security::Principal> who =
        authorizer_.Authorize(security::kHttpDashboardMethod, request.authorization);
    if (!who.ok()) return Refusal(who.status(), true);
    return std::nullopt;
  }
  const std::string session = CookieValue(request.cookie, DashboardSessionCookie(request.tls));
  if (!session.empty()) {
    if (std::optional<std::string> token = sessions_.TokenOf(session)) {
      absl::StatusOr<security::Principal> who =
          authorizer_.Authorize(security::kHttpDashboardMethod, absl::StrCat("Bearer ", *token));
      if (who.ok()) {
        *logged_in_as = who->token_name;
        return std::nullopt;
      }
      if (who.status().code() != absl::StatusCode::kUnauthenticated) return Refusal(who.status(), false);
      sessions_.Drop(session);  // its token was revoked
    }
  }
  absl::StatusOr<security::Principal> who = authorizer_.Authorize(security::kHttpDashboardMethod, std::nullopt);
  if (who.ok()) return std::nullopt;  // tokens are off (loopback with an empty tokens table)
  if (who.status().code() == absl::StatusCode::kUnauthenticated) return Redirect("/login");
  return Refusal(who.status(), false);
}

DashboardReply DashboardSite::Login(const DashboardRequest& request) {
  if (!FromThisSite(request)) {
    return Message(403,
                   "the browser says this login form was sent from another site: log in on this dashboard's own "
                   "/login page");
  }
  absl::StatusOr<dashboard::Parameters> form = dashboard::ParseParameters(request.body);
  std::string token;
  if (form.ok()) {
    for (const auto& [name, value] : *form) {
      if (name == "token") token = value;
    }
  }
  if (token.empty()) return Page(400, dashboard::RenderLoginPage("paste a read token into the field"));
  absl::StatusOr<security::Principal> who =
      authorizer_.Authorize(security::kHttpDashboardMethod, absl::StrCat("Bearer ", token));
  if (!who.ok()) return Refusal(who.status(), false);
  if (!who->authenticated) return Redirect("/");  // tokens are off: nothing to remember
  absl::StatusOr<std::string> session = sessions_.Create(token);
  if (!session.ok()) return Message(503, session.status().message());
  DashboardReply reply = Redirect("/");
  reply.set_cookie = SessionCookie(*session, request.tls);
  return reply;
}

DashboardReply DashboardSite::Logout(const DashboardRequest& request) {
  if (!FromThisSite(request)) {
    return Message(403, "the browser says this logout was sent from another site: use this dashboard's Log out button");
  }
  const std::string session = CookieValue(request.cookie, DashboardSessionCookie(request.tls));
  if (!session.empty()) sessions_.Drop(session);
  DashboardReply reply = Redirect("/login");
  reply.set_cookie = SessionCookie("", request.tls, /*forget=*/true);
  return reply;
}

absl::StatusOr<std::string> DashboardSite::FleetPage(const DashboardTarget& target) {
  const std::vector<std::string> where = target.Params("where");
  absl::StatusOr<selector::Selector> selector = selector::Selector::Parse(where);
  if (!selector.ok()) return selector.status();
  absl::StatusOr<std::vector<storage::DeviceSummaryRow>> devices = store_.ListDevices();
  if (!devices.ok()) return absl::UnavailableError(devices.status().message());
  // The devices `memfleet devices --where` lists for the same terms, label terms included.
  absl::StatusOr<SelectedDevices> picked = SelectedDevices::Of(store_, *selector);
  if (!picked.ok()) return picked.status();
  absl::StatusOr<std::map<std::string, std::string>> online = OnlineDevices(registry_, fleet_);
  if (!online.ok()) return absl::UnavailableError(online.status().message());
  std::vector<dashboard::FleetDevice> rows;
  for (const storage::DeviceSummaryRow& summary : *devices) {
    if (summary.device.retired() || !picked->Contains(summary.device)) continue;
    dashboard::FleetDevice row = FleetDeviceOf(summary.device, *online);
    row.last_capture_at = summary.last_capture_at;
    row.total_kb = summary.last_total_kb;
    absl::StatusOr<std::vector<storage::HistoryRow>> week =
        store_.DeviceHistory(row.device_id, "total_kb", DaysAgo(kSparklineDays), kMaxTrendPoints);
    if (!week.ok()) return absl::UnavailableError(week.status().message());
    for (const storage::HistoryRow& point : *week) row.recent_totals_kb.push_back(point.value_kb);
    rows.push_back(std::move(row));
  }
  dashboard::FleetView view;
  if (!target.Param("sort").empty()) view.sort = target.Param("sort");
  view.where = where;
  if (absl::Status sorted = dashboard::SortFleet(rows, view.sort); !sorted.ok()) return sorted;
  return dashboard::RenderFleetPage(rows, GroupsByModel(rows), view);
}

absl::StatusOr<std::string> DashboardSite::DevicePage(const DashboardTarget& target) {
  absl::StatusOr<int> days = TrendDays(target);
  if (!days.ok()) return days.status();
  absl::StatusOr<std::optional<storage::DeviceRecord>> device = store_.GetDevice(target.device_id);
  if (!device.ok()) return absl::UnavailableError(device.status().message());
  if (!device->has_value()) return absl::NotFoundError(absl::StrCat("no device \"", target.device_id, "\" is known"));
  // ?at=TIME: the report at or before that time ("earlier captures by time"); the latest otherwise.
  absl::StatusOr<std::optional<storage::StoredReport>> stored = store_.GetReport(target.device_id, target.Param("at"));
  if (!stored.ok())
    return stored.status().code() == absl::StatusCode::kInvalidArgument
               ? stored.status()
               : absl::UnavailableError(stored.status().message());
  if (!stored->has_value()) {
    return absl::NotFoundError(absl::StrCat("device \"", target.device_id, "\" has no capture stored",
                                            target.Param("at").empty() ? "" : " at or before that time"));
  }
  absl::StatusOr<report::Report> report = report::ReportFromJson((*stored)->report_json);
  if (!report.ok())
    return absl::DataLossError(absl::StrCat("its stored report cannot be read: ", report.status().message()));
  absl::StatusOr<std::map<std::string, std::string>> online = OnlineDevices(registry_, fleet_);
  if (!online.ok()) return absl::UnavailableError(online.status().message());
  dashboard::DevicePageInput in;
  in.device = FleetDeviceOf(**device, *online);
  in.device.last_capture_at = (*stored)->captured_at;
  in.device.total_kb = report->device.total_kb;
  in.report = std::move(*report);
  in.capture_id = (*stored)->capture_id;
  in.captured_at = (*stored)->captured_at;
  in.trend_days = *days;
  absl::StatusOr<std::vector<storage::HistoryRow>> trend =
      store_.DeviceHistory(target.device_id, "total_kb", DaysAgo(*days), kMaxTrendPoints);
  if (!trend.ok()) return absl::UnavailableError(trend.status().message());
  for (const storage::HistoryRow& row : *trend) {
    dashboard::EarlierCapture capture;
    capture.captured_at = row.captured_at;
    capture.total_kb = row.value_kb;
    capture.sweep_id = row.sweep_id;
    capture.labels = row.labels.sweep;
    capture.agent_labels = row.labels.agent;
    capture.tier = row.tier;
    in.captures.push_back(std::move(capture));
    const std::optional<int64_t> at_ms = UtcMillisOf(row.captured_at);
    if (row.value_kb && at_ms) in.total_trend.push_back({*at_ms / 1000, *row.value_kb});
  }
  return dashboard::RenderDevicePage(in);
}

absl::StatusOr<std::string> DashboardSite::ProcessNameOf(const DashboardTarget& target) {
  if (target.capture_id.empty()) return target.process_name;
  absl::StatusOr<std::optional<storage::StoredReport>> stored = store_.GetReportByCapture(target.capture_id);
  if (!stored.ok()) return absl::UnavailableError(stored.status().message());
  // Any stored capture holding the name will do, the device's own or another's: the link only needs the
  // name back.
  if (!stored->has_value()) {
    return absl::NotFoundError(
        absl::StrCat("no capture \"", target.capture_id, "\" is stored (retention may have thinned it)"));
  }
  absl::StatusOr<report::Report> report = report::ReportFromJson((*stored)->report_json);
  if (!report.ok())
    return absl::DataLossError(absl::StrCat("its stored report cannot be read: ", report.status().message()));
  for (const auto& [pid, process] : report->processes) {
    if (dashboard::ProcessKey(process.name) == target.process_key) return process.name;
  }
  return absl::NotFoundError(
      absl::StrCat("capture \"", target.capture_id, "\" has no process with the name key ", target.process_key));
}

absl::StatusOr<std::string> DashboardSite::ProcessPage(const DashboardTarget& target) {
  absl::StatusOr<int> days = TrendDays(target);
  if (!days.ok()) return days.status();
  absl::StatusOr<std::optional<storage::DeviceRecord>> device = store_.GetDevice(target.device_id);
  if (!device.ok()) return absl::UnavailableError(device.status().message());
  if (!device->has_value()) return absl::NotFoundError(absl::StrCat("no device \"", target.device_id, "\" is known"));
  absl::StatusOr<std::string> name = ProcessNameOf(target);
  if (!name.ok()) return name.status();
  const std::string since = DaysAgo(*days);
  const std::string metric = target.Param("metric").empty() ? "total_kb" : target.Param("metric");
  if (!report::IsProcessFigureName(metric)) {
    return absl::InvalidArgumentError(absl::StrCat("metric: one of ", report::ProcessFigureNamesHint()));
  }
  absl::StatusOr<std::vector<storage::HistoryRow>> totals =
      store_.ProcessHistory(target.device_id, *name, "total_kb", since, kMaxTrendPoints);
  if (!totals.ok()) return absl::UnavailableError(totals.status().message());
  // A typed name no capture of the window has exactly: the one it means, as `memfleet trend` resolves it.
  // (A name found by its key in a capture is exact; a device without it has no history, and says so.)
  if (totals->empty() && target.capture_id.empty()) {
    name = ResolveProcessOfLatest(target.device_id, *name);
    if (!name.ok()) return name.status();
  }
  absl::StatusOr<std::vector<ProcessSnapshot>> breakdown =
      ProcessReportHistory(store_, target.device_id, *name, since, kMaxSummaryPoints);
  if (!breakdown.ok()) return absl::UnavailableError(breakdown.status().message());
  absl::StatusOr<std::vector<storage::HistoryRow>> history =
      report::IsBreakdownFigureName(metric)
          ? ReportFigureHistory(store_, target.device_id, *name, metric, since, kMaxSummaryPoints)
          : store_.ProcessHistory(target.device_id, *name, metric, since, kMaxTrendPoints);
  if (!history.ok()) return absl::UnavailableError(history.status().message());
  absl::StatusOr<std::vector<storage::FleetValueRow>> fleet = store_.LatestPerDevice("total_kb", *name);
  if (!fleet.ok()) return absl::UnavailableError(fleet.status().message());
  dashboard::ProcessPageInput in;
  in.device_id = target.device_id;
  in.model = (*device)->model;
  in.process_name = *name;
  in.metric = metric;
  AddBreakdown(*breakdown, in);
  // A capture holding the name, for the links to the other devices' pages (whose latest capture may lack
  // the process): the one the name came from, or this device's latest with the process.
  in.name_capture_id = target.capture_id;
  if (in.name_capture_id.empty() && !totals->empty()) in.name_capture_id = totals->back().capture_id;
  if (in.name_capture_id.empty() && !history->empty()) in.name_capture_id = history->back().capture_id;
  for (const storage::HistoryRow& row : *history) {
    in.history_tiers.push_back({row.captured_at, row.tier});
    const std::optional<int64_t> at_ms = UtcMillisOf(row.captured_at);
    if (!row.value_kb || !at_ms) {
      ++in.unknown_samples;
      continue;
    }
    in.history.push_back({*at_ms / 1000, *row.value_kb});
  }
  for (const storage::FleetValueRow& row : *fleet) {
    // Retired devices left the farm; the one shown stays in its own comparison.
    if (row.device.model == in.model && (!row.device.retired() || row.device.device_id == in.device_id)) {
      in.same_model.push_back({row.device.device_id, row.captured_at, row.value_kb, row.capture_id});
    }
  }
  return dashboard::RenderProcessPage(in);
}

absl::StatusOr<std::string> DashboardSite::ResolveProcessOfLatest(const std::string& device_id,
                                                                  const std::string& typed) {
  absl::StatusOr<std::optional<storage::StoredReport>> stored = store_.GetReport(device_id, "");
  if (!stored.ok()) return absl::UnavailableError(stored.status().message());
  if (!stored->has_value())
    return absl::NotFoundError(absl::StrCat("device \"", device_id, "\" has no capture stored"));
  absl::StatusOr<report::Report> report = report::ReportFromJson((*stored)->report_json);
  if (!report.ok())
    return absl::DataLossError(absl::StrCat("its stored report cannot be read: ", report.status().message()));
  std::vector<std::string> names;
  for (const auto& [pid, process] : report->processes) names.push_back(process.name);
  // As `memfleet process D NAME` resolves it; not found (404) or ambiguous (400) lists the closest names.
  return ResolveProcessName(typed, names, absl::StrCat("in the latest report of ", device_id));
}

absl::StatusOr<std::string> DashboardSite::BaselinesPage(const DashboardTarget& target) {
  // ?scheme=1|2 as `baseline check --scheme`; the check refuses anything else (400).
  v1::CheckBaselineRequest request;
  const std::string scheme = target.Param("scheme");
  if (!scheme.empty()) {
    if (scheme != "1" && scheme != "2") return absl::InvalidArgumentError("scheme is 1 or 2");
    request.set_scheme(scheme == "2" ? 2 : 1);
  }
  dashboard::BaselinesPageInput in;
  if (baselines_ == nullptr) {
    in.absent = "this server answers no baseline check";
    return dashboard::RenderBaselinesPage(in);
  }
  // As `memfleet baseline check [--scheme N]`: the latest baseline, each device's latest report.
  absl::StatusOr<v1::CheckBaselineResponse> checked = baselines_->Check(request);
  // No baseline, no report yet, or a stored baseline the rules no longer accept: said on the page.
  if (checked.status().code() == absl::StatusCode::kNotFound ||
      checked.status().code() == absl::StatusCode::kFailedPrecondition) {
    in.absent = std::string(checked.status().message());
    return dashboard::RenderBaselinesPage(in);
  }
  if (!checked.ok()) return absl::UnavailableError(checked.status().message());
  in.name = checked->name();
  in.version = checked->version();
  in.scheme = checked->scheme();
  in.devices = checked->devices();
  in.devices_not_applicable = checked->devices_not_applicable();
  in.unbudgeted = static_cast<size_t>(checked->unbudgeted_size());
  for (const v1::BaselineRow& r : checked->rows()) {
    in.rows.push_back({r.model(), r.build(), r.department(), r.process(), r.budget(), r.budget_kb(),
                       r.devices_checked(), r.devices_over(), r.devices_unknown(), r.worst_value_kb(),
                       r.worst_over_kb(), r.worst_device()});
  }
  return dashboard::RenderBaselinesPage(in);
}

}  // namespace memfleet::server
