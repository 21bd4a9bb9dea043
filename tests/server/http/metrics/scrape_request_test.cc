// Which requests the --http-listen port answers, before any token or store is looked at.
#include "server/http/metrics/scrape_request.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace memfleet::metrics
