// The browser dashboard on a real LabServer's HTTP port (--dashboard), over loopback: it is off unless
// asked; its pages show a capture a raw agent stored (figures from the sample's expected report); bad
// addresses and parameters get readable 400/404/405 pages; and with tokens on, a page needs a read token
// or the session cookie of POST /login, a revoked token ends its sessions, and a tokens table that cannot
// be read refuses (503). Sessions expire on the injected clock. One token's logins never end another
// token's session; logout ends a session and the cookie ends with the browser; a login posted from another
// site is refused; a Host header that does not name this server (DNS rebinding) gets no page and no
// /metrics. A process whose command line is thousands of bytes long has a link that works.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "capture/capture.h"
#include "capture/node_path.h"
#include "nlohmann/json.hpp"
#include "server/http/dashboard_sessions.h"
#include "server/security/token_admin.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/failing_store.h"
#include "tests/support/http_get.h"
#include "tests/support/manual_clock.h"
#include "tests/support/raw_agent.h"
#include "tests/support/sample_capture.h"
#include "tests/support/test_data.h"
#include "tests/support/test_server.h"

namespace memfleet {
namespace {

using nlohmann::json;
using testing::HttpGet;
using testing::HttpOptions;
using testing::HttpReply;
using testing::TestServer;

constexpr char kDevice[] = "sim-qcom-101";
constexpr char kNow[] = "2026-11-30T08:00:00Z";

server::LabServerOptions WithDashboard(bool dashboard = true) {
  server::LabServerOptions options;
  options.http.listen = "127.0.0.1:0";
  options.dashboard = dashboard;
  return options;
}

// "3,567,646": how a reader expects a kB figure written (the test's own grouping).
std::string Grouped(int64_t kb) {
  std::string digits = std::to_string(kb);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

class DashboardSiteTest : public ::testing::Test {
 protected:
  void Start(server::LabServerOptions options = WithDashboard()) {
    absl::StatusOr<std::unique_ptr<TestServer>> s = TestServer::Start(options);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
  }
  int HttpPort() {
    const std::string address = server_->server().http_address();
    return std::atoi(address.substr(address.rfind(':') + 1).c_str());
  }
  HttpReply Get(const std::string& target, HttpOptions options = {}) {
    return HttpGet("127.0.0.1", HttpPort(), target, options);
  }
  void StoreSample(capture::Capture capture = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree")),
                   const std::string& device = kDevice) {
    // The sample's header names kDevice; another device sends it under its own id.
    json header = json::parse(*capture.FileContent(capture::kHeaderNode));
    header["device_id"] = device;
    capture.AddFile(capture::kHeaderNode, header.dump());
    testing::RawAgent agent(server_->target());
    ASSERT_TRUE(agent.Hello(device, "SM8450 HDK"));
    std::optional<v1::ServerMessage> answer =
        agent.SendCapture(std::move(capture), testing::CaptureId(device, 1), kNow);
    ASSERT_TRUE(answer.has_value() && answer->has_ack());
  }
  // POST /login with `token` and the extra header fields; the reply.
  HttpReply Login(const std::string& token, std::vector<std::pair<std::string, std::string>> headers = {}) {
    HttpOptions login;
    login.method = "POST";
    login.body = "token=" + token;
    login.headers = std::move(headers);
    return Get("/login", login);
  }
  // "memfleet_session=..." of a login's Set-Cookie.
  static std::string CookieOf(const HttpReply& login) { return login.set_cookie.substr(0, login.set_cookie.find(';')); }
  int StatusWithCookie(const std::string& target, const std::string& cookie) {
    HttpOptions o;
    o.cookie = cookie;
    return Get(target, o).status;
  }
  std::string AddToken(const std::string& name, security::TokenKind kind, const std::string& device = "") {
    absl::StatusOr<std::string> secret = security::AddToken(server_->store(), {name, kind, device}, kNow);
    EXPECT_TRUE(secret.ok()) << secret.status();
    return secret.ok() ? *secret : "";
  }

  std::unique_ptr<TestServer> server_;
};

TEST_F(DashboardSiteTest, OffUnlessAsked) {
  Start(WithDashboard(false));
  HttpReply reply = Get("/");
  EXPECT_EQ(reply.status, 404) << reply.error;
  EXPECT_EQ(reply.content_type, "text/plain; charset=utf-8");
  EXPECT_EQ(Get("/metrics").status, 200);
}

TEST_F(DashboardSiteTest, PagesShowTheStoredCapture) {
  Start();
  StoreSample();
  const json expected = json::parse(testing::ReadTestData("captures/qcom-sm8450/expected.json"));
  const std::string total = Grouped(expected["device"]["total_kb"].get<int64_t>());

  HttpReply fleet = Get("/");
  ASSERT_EQ(fleet.status, 200) << fleet.error << fleet.body;
  EXPECT_EQ(fleet.content_type, "text/html; charset=utf-8");
  EXPECT_NE(fleet.content_security_policy.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(fleet.body.find("<a href=\"/device/sim-qcom-101\">sim-qcom-101</a>"), std::string::npos);
  EXPECT_NE(fleet.body.find(">" + total + "</td>"), std::string::npos) << fleet.body;
  EXPECT_NE(fleet.body.find("<td>SM8450 HDK</td><td class=\"num\">1</td>"), std::string::npos) << "its model's group";

  EXPECT_NE(Get("/?where=model%3DSM8450+HDK").body.find("sim-qcom-101</a>"), std::string::npos);
  EXPECT_EQ(Get("/?where=model%3DPixel").body.find("sim-qcom-101</a>"), std::string::npos);

  HttpReply device = Get("/device/sim-qcom-101");
  ASSERT_EQ(device.status, 200) << device.body;
  EXPECT_NE(device.body.find("<b>total</b></td><td class=\"num\">" + total + "</td>"), std::string::npos);
  for (const auto& [pid, p] : expected["processes"].items()) {
    EXPECT_NE(device.body.find("<td class=\"num\">" + pid + "</td>"), std::string::npos) << pid;
  }

  HttpReply trend = Get("/device/sim-qcom-101?days=3650");
  ASSERT_EQ(trend.status, 200) << trend.body;
  EXPECT_NE(trend.body.find("<title>total_kb on sim-qcom-101</title>"), std::string::npos) << "the total's chart";
  EXPECT_NE(trend.body.find("<h2>Captures (1)</h2>"), std::string::npos);
  EXPECT_NE(trend.body.find("?at=2026-11-30T08%3A00%3A00.000Z\">2026-11-30T08:00:00.000Z</a></td><td class=\"num\">" +
                            total + "</td>"),
            std::string::npos)
      << trend.body;

  const int64_t mm_total = expected["processes"]["13560"]["total_kb"].get<int64_t>();
  ASSERT_EQ(expected["processes"]["13560"]["name"], "com.tencent.mm");
  HttpReply process = Get("/device/sim-qcom-101/process/com.tencent.mm?days=3650");
  ASSERT_EQ(process.status, 200) << process.body;
  EXPECT_NE(process.body.find("<polyline class=\"series\""), std::string::npos);
  EXPECT_NE(process.body.find("1 capture; latest " + Grouped(mm_total) + " kB"), std::string::npos) << process.body;
  EXPECT_NE(process.body.find(">" + Grouped(mm_total) + "</td>"), std::string::npos) << "the same-model table";
}

// The fleet page selects with the CLI's one selector (selector/selector.h), label terms included: the same
// devices for the same terms, and the same refusals.
TEST_F(DashboardSiteTest, TheFleetPageSelectsAsTheCliDoes) {
  Start();
  StoreSample();
  // The sample's captures carry no label: `memfleet devices --where label.run=NOSUCH` lists no device.
  HttpReply labelled = Get("/?where=label.run%3DNOSUCH");
  ASSERT_EQ(labelled.status, 200) << labelled.body;
  EXPECT_EQ(labelled.body.find("sim-qcom-101</a>"), std::string::npos) << labelled.body;
  EXPECT_EQ(Get("/?where=label.Run%3D1").status, 400);  // the grammar's refusal, as the CLI's
  EXPECT_EQ(Get("/?where=platform%3Dqualcomm").status, 400);
  EXPECT_NE(Get("/?where=platform%3Dqcom").body.find("sim-qcom-101</a>"), std::string::npos);
}

// A process page resolves a typed name as `memfleet process` does (exact, base name, end) or answers 404
// (nothing like it) or 400 (several), listing the closest names.
TEST_F(DashboardSiteTest, AProcessPageResolvesTheNameAsTheCliDoes) {
  Start();
  StoreSample();

  const json expected = json::parse(testing::ReadTestData("captures/qcom-sm8450/expected.json"));
  int64_t sf_total = 0;
  for (const auto& [pid, p] : expected["processes"].items()) {
    if (p["name"] == "/system/bin/surfaceflinger") sf_total = p["total_kb"].get<int64_t>();
  }
  ASSERT_GT(sf_total, 0);
  HttpReply base_name = Get("/device/sim-qcom-101/process/surfaceflinger?days=3650");
  ASSERT_EQ(base_name.status, 200) << base_name.body;
  EXPECT_NE(base_name.body.find("/system/bin/surfaceflinger"), std::string::npos);
  EXPECT_NE(base_name.body.find("1 capture; latest " + Grouped(sf_total) + " kB"), std::string::npos) << base_name.body;
  HttpReply typo = Get("/device/sim-qcom-101/process/surfaceflinga");
  EXPECT_EQ(typo.status, 404);
  EXPECT_NE(typo.body.find("closest: &quot;/system/bin/surfaceflinger&quot;"), std::string::npos) << typo.body;
  EXPECT_EQ(Get("/device/sim-qcom-101/process/-service").status, 400);  // the end of two names
}

TEST_F(DashboardSiteTest, TheBaselinesPageChecksTheLatestBaselineAgainstTheLatestReports) {
  Start();
  StoreSample();
  HttpReply none = Get("/baselines");
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_NE(none.body.find("no baseline is stored"), std::string::npos) << none.body;

  // surfaceflinger's graphics_dma_kb budget is 180000 (tests/data/baselines/sample-lab.json); the sample's
  // expected report gives it 182161: over by 2161, on its one device.
  absl::StatusOr<int64_t> version =
      server_->store().PutBaseline("sample lab reference", kNow, testing::ReadTestData("baselines/sample-lab.json"));
  ASSERT_TRUE(version.ok()) << version.status();
  HttpReply page = Get("/baselines");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("<h1>Baseline sample lab reference (version 1, scheme 1)</h1>"), std::string::npos)
      << page.body;
  const std::string over_row =
      "<td>/system/bin/surfaceflinger</td><td>graphics_dma_kb</td><td class=\"num\">180,000</td><td class=\"num\">"
      "1 of 1</td><td class=\"num\">182,161 on <a href=\"/device/sim-qcom-101\">sim-qcom-101</a></td>"
      "<td class=\"num\">2,161</td></tr>";
  const size_t at = page.body.find(over_row);
  ASSERT_NE(at, std::string::npos) << page.body;
  const size_t row_start = page.body.rfind("<tr", at);
  EXPECT_EQ(page.body.compare(row_start, 17, "<tr class=\"over\">"), 0) << page.body.substr(row_start, 200);
  EXPECT_LT(at, page.body.find("<h2>Within budget")) << "listed under Over budget";

  // ?scheme=2 as `baseline check --scheme 2`: it used to show scheme 1.
  HttpReply scheme2 = Get("/baselines?scheme=2");
  ASSERT_EQ(scheme2.status, 200) << scheme2.body;
  EXPECT_NE(scheme2.body.find("<h1>Baseline sample lab reference (version 1, scheme 2)</h1>"), std::string::npos)
      << scheme2.body;
  EXPECT_EQ(Get("/baselines?scheme=3").status, 400);
}

TEST_F(DashboardSiteTest, BadAddressesGetReadablePages) {
  Start();
  StoreSample();
  HttpReply sort = Get("/?sort=nonsense");
  EXPECT_EQ(sort.status, 400);
  EXPECT_NE(sort.body.find("cannot sort by &quot;nonsense&quot;"), std::string::npos) << sort.body;
  HttpReply where = Get("/?where=colour%3Dred");
  EXPECT_EQ(where.status, 400);
  EXPECT_NE(where.body.find("colour"), std::string::npos) << where.body;
  EXPECT_EQ(Get("/device/%zz").status, 400);
  EXPECT_EQ(Get("/device/sim-qcom-101/process/x?days=0").status, 400);
  EXPECT_EQ(Get("/device/sim-qcom-101?days=99999").status, 400);
  EXPECT_EQ(Get("/device/sim-qcom-101?at=yesterday").status, 400);
  HttpReply unknown = Get("/device/%3Cscript%3E");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.body.find("<script>"), std::string::npos);
  EXPECT_NE(unknown.body.find("&lt;script&gt;"), std::string::npos);
  EXPECT_EQ(Get("/device/sim-qcom-101?at=2020-01-01T00:00:00Z").status, 404) << "nothing stored that early";
  EXPECT_EQ(Get("/no/such/page").status, 404);
  HttpOptions post;
  post.method = "POST";
  post.body = "x=1";
  EXPECT_EQ(Get("/", post).status, 405);
  EXPECT_EQ(Get("/metrics").status, 200) << "/metrics is unchanged beside the dashboard";
}

TEST_F(DashboardSiteTest, WithTokensAPageNeedsATokenOrTheLoginCookie) {
  Start();
  StoreSample();
  const std::string read = AddToken("browser", security::TokenKind::kRead);
  const std::string agent = AddToken("phone", security::TokenKind::kAgent, kDevice);

  HttpReply anonymous = Get("/");
  EXPECT_EQ(anonymous.status, 303);
  EXPECT_EQ(anonymous.location, "/login");
  EXPECT_EQ(Get("/login").status, 200);

  HttpOptions bearer;
  bearer.bearer = read;
  EXPECT_EQ(Get("/device/sim-qcom-101", bearer).status, 200);
  bearer.bearer = "mft_" + std::string(64, '0');
  HttpReply unknown = Get("/", bearer);
  EXPECT_EQ(unknown.status, 401);
  EXPECT_NE(unknown.www_authenticate.find("Bearer"), std::string::npos);
  bearer.bearer = agent;
  EXPECT_EQ(Get("/", bearer).status, 403);

  HttpOptions login;
  login.method = "POST";
  login.body = "token=" + agent;
  EXPECT_EQ(Get("/login", login).status, 403) << "an agent token opens no session";
  login.body = "token=mft_nonsense";
  HttpReply refused = Get("/login", login);
  EXPECT_EQ(refused.status, 401);
  EXPECT_TRUE(refused.set_cookie.empty());

  login.body = "token=" + read;
  HttpReply in = Get("/login", login);
  ASSERT_EQ(in.status, 303) << in.body;
  EXPECT_EQ(in.location, "/");
  EXPECT_EQ(in.set_cookie.rfind("memfleet_session=", 0), 0u) << in.set_cookie;
  EXPECT_NE(in.set_cookie.find("; HttpOnly"), std::string::npos);
  EXPECT_NE(in.set_cookie.find("; SameSite=Strict"), std::string::npos);
  EXPECT_EQ(in.set_cookie.find("Secure"), std::string::npos) << "plain HTTP: a Secure cookie would not come back";
  EXPECT_EQ(in.set_cookie.find(read.substr(4)), std::string::npos) << "the cookie holds a session, not the token";
  const std::string cookie = in.set_cookie.substr(0, in.set_cookie.find(';'));

  HttpOptions with_cookie;
  with_cookie.cookie = "other=1; " + cookie;
  HttpReply page = Get("/", with_cookie);
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("sim-qcom-101</a>"), std::string::npos);
  with_cookie.cookie = "memfleet_session=mft_forged";
  EXPECT_EQ(Get("/", with_cookie).status, 303);

