#include "capture/capture_header.h"

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "common/untrusted_text.h"
#include "gtest/gtest.h"
#include "tests/support/test_data.h"

namespace memfleet::capture {
namespace {

using memfleet::testing::ReadTestData;

absl::StatusCode CodeOf(const std::string& json) { return ParseCaptureHeader(json).status().code(); }

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
    absl::StatusOr<CaptureHeader> h =
        ParseCaptureHeader(ReadTestData(std::string("captures-samples/") + w.capture + "/capture.json"));
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
  absl::StatusOr<CaptureHeader> h =
      ParseCaptureHeader(R"({"format": 1, "device_id": "d", "captured_at": "2026-01-01T00:00:00Z"})");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->page_size, 4096u);
  EXPECT_TRUE(h->page_size_defaulted);
}

TEST(CaptureHeaderTest, AndroidVersionAsString) {
  absl::StatusOr<CaptureHeader> h =
      ParseCaptureHeader(R"({"format": 1, "device_id": "d", "captured_at": "t", "android_version": "14"})");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->android_version, 14);
  EXPECT_EQ(CodeOf(R"({"format": 1, "device_id": "d", "captured_at": "t", "android_version": "U"})"),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(R"({"format": 1, "device_id": "d", "captured_at": "t", "android_version": 14.5})"),
            absl::StatusCode::kInvalidArgument);
}

TEST(CaptureHeaderTest, BadPageSize) {
  for (const char* v : {"0", "1000", "2048", "4095", "12288", "131072", "-4096", "4096.0", "\"4096\"", "true"}) {
    SCOPED_TRACE(v);
    EXPECT_EQ(CodeOf(std::string(R"({"format": 1, "device_id": "d", "captured_at": "t", "page_size": )") + v + "}"),
              absl::StatusCode::kInvalidArgument);
  }
  for (const char* v : {"4096", "8192", "16384", "32768", "65536"}) {
    SCOPED_TRACE(v);
    absl::StatusOr<CaptureHeader> h = ParseCaptureHeader(
        std::string(R"({"format": 1, "device_id": "d", "captured_at": "t", "page_size": )") + v + "}");
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(h->page_size, std::stoull(v));
  }
}

TEST(CaptureHeaderTest, BadDdrSize) {
  for (const char* v : {"0", "-1", "8388608.5", "\"8388608\"", "[]", "1e400"}) {
    SCOPED_TRACE(v);
    EXPECT_EQ(CodeOf(std::string(R"({"format": 1, "device_id": "d", "captured_at": "t", "ddr_size_kb": )") + v + "}"),
              absl::StatusCode::kInvalidArgument);
  }
}

std::string WithDdr(const std::string& v) {
  return R"({"format": 1, "device_id": "d", "captured_at": "t", "ddr_size_kb": )" + v + "}";
}

TEST(CaptureHeaderTest, DdrSizeUpTo64TiBIsKept) {
  absl::StatusOr<CaptureHeader> h = ParseCaptureHeader(WithDdr("68719476736"));  // 64 TiB in kB
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->ddr_size_kb, 68719476736u);
  EXPECT_FALSE(h->ddr_size_kb_problem.has_value());
}

TEST(CaptureHeaderTest, ImplausibleDdrSizeIsDroppedWithAReasonAndTheRestKept) {
  // 64 TiB + 1 kB, 2^63 - 1 (which summed into a total_kb of 9.2e18), 2^63 and 2^64 - 1 (which did not
  // fit the report's signed figures and left them null without a word).
  for (const char* v : {"68719476737", "9223372036854775807", "9223372036854775808", "18446744073709551615"}) {
    SCOPED_TRACE(v);
    absl::StatusOr<CaptureHeader> h = ParseCaptureHeader(WithDdr(v));
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_FALSE(h->ddr_size_kb.has_value());
    ASSERT_TRUE(h->ddr_size_kb_problem.has_value());
    EXPECT_EQ(*h->ddr_size_kb_problem, std::string("capture.json: \"ddr_size_kb\" is ") + v +
                                           "; more than the 64 TiB (68719476736 kB) a device can have");
    EXPECT_EQ(h->device_id, "d");
    EXPECT_EQ(h->captured_at, "t");
  }
}

