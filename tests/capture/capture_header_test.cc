#include "capture/capture_header.h"

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace memfleet::capture {
namespace {

std::string ReadData(const std::string& relative) {
  std::ifstream in(std::string(MEMFLEET_TEST_DATA_DIR) + "/" + relative, std::ios::binary);
  EXPECT_TRUE(in.good()) << relative;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

absl::StatusCode CodeOf(const std::string& json) {
  return ParseCaptureHeader(json).status().code();
}

TEST(CaptureHeaderTest, FixtureCaptures) {
  struct Want {
    const char* capture;
    const char* device_id;
    std::optional<uint64_t> ddr_size_kb;
  };
  // Read from each capture.json.
  const Want wants[] = {
      {"generic-noddr", "sim-generic-404", std::nullopt},
      {"mtk-mt6989", "sim-mtk-202", 12582912},
      {"qcom-edge", "sim-qcom-505", 8388608},
      {"qcom-sm8450", "sim-qcom-101", 16777216},
      {"xring-o1", "sim-xring-303", 8388608},
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(w.capture);
    absl::StatusOr<CaptureHeader> h = ParseCaptureHeader(
        ReadData(std::string("captures-samples/") + w.capture + "/capture.json"));
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(h->format, 1);
    EXPECT_EQ(h->device_id, w.device_id);
    EXPECT_EQ(h->captured_at, "2026-11-30T08:00:00Z");
    EXPECT_EQ(h->page_size, 4096u);
    EXPECT_FALSE(h->page_size_defaulted);
    EXPECT_EQ(h->ddr_size_kb, w.ddr_size_kb);
    EXPECT_FALSE(h->android_version.has_value());
    EXPECT_TRUE(h->facts.empty());
  }
}

TEST(CaptureHeaderTest, OptionalFieldsAndFacts) {
  absl::StatusOr<CaptureHeader> h = ParseCaptureHeader(R"({
    "format": 1, "device_id": "d1", "captured_at": "2026-01-01T00:00:00Z",
    "page_size": 16384, "android_version": 16,
    "model": "2410DPN6CC", "soc": "SM8750", "build_fingerprint": "Xiaomi/x/x:16/BP2A/1:user/release-keys",
    "kernel": "6.6.30-android15-8", "sdk_int": 36, "extra": {"nested": true}
  })");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->page_size, 16384u);  // 16 KiB-page kernels exist: never assume 4096
  EXPECT_FALSE(h->page_size_defaulted);
  EXPECT_FALSE(h->ddr_size_kb.has_value());
  EXPECT_EQ(h->android_version, 16);
  EXPECT_EQ(h->facts.at("model"), "2410DPN6CC");
  EXPECT_EQ(h->facts.at("soc"), "SM8750");
  EXPECT_EQ(h->facts.at("kernel"), "6.6.30-android15-8");
  EXPECT_EQ(h->facts.at("build_fingerprint"), "Xiaomi/x/x:16/BP2A/1:user/release-keys");
  EXPECT_EQ(h->facts.size(), 4u);  // non-string values are not facts; known fields are not facts
  EXPECT_EQ(h->facts.count("device_id"), 0u);
}

TEST(CaptureHeaderTest, PageSizeDefaults) {
  absl::StatusOr<CaptureHeader> h = ParseCaptureHeader(
      R"({"format": 1, "device_id": "d", "captured_at": "2026-01-01T00:00:00Z"})");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->page_size, 4096u);
  EXPECT_TRUE(h->page_size_defaulted);
}

TEST(CaptureHeaderTest, AndroidVersionAsString) {
  absl::StatusOr<CaptureHeader> h = ParseCaptureHeader(
      R"({"format": 1, "device_id": "d", "captured_at": "t", "android_version": "14"})");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->android_version, 14);
  EXPECT_EQ(
      CodeOf(R"({"format": 1, "device_id": "d", "captured_at": "t", "android_version": "U"})"),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      CodeOf(R"({"format": 1, "device_id": "d", "captured_at": "t", "android_version": 14.5})"),
      absl::StatusCode::kInvalidArgument);
}

TEST(CaptureHeaderTest, BadPageSize) {
  for (const char* v :
       {"0", "1000", "2048", "4095", "12288", "131072", "-4096", "4096.0", "\"4096\"", "true"}) {
    SCOPED_TRACE(v);
    EXPECT_EQ(
        CodeOf(std::string(R"({"format": 1, "device_id": "d", "captured_at": "t", "page_size": )") +
               v + "}"),
        absl::StatusCode::kInvalidArgument);
  }
  for (const char* v : {"4096", "8192", "16384", "32768", "65536"}) {
    SCOPED_TRACE(v);
    absl::StatusOr<CaptureHeader> h = ParseCaptureHeader(
        std::string(R"({"format": 1, "device_id": "d", "captured_at": "t", "page_size": )") + v +
        "}");
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(h->page_size, std::stoull(v));
  }
}

TEST(CaptureHeaderTest, BadDdrSize) {
  for (const char* v : {"0", "-1", "8388608.5", "\"8388608\"", "[]", "1e400"}) {
    SCOPED_TRACE(v);
    EXPECT_EQ(CodeOf(std::string(
                         R"({"format": 1, "device_id": "d", "captured_at": "t", "ddr_size_kb": )") +
                     v + "}"),
              absl::StatusCode::kInvalidArgument);
  }
  // A huge but integral value is a value (the rules then find the DDR size implausible).
  absl::StatusOr<CaptureHeader> h = ParseCaptureHeader(
      R"({"format": 1, "device_id": "d", "captured_at": "t", "ddr_size_kb": 18446744073709551615})");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->ddr_size_kb, UINT64_MAX);
}

TEST(CaptureHeaderTest, BadFormatAndRequiredFields) {
  EXPECT_EQ(CodeOf(R"({"format": 2, "device_id": "d", "captured_at": "t"})"),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(R"({"format": "1", "device_id": "d", "captured_at": "t"})"),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(R"({"device_id": "d", "captured_at": "t"})"),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(R"({"format": 1, "captured_at": "t"})"), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(R"({"format": 1, "device_id": 7, "captured_at": "t"})"),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(R"({"format": 1, "device_id": "", "captured_at": "t"})"),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(R"({"format": 1, "device_id": "d"})"), absl::StatusCode::kInvalidArgument);
}

TEST(CaptureHeaderTest, NotJsonOrNotAnObject) {
  EXPECT_EQ(CodeOf(""), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf("   \n"), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf("[1, 2]"), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf("\"format\""), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf("null"), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(R"({"format": 1, "device_id": "d")"),
            absl::StatusCode::kInvalidArgument);  // cut
  EXPECT_EQ(
      CodeOf(std::string("{\"format\": 1, \"device_id\": \"\xff\xfe\", \"captured_at\": \"t\"}")),
      absl::StatusCode::kInvalidArgument);  // invalid UTF-8
  EXPECT_EQ(CodeOf(std::string(100000, '[')), absl::StatusCode::kInvalidArgument);
  const std::string full = ReadData("captures-samples/qcom-edge/capture.json");
  absl::StatusOr<CaptureHeader> cut = ParseCaptureHeader(full.substr(0, full.size() / 2));
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(cut.status().message().empty());
}

}  // namespace
}  // namespace memfleet::capture