  ASSERT_TRUE(security::RevokeToken(server_->store(), "browser", kNow).ok());
  with_cookie.cookie = cookie;
  HttpReply revoked = Get("/", with_cookie);
  EXPECT_EQ(revoked.status, 303) << "a revoked token ends its sessions";
  EXPECT_EQ(revoked.location, "/login");
}

TEST_F(DashboardSiteTest, OneTokensLoginsEndNoOtherTokensSession) {
  Start();
  StoreSample();
  const std::string admin = AddToken("alice", security::TokenKind::kAdmin);
  const std::string read = AddToken("shared-read", security::TokenKind::kRead);
  const HttpReply admin_login = Login(admin);
  ASSERT_EQ(admin_login.status, 303) << admin_login.body;
  const std::string admin_cookie = CookieOf(admin_login);
  // More logins with one read token than the server keeps sessions for all tokens together.
  std::string first_read_cookie, last_read_cookie;
  for (int i = 0; i < 1030; ++i) {
    const HttpReply in = Login(read);
    ASSERT_EQ(in.status, 303) << "login " << i << ": " << in.error << in.body;
    (i == 0 ? first_read_cookie : last_read_cookie) = CookieOf(in);
  }
  EXPECT_EQ(StatusWithCookie("/", admin_cookie), 200) << "another token's logins ended the admin's session";
  EXPECT_EQ(StatusWithCookie("/", last_read_cookie), 200);
  EXPECT_EQ(StatusWithCookie("/", first_read_cookie), 303) << "the read token's own oldest session made room";
}

TEST_F(DashboardSiteTest, TheCookieEndsWithTheBrowserAndLogoutEndsTheSession) {
  Start();
  StoreSample();
  const std::string read = AddToken("browser", security::TokenKind::kRead);
  const HttpReply in = Login(read);
  ASSERT_EQ(in.status, 303) << in.body;
  EXPECT_EQ(in.set_cookie.find("Max-Age"), std::string::npos) << in.set_cookie;
  EXPECT_EQ(in.set_cookie.find("Expires"), std::string::npos) << in.set_cookie;
  const std::string cookie = CookieOf(in);
  ASSERT_EQ(StatusWithCookie("/", cookie), 200);

  HttpOptions logout;
  logout.method = "POST";
  logout.cookie = cookie;
  const HttpReply out = Get("/logout", logout);
  EXPECT_EQ(out.status, 303) << out.body;
  EXPECT_EQ(out.location, "/login");
  EXPECT_EQ(out.set_cookie.rfind("memfleet_session=;", 0), 0u) << out.set_cookie;
  EXPECT_NE(out.set_cookie.find("Max-Age=0"), std::string::npos) << "the browser forgets the cookie";
  const HttpReply after = [&] {
    HttpOptions o;
    o.cookie = cookie;
    return Get("/", o);
  }();
  EXPECT_EQ(after.status, 303) << "the server forgot the session: the cookie, replayed, opens nothing";
  EXPECT_EQ(after.location, "/login");
  EXPECT_EQ(Get("/logout").status, 405) << "logout is a POST";
}

// After a login the bar says who is logged in and has the Log out button; a visitor's has Log in. The
// cookie holds a session value of its own kind ("mfs_"), never one that reads as a token ("mft_").
TEST_F(DashboardSiteTest, AfterLoginTheBarSaysWhoAndOffersLogout) {
  Start();
  StoreSample();
  const std::string read = AddToken("browser", security::TokenKind::kRead);
  const HttpReply in = Login(read);
  ASSERT_EQ(in.status, 303) << in.body;
  const std::string cookie = CookieOf(in);
  const std::string value = cookie.substr(cookie.find('=') + 1);
  EXPECT_EQ(cookie.rfind("memfleet_session=", 0), 0u) << cookie;
  EXPECT_EQ(value.rfind("mfs_", 0), 0u) << value;
  EXPECT_EQ(value.size(), 4u + 64u) << value;  // 256 random bits in hex

  HttpOptions with_cookie;
  with_cookie.cookie = cookie;
  for (const char* target : {"/", "/device/sim-qcom-101", "/baselines"}) {
    const HttpReply page = Get(target, with_cookie);
    ASSERT_EQ(page.status, 200) << target << page.body;
    const size_t nav_at = page.body.find("<nav>");
    ASSERT_NE(nav_at, std::string::npos) << page.body;
    const std::string nav = page.body.substr(nav_at, page.body.find("</nav>") - nav_at);
    EXPECT_NE(nav.find("logged in as browser"), std::string::npos) << target << nav;
    EXPECT_NE(nav.find("<form method=\"post\" action=\"/logout\"><button type=\"submit\">Log out</button>"),
              std::string::npos)
        << target << nav;
    EXPECT_EQ(nav.find("Log in"), std::string::npos) << target << nav;
  }

  HttpOptions bearer;  // a script: no session, so nothing to log out of
  bearer.bearer = read;
  const HttpReply script = Get("/", bearer);
  ASSERT_EQ(script.status, 200);
  EXPECT_EQ(script.body.find("logged in as"), std::string::npos);
  EXPECT_EQ(script.body.find("action=\"/logout\""), std::string::npos);
  EXPECT_NE(script.body.find("<a href=\"/login\">Log in</a>"), std::string::npos);
}

// Over HTTPS the cookie is named __Host-...: the browser keeps it only as Secure, Path=/, with no Domain,
// so another host under the same domain can neither set nor shadow it. The plain name opens nothing there.
TEST_F(DashboardSiteTest, OverHttpsTheCookieIsAHostCookie) {
  server::LabServerOptions options = WithDashboard();
  options.tls_cert_file = testing::TestData("tls/server.pem");
  options.tls_key_file = testing::TestData("tls/server.key");
  Start(options);
  const std::string read = AddToken("browser", security::TokenKind::kRead);
  HttpOptions https;
  https.ca_file = testing::TestData("tls/ca.pem");
  HttpOptions login = https;
  login.method = "POST";
  login.body = "token=" + read;
  const HttpReply in = Get("/login", login);
  ASSERT_EQ(in.status, 303) << in.error << in.body;
  EXPECT_EQ(in.set_cookie.rfind("__Host-memfleet_session=mfs_", 0), 0u) << in.set_cookie;
  EXPECT_NE(in.set_cookie.find("; Path=/;"), std::string::npos) << in.set_cookie;
  EXPECT_NE(in.set_cookie.find("; Secure"), std::string::npos) << in.set_cookie;
  EXPECT_EQ(in.set_cookie.find("Domain"), std::string::npos) << in.set_cookie;

  HttpOptions with_cookie = https;
  with_cookie.cookie = CookieOf(in);
  const HttpReply page = Get("/", with_cookie);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("logged in as browser"), std::string::npos);
  with_cookie.cookie = "memfleet_session=" + with_cookie.cookie.substr(with_cookie.cookie.find('=') + 1);
  EXPECT_EQ(Get("/", with_cookie).status, 303) << "over HTTPS only the __Host- name is read";

