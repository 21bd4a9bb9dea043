#include "accounting/kernel_config.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/support/test_data.h"

namespace memfleet::accounting {
namespace {

using memfleet::testing::ReadTestData;

// `zcat config.gz` of every fixture capture (they are identical) is these five lines, 95 bytes.
TEST(KernelConfigTest, FixtureConfigGzHasVmapStack) {
  for (const char* capture : {"generic-noddr", "mtk-mt6989", "qcom-edge", "qcom-sm8450", "xring-o1"}) {
    SCOPED_TRACE(capture);
    const std::string bytes = ReadTestData(std::string("captures-samples/") + capture + "/proc/config.gz");
    ASSERT_GT(bytes.size(), 2u);
    ASSERT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);  // really gzip, not plain text
    absl::StatusOr<KernelConfig> cfg = ParseKernelConfigGz(bytes);
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    EXPECT_TRUE(cfg->IsEnabled("CONFIG_VMAP_STACK"));
    EXPECT_TRUE(cfg->IsEnabled("CONFIG_CMA_SYSFS"));
    EXPECT_TRUE(cfg->IsEnabled("CONFIG_DMABUF_SYSFS_STATS"));
    EXPECT_EQ(cfg->options.size(), 5u);
    EXPECT_FALSE(cfg->IsEnabled("CONFIG_VMAP"));  // exact names, not prefixes
  }
}

TEST(KernelConfigTest, TruncatedGzipIsDataLoss) {
  const std::string bytes = ReadTestData("captures-samples/qcom-edge/proc/config.gz");
  for (size_t keep : {bytes.size() / 2, bytes.size() - 1, size_t{10}, size_t{3}}) {
    SCOPED_TRACE(keep);
    absl::StatusOr<KernelConfig> cfg = ParseKernelConfigGz(bytes.substr(0, keep));
    EXPECT_EQ(cfg.status().code(), absl::StatusCode::kDataLoss) << cfg.status();
  }
}

TEST(KernelConfigTest, CorruptGzipIsDataLoss) {
  std::string bytes = ReadTestData("captures-samples/qcom-edge/proc/config.gz");
  // Flip a byte of the CRC32 trailer (8 bytes from the end): the text inflates but fails the check.
  bytes[bytes.size() - 8] = static_cast<char>(bytes[bytes.size() - 8] ^ 0xff);
  EXPECT_EQ(ParseKernelConfigGz(bytes).status().code(), absl::StatusCode::kDataLoss);

  std::string garbage = "\x1f\x8b";
  garbage += std::string(40, '\x07');
  EXPECT_EQ(ParseKernelConfigGz(garbage).status().code(), absl::StatusCode::kDataLoss);
}

TEST(KernelConfigTest, InflatedSizeIsCapped) {
  // 64 MiB + 1 zero bytes, gzip'd to 65 KB: refused, not expanded.
  const std::string bomb = ReadTestData("kernel_config/zeros_64mib_plus_1.gz");
  absl::StatusOr<KernelConfig> cfg = ParseKernelConfigGz(bomb);
  EXPECT_EQ(cfg.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(cfg.status().message().find("inflates past"), std::string::npos) << cfg.status();

  // The fixture inflates to exactly 95 bytes: a cap of 95 takes it, 94 refuses it.
  const std::string bytes = ReadTestData("captures-samples/qcom-edge/proc/config.gz");
  EXPECT_TRUE(ParseKernelConfigGz(bytes, 95).ok());
  EXPECT_EQ(ParseKernelConfigGz(bytes, 94).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(KernelConfigTest, ConcatenatedGzipMembersAreOneText) {
  const std::string bytes = ReadTestData("captures-samples/qcom-edge/proc/config.gz");
  absl::StatusOr<KernelConfig> cfg = ParseKernelConfigGz(bytes + bytes);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_TRUE(cfg->IsEnabled("CONFIG_VMAP_STACK"));
}

TEST(KernelConfigTest, PlainTextIsAccepted) {
  const std::string text =
      "#\n"
      "# Automatically generated file; DO NOT EDIT.\n"
      "# Linux/arm64 5.10.198 Kernel Configuration\n"
      "#\n"
      "CONFIG_CC_VERSION_TEXT=\"Android (8508608) clang version 14.0.7\"\n"
      "CONFIG_ARM64=y\n"
      "# CONFIG_VMAP_STACK is not set\n"
      "CONFIG_ZRAM=m\n"
      "CONFIG_LOG_BUF_SHIFT=17\n";
  for (const auto& parse : {ParseKernelConfigText, +[](std::string_view t) { return ParseKernelConfigGz(t); }}) {
    absl::StatusOr<KernelConfig> cfg = parse(text);
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    // "is not set" is a comment, so VMAP is off: the rules then add KernelStack.
    EXPECT_FALSE(cfg->IsEnabled("CONFIG_VMAP_STACK"));
    EXPECT_EQ(cfg->options.count("CONFIG_VMAP_STACK"), 0u);
    EXPECT_TRUE(cfg->IsEnabled("CONFIG_ARM64"));
    EXPECT_FALSE(cfg->IsEnabled("CONFIG_ZRAM"));  // "m" is not "y"
    EXPECT_EQ(cfg->options.at("CONFIG_ZRAM"), "m");
    EXPECT_EQ(cfg->options.at("CONFIG_LOG_BUF_SHIFT"), "17");
    EXPECT_EQ(cfg->options.at("CONFIG_CC_VERSION_TEXT"), "\"Android (8508608) clang version 14.0.7\"");
  }
}

TEST(KernelConfigTest, CrlfAndNoFinalNewline) {
  absl::StatusOr<KernelConfig> cfg = ParseKernelConfigText("CONFIG_A=y\r\nCONFIG_VMAP_STACK=y");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_TRUE(cfg->IsEnabled("CONFIG_A"));
  EXPECT_TRUE(cfg->IsEnabled("CONFIG_VMAP_STACK"));
}

TEST(KernelConfigTest, BadTextNamesTheLine) {
  absl::StatusOr<KernelConfig> cfg = ParseKernelConfigText("CONFIG_A=y\nCONFIG_B=y\nCONFIG_VMAP_ST");
  EXPECT_EQ(cfg.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(cfg.status().message().find("line 3"), std::string::npos) << cfg.status();

  EXPECT_EQ(ParseKernelConfigText("CONFIG_A=").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseKernelConfigText("=y").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseKernelConfigText("CONFIG A=y").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseKernelConfigGz(std::string("\x00\x01\x02garbage", 10)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(KernelConfigTest, EmptyIsAnError) {
  EXPECT_EQ(ParseKernelConfigText("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseKernelConfigGz("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseKernelConfigGz(" \n\n").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace memfleet::accounting
