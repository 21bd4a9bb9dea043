// The dashboard's request targets: which page a path names, percent-decoding of its segments and
// parameters, and the bounds that make a hostile address a 400, not a crash or a huge allocation.
#include "server/http/dashboard/target.h"

#include <gtest/gtest.h>

#include <string>

namespace memfleet::dashboard {
namespace {

TEST(DashboardTargetTest, NamesEachPage) {
  EXPECT_EQ(ParseDashboardTarget("/")->page, DashboardPage::kFleet);
  EXPECT_EQ(ParseDashboardTarget("/?sort=-total")->page, DashboardPage::kFleet);
  EXPECT_EQ(ParseDashboardTarget("/login")->page, DashboardPage::kLogin);
  EXPECT_EQ(ParseDashboardTarget("/logout")->page, DashboardPage::kLogout);
  absl::StatusOr<DashboardTarget> device = ParseDashboardTarget("/device/qcom-sm8450");
  ASSERT_TRUE(device.ok());
  EXPECT_EQ(device->page, DashboardPage::kDevice);
  EXPECT_EQ(device->device_id, "qcom-sm8450");
  EXPECT_EQ(ParseDashboardTarget("/nothing")->page, DashboardPage::kNotFound);
  EXPECT_EQ(ParseDashboardTarget("/device")->page, DashboardPage::kNotFound);
  EXPECT_EQ(ParseDashboardTarget("/device/a/b")->page, DashboardPage::kNotFound);
  EXPECT_EQ(ParseDashboardTarget("/metrics/x")->page, DashboardPage::kNotFound);
}

TEST(DashboardTargetTest, ASlashInAProcessNameStaysInItsSegment) {
  absl::StatusOr<DashboardTarget> t =
      ParseDashboardTarget("/device/pixel%201/process/%2Fvendor%2Fbin%2Fhw%2Fallocator%3Aservice");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->page, DashboardPage::kProcess);
  EXPECT_EQ(t->device_id, "pixel 1");
  EXPECT_EQ(t->process_name, "/vendor/bin/hw/allocator:service");
}

TEST(DashboardTargetTest, AProcessNamedByItsCaptureAndNameKey) {
  absl::StatusOr<DashboardTarget> t =
      ParseDashboardTarget("/device/pixel-1/capture/pixel-1%3A42/process/0123456789abcdef?days=7");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->page, DashboardPage::kProcess);
  EXPECT_EQ(t->device_id, "pixel-1");
  EXPECT_EQ(t->capture_id, "pixel-1:42");
  EXPECT_EQ(t->process_key, "0123456789abcdef");
  EXPECT_EQ(t->process_name, "");
  EXPECT_EQ(t->Param("days"), "7");
  EXPECT_EQ(ParseDashboardTarget("/device/p/capture/c/pid/1")->page, DashboardPage::kNotFound);
}

// FNV-1a 64 of the name, as 16 hex digits: the published test values of the hash.
TEST(DashboardTargetTest, ProcessKeyIsFnv1a64OfTheName) {
  EXPECT_EQ(ProcessKey(""), "cbf29ce484222325");
  EXPECT_EQ(ProcessKey("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(ProcessKey("foobar"), "85944171f73967e8");
  EXPECT_EQ(ProcessKey(std::string(100000, 'x')).size(), 16u);
}

TEST(DashboardTargetTest, QueryParametersDecodeAndRepeat) {
  absl::StatusOr<DashboardTarget> t = ParseDashboardTarget("/?where=model%3DPixel+8&where=platform=qcom&sort=total");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->Params("where"), (std::vector<std::string>{"model=Pixel 8", "platform=qcom"}));
  EXPECT_EQ(t->Param("sort"), "total");
  EXPECT_EQ(t->Param("absent"), "");
}

TEST(DashboardTargetTest, BrokenEscapesNulAndOversizeAreInvalid) {
  EXPECT_EQ(ParseDashboardTarget("/device/%4").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseDashboardTarget("/device/%zz").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseDashboardTarget("/device/a%00b").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseDashboardTarget("/?sort=%").status().code(), absl::StatusCode::kInvalidArgument);
  const std::string long_id(kMaxDecodedBytes + 1, 'a');
  EXPECT_EQ(ParseDashboardTarget("/device/" + long_id).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ParseDashboardTarget("/device/" + long_id.substr(1)).ok());
  std::string many = "/?";
  for (size_t i = 0; i <= kMaxParameters; ++i) many += "a=1&";
  EXPECT_EQ(ParseDashboardTarget(many).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DashboardTargetTest, FormBodyGivesTheToken) {
  absl::StatusOr<Parameters> form = ParseParameters("token=mft_read_abc%2B%2F&x=");
  ASSERT_TRUE(form.ok());
  ASSERT_EQ(form->size(), 2u);
  EXPECT_EQ((*form)[0], (std::pair<std::string, std::string>{"token", "mft_read_abc+/"}));
  EXPECT_EQ((*form)[1].second, "");
}

}  // namespace
}  // namespace memfleet::dashboard