  HttpOptions logout = https;
  logout.method = "POST";
  logout.cookie = CookieOf(in);
  const HttpReply out = Get("/logout", logout);
  EXPECT_EQ(out.status, 303) << out.body;
  EXPECT_EQ(out.set_cookie.rfind("__Host-memfleet_session=;", 0), 0u) << out.set_cookie;
  with_cookie.cookie = CookieOf(in);
  EXPECT_EQ(Get("/", with_cookie).status, 303) << "logged out";
}

TEST_F(DashboardSiteTest, ALoginPostedFromAnotherSiteIsRefused) {
  Start();
  StoreSample();
  const std::string read = AddToken("browser", security::TokenKind::kRead);
  // As a browser sends it: the Host header with the port, the page's origin with the scheme.
  const std::pair<std::string, std::string> host = {"Host", "127.0.0.1:" + std::to_string(HttpPort())};
  const std::string here = "http://" + host.second;
  const std::vector<std::vector<std::pair<std::string, std::string>>> cross_site = {
      {{"Origin", "http://evil.example"}, host}, {{"Origin", "null"}, host},
      {{"Origin", "http://127.0.0.1:1"}, host},  {{"Origin", "https://" + host.second}, host},
      {{"Sec-Fetch-Site", "cross-site"}, host},  {{"Sec-Fetch-Site", "same-site"}, {"Origin", here}, host},
  };
  for (const auto& headers : cross_site) {
    const HttpReply refused = Login(read, headers);
    EXPECT_EQ(refused.status, 403) << headers[0].first << ": " << headers[0].second;
    EXPECT_TRUE(refused.set_cookie.empty()) << headers[0].second;
  }
  // The dashboard's own form, as a browser posts it, and a script that sends neither header.
  EXPECT_EQ(Login(read, {{"Origin", here}, {"Sec-Fetch-Site", "same-origin"}, host}).status, 303);
  EXPECT_EQ(Login(read).status, 303);
}