// A valid document nested 100,000 levels deep: nlohmann parses it without recursion, and the error
// message for the bad "format" then dumped it recursively and overflowed the stack.
std::string DeepArray(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(CaptureHeaderTest, DeeplyNestedHeaderIsAnErrorNotACrash) {
  for (const char* field : {"format", "page_size", "ddr_size_kb", "android_version", "model", "vendor_x"}) {
    SCOPED_TRACE(field);
    std::string text = R"({"format": 1, "device_id": "d", "captured_at": "t", ")" + std::string(field) +
                       "\": " + DeepArray(100000) + "}";
    if (std::string(field) == "format") text = R"({"format": )" + DeepArray(100000) + R"(, "device_id": "d"})";
    ASSERT_LT(text.size(), 1u << 20);  // under the size cap: only the depth check stands in the way
    absl::StatusOr<CaptureHeader> h = ParseCaptureHeader(text);
    ASSERT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(h.status().message(), std::string("capture.json: nested more than 64 levels deep (at byte ") +
                                        std::to_string(text.find('[') + 63) + ")");  // the object is level 1
  }
  // Brackets inside strings are text, not nesting.
  absl::StatusOr<CaptureHeader> h = ParseCaptureHeader(
      R"({"format": 1, "device_id": "d", "captured_at": "t", "model": ")" + std::string(1000, '[') + R"(\"["})");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->facts.at("model"), std::string(1000, '[') + "\"[");
  // 64 levels is a (strange) header; 65 is not.
  EXPECT_TRUE(
      ParseCaptureHeader(R"({"format": 1, "device_id": "d", "captured_at": "t", "x": )" + DeepArray(63) + "}").ok());
  EXPECT_EQ(CodeOf(R"({"format": 1, "device_id": "d", "captured_at": "t", "x": )" + DeepArray(64) + "}"),
            absl::StatusCode::kInvalidArgument);
}

TEST(CaptureHeaderTest, MessagesQuoteABoundedSnippetOfUntrustedValues) {
  const std::string huge(500000, 'A');
  struct Case {
    std::string field_and_value;
    std::string want;
  };
  const Case cases[] = {
      {R"("format": ")" + huge + "\"",
       R"(capture.json: "format" is ")" + std::string(kSnippetBytes, 'A') + R"("...; only format 1 is known)"},
      {R"("format": [1, 2, 3], "x": 0)", R"(capture.json: "format" is an array of 3 elements; only format 1 is known)"},
      {R"("format": 1, "device_id": "d", "captured_at": "t", "page_size": ")" + huge + "\"",
       R"(capture.json: "page_size" is ")" + std::string(kSnippetBytes, 'A') +
           R"("...; expected a power of two from 4096 to 65536)"},
      {R"("format": 1, "device_id": "d", "captured_at": "t", "ddr_size_kb": {"a": 1, "b": 2})",
       R"(capture.json: "ddr_size_kb" is an object of 2 fields; expected a positive integer)"},
      {R"("format": 1, "device_id": "d", "captured_at": "t", "android_version": "\u0007)" + huge + "\"",
       R"(capture.json: "android_version" is "\x07)" + std::string(kSnippetBytes - 1, 'A') +
           R"("...; expected an integer such as 14)"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<CaptureHeader> h = ParseCaptureHeader("{" + c.field_and_value + "}");
    ASSERT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(h.status().message(), c.want);
  }
  // A syntax error quotes nlohmann's message, which quotes the token it stopped at: bounded too.
  absl::StatusOr<CaptureHeader> bad = ParseCaptureHeader(R"({"format": ")" + huge + "\x01\"}");
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(bad.status().message().size(), 250u) << bad.status().message().substr(0, 300);
  EXPECT_EQ(bad.status().message().rfind("capture.json: not valid JSON: ", 0), 0u)
      << bad.status().message().substr(0, 300);
}

TEST(CaptureHeaderTest, BadFormatAndRequiredFields) {
  EXPECT_EQ(CodeOf(R"({"format": 2, "device_id": "d", "captured_at": "t"})"), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(R"({"format": "1", "device_id": "d", "captured_at": "t"})"), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(R"({"device_id": "d", "captured_at": "t"})"), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(R"({"format": 1, "captured_at": "t"})"), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(R"({"format": 1, "device_id": 7, "captured_at": "t"})"), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(R"({"format": 1, "device_id": "", "captured_at": "t"})"), absl::StatusCode::kInvalidArgument);
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
  EXPECT_EQ(CodeOf(std::string("{\"format\": 1, \"device_id\": \"\xff\xfe\", \"captured_at\": \"t\"}")),
            absl::StatusCode::kInvalidArgument);  // invalid UTF-8
  EXPECT_EQ(CodeOf(std::string(100000, '[')), absl::StatusCode::kInvalidArgument);
  const std::string full = ReadTestData("captures-samples/qcom-edge/capture.json");
  absl::StatusOr<CaptureHeader> cut = ParseCaptureHeader(full.substr(0, full.size() / 2));
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(cut.status().message().empty());
}

}  // namespace
}  // namespace memfleet::capture
