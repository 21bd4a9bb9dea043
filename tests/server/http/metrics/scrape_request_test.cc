// Which requests the --http-listen port answers, before any token or store is looked at.
#include "server/http/metrics/scrape_request.h"

#include "absl/strings/escaping.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace memfleet::metrics {
namespace {

TEST(ScrapeRequestTest, GetAndHeadOfMetrics) {
  EXPECT_EQ(RouteScrapeRequest("GET", "/metrics", 3).answer, ScrapeAnswer::kMetrics);
  EXPECT_EQ(RouteScrapeRequest("GET", "/metrics?name[]=x", 3).answer, ScrapeAnswer::kMetrics) << "query ignored";
  ScrapeRoute head = RouteScrapeRequest("HEAD", "/metrics", 3);
  EXPECT_EQ(head.answer, ScrapeAnswer::kMetrics);
  EXPECT_TRUE(head.head);
}

TEST(ScrapeRequestTest, OtherPathsAndMethods) {
  EXPECT_EQ(RouteScrapeRequest("GET", "/", 3).status, 404);
  EXPECT_EQ(RouteScrapeRequest("GET", "/metrics/", 3).status, 404);
  EXPECT_EQ(RouteScrapeRequest("GET", "/Metrics", 3).status, 404);
  EXPECT_EQ(RouteScrapeRequest("POST", "/metrics", 3).status, 405);
  EXPECT_EQ(RouteScrapeRequest("DELETE", "/metrics", 3).status, 405);
}

TEST(ScrapeRequestTest, BadTargetsAndTooManyFieldsAre400) {
  EXPECT_EQ(RouteScrapeRequest("GET", "", 0).status, 400);
  EXPECT_EQ(RouteScrapeRequest("GET", "http://lab/metrics", 0).status, 400) << "absolute form";
  EXPECT_EQ(RouteScrapeRequest("GET", "*", 0).status, 400);
  EXPECT_EQ(RouteScrapeRequest("GET", "/metrics\x01", 0).status, 400);
  EXPECT_EQ(RouteScrapeRequest("GET", "/m\xc3\xa9trics", 0).status, 400);
  EXPECT_EQ(RouteScrapeRequest("GET", "/" + std::string(kMaxRequestTargetBytes, 'a'), 0).status, 400);
  EXPECT_EQ(RouteScrapeRequest("GET", "/metrics", kMaxRequestFields).status, 200);
  ScrapeRoute many = RouteScrapeRequest("GET", "/metrics", kMaxRequestFields + 1);
  EXPECT_EQ(many.status, 400);
  EXPECT_NE(many.reason.find("header fields"), std::string::npos);
}

// DNS rebinding sends the attacker's own name as Host; an address or localhost cannot be rebound.
TEST(ScrapeRequestTest, TheHostHeaderMustNameThisServer) {
  const std::vector<std::string> none;
  for (const char* host : {"127.0.0.1", "127.0.0.1:9420", "10.1.2.3:80", "localhost", "LocalHost:9420", "[::1]",
                           "[::1]:9420", "[fe80::1]:1"}) {
    EXPECT_TRUE(HostNamesThisServer(host, none)) << host;
  }
  EXPECT_TRUE(HostNamesThisServer(std::nullopt, none)) << "no Host field: not a browser";
  for (const char* host : {"rebind.evil.example:9420", "evil.example", "", ":9420", "127.0.0.1.evil.example",
                           "localhost.evil.example", "127.0.0.1:port", "127.0.0.1:123456", "::1", "[::1", "[::1]x",
                           "[evil.example]", "127.1", "0x7f.0.0.1", "lab-a:9420"}) {
    EXPECT_FALSE(HostNamesThisServer(host, none)) << host;
  }
  // A NUL inside the brackets or the name must not cut the address short ("::" or "127.0.0.1" before it).
  using std::string_literals::operator""s;
  for (const std::string& host : {"[::\0evil.example]:9420"s, "127.0.0.1\0.evil.example"s, "[::1\0]"s}) {
    EXPECT_FALSE(HostNamesThisServer(host, none)) << absl::CEscape(host);
  }
  const std::vector<std::string> names = {"lab-a", "lab-a.example"};
  EXPECT_TRUE(HostNamesThisServer("lab-a:9420", names));
  EXPECT_TRUE(HostNamesThisServer("LAB-A.example", names)) << "names compare without case";
  EXPECT_FALSE(HostNamesThisServer("lab-b:9420", names));
  EXPECT_FALSE(HostNamesThisServer("lab-a.example.evil:9420", names));
}

}  // namespace
}  // namespace memfleet::metrics