TEST_F(DashboardSiteTest, AHostHeaderNotNamingThisServerGetsNoPageAndNoMetrics) {
  Start();
  StoreSample();  // loopback without tokens: open, which is what DNS rebinding would read
  const std::string port = std::to_string(HttpPort());
  for (const char* target : {"/", "/device/sim-qcom-101", "/metrics"}) {
    HttpOptions rebound;
    rebound.headers = {{"Host", "rebind.evil.example:" + port}};
    const HttpReply refused = Get(target, rebound);
    EXPECT_EQ(refused.status, 421) << target << ": " << refused.error;
    EXPECT_EQ(refused.body.find("sim-qcom-101"), std::string::npos) << target;
    const std::vector<std::string> named_hosts = {"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port,
                                                  "127.0.0.1"};
    for (const std::string& host : named_hosts) {
      HttpOptions named;
      named.headers = {{"Host", host}};
      EXPECT_EQ(Get(target, named).status, 200) << target << " Host: " << host;
    }
  }
}

// A Linux process may rewrite its command line into one long string without NULs; its name is then all
// of it. The device page links it by something short, and the process page shows the name whole; so does
// its link to a device of the same model whose latest capture lacks the process.
TEST_F(DashboardSiteTest, AProcessWithALongCommandLineHasALinkThatWorks) {
  Start();
  std::string name = "com.example.indexer";
  while (name.size() < 3000) {
    name += " --shard=/data/user/0/com.example.indexer/files/index shards#" + std::to_string(name.size());
  }
  capture::Capture capture = testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree"));
  capture.AddFile("proc/13560/cmdline", name);  // com.tencent.mm's pid in the sample
  StoreSample(std::move(capture));

  const HttpReply device = Get("/device/sim-qcom-101");
  ASSERT_EQ(device.status, 200) << device.body;
  const std::string row = "<td class=\"num\">13560</td><td><a href=\"";
  const size_t at = device.body.find(row);
  ASSERT_NE(at, std::string::npos) << device.body;
  const size_t href_start = at + row.size();
  const std::string href = device.body.substr(href_start, device.body.find('"', href_start) - href_start);
  EXPECT_LT(href.size(), 256u) << href.substr(0, 200);
  EXPECT_EQ(href.find('&'), std::string::npos) << "no entity to undo: " << href.substr(0, 200);
  const HttpReply process = Get(href + "?days=3650");
  ASSERT_EQ(process.status, 200) << href << ": " << process.body.substr(0, 500);
  EXPECT_NE(process.body.find("<h1>" + name + " on "), std::string::npos) << "the whole name, in the page";
  EXPECT_NE(process.body.find("1 capture; latest "), std::string::npos) << process.body.substr(0, 2000);

  StoreSample(testing::LoadCapture(testing::TestData("captures/qcom-sm8450/tree")), "sim-qcom-102");
  const HttpReply same_model = Get(href + "?days=3650");
  const size_t other = same_model.body.find("\">sim-qcom-102</a>");
  ASSERT_NE(other, std::string::npos) << same_model.body.substr(0, 2000);
  const size_t other_href = same_model.body.rfind("href=\"", other) + 6;
  const HttpReply elsewhere = Get(same_model.body.substr(other_href, other - other_href));
  EXPECT_EQ(elsewhere.status, 200) << elsewhere.body.substr(0, 500);
  EXPECT_NE(elsewhere.body.find("<h1>" + name + " on <a href=\"/device/sim-qcom-102\">"), std::string::npos);

  // The same from a page named by the process's name: sim-qcom-101's latest capture has no
  // com.tencent.mm (its pid carries the long name), so its link names sim-qcom-102's capture.
  const HttpReply by_name = Get("/device/sim-qcom-102/process/com.tencent.mm?days=3650");
  ASSERT_EQ(by_name.status, 200) << by_name.body.substr(0, 500);
  const size_t first = by_name.body.find("\">sim-qcom-101</a>");
  ASSERT_NE(first, std::string::npos) << by_name.body;
  const size_t first_href = by_name.body.rfind("href=\"", first) + 6;
  const HttpReply back = Get(by_name.body.substr(first_href, first - first_href));
  EXPECT_EQ(back.status, 200) << back.body.substr(0, 500);
  EXPECT_NE(back.body.find("<h1>com.tencent.mm on <a href=\"/device/sim-qcom-101\">"), std::string::npos)
      << back.body.substr(0, 500);
}

TEST(DashboardSiteStoreTest, AnUnreadableTokenTableRefusesThePages) {
  absl::StatusOr<std::unique_ptr<storage::Store>> sqlite = storage::OpenSqliteStore(":memory:");
  ASSERT_TRUE(sqlite.ok());
  auto failing = std::make_unique<testing::FailingStore>(std::move(*sqlite));
  failing->fail_token_reads = true;
  absl::StatusOr<std::unique_ptr<TestServer>> server = TestServer::StartWithStore(std::move(failing), WithDashboard());
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = (*server)->server().http_address();
  HttpReply reply = HttpGet("127.0.0.1", std::atoi(address.substr(address.rfind(':') + 1).c_str()), "/");
  EXPECT_EQ(reply.status, 503) << reply.error;
  EXPECT_EQ(reply.body.find("Fleet:"), std::string::npos);
}

TEST(DashboardSessionsTest, SessionsExpireOnTheClock) {
  testing::ManualSteadyClock clock;
  server::DashboardSessions sessions(clock, std::chrono::seconds(60));
  absl::StatusOr<std::string> a = sessions.Create("token-a");
  ASSERT_TRUE(a.ok());
  clock.Advance(std::chrono::seconds(30));
  absl::StatusOr<std::string> b = sessions.Create("token-b");
  ASSERT_TRUE(b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_EQ(sessions.TokenOf(*a), "token-a");
  EXPECT_EQ(sessions.TokenOf("mft_unknown"), std::nullopt);
  clock.Advance(std::chrono::seconds(31));  // a is 61 s old, b 31 s
  EXPECT_EQ(sessions.TokenOf(*a), std::nullopt);
  EXPECT_EQ(sessions.TokenOf(*b), "token-b");
  sessions.Drop(*b);
  EXPECT_EQ(sessions.TokenOf(*b), std::nullopt);
}

TEST(DashboardSessionsTest, ATokensOwnOldestMakesRoomAndAFullServerRefusesNewLogins) {
  testing::ManualSteadyClock clock;
  server::DashboardSessions sessions(clock, std::chrono::seconds(600), /*capacity=*/3, /*per_token=*/2);
  absl::StatusOr<std::string> admin = sessions.Create("token-admin");
  ASSERT_TRUE(admin.ok());
  clock.Advance(std::chrono::seconds(1));
  absl::StatusOr<std::string> read1 = sessions.Create("token-read");
  clock.Advance(std::chrono::seconds(1));
  absl::StatusOr<std::string> read2 = sessions.Create("token-read");
  clock.Advance(std::chrono::seconds(1));
  absl::StatusOr<std::string> read3 = sessions.Create("token-read");  // its third: its own first goes
  ASSERT_TRUE(read1.ok() && read2.ok() && read3.ok());
  EXPECT_EQ(sessions.TokenOf(*read1), std::nullopt);
  EXPECT_EQ(sessions.TokenOf(*read2), "token-read");
  EXPECT_EQ(sessions.TokenOf(*admin), "token-admin") << "the oldest of all, yet another token's";
  // Three sessions open, none of token-other's: its login is refused, and nobody is logged out.
  absl::StatusOr<std::string> other = sessions.Create("token-other");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(other.status().message().find("Bearer"), std::string::npos) << other.status();
  EXPECT_EQ(sessions.TokenOf(*admin), "token-admin");
  EXPECT_EQ(sessions.TokenOf(*read2), "token-read");
  EXPECT_EQ(sessions.TokenOf(*read3), "token-read");
  sessions.Drop(*admin);  // logged out: room again
  EXPECT_TRUE(sessions.Create("token-other").ok());
}

TEST(DashboardSessionsTest, CookieValueFindsItsCookieOnly) {
  EXPECT_EQ(server::CookieValue("a=1; memfleet_session=xyz; b=2", "memfleet_session"), "xyz");
  EXPECT_EQ(server::CookieValue("memfleet_session_old=1", "memfleet_session"), "");
  EXPECT_EQ(server::CookieValue("", "memfleet_session"), "");
}

}  // namespace
}  // namespace memfleet
