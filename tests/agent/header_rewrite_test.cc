// The capture header the agent sends: a capture tree replays as the agent's device at the capture time,
// with every other header fact kept; and the capture id that the server deduplicates by.
#include "agent/header_rewrite.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/device_facts.h"
#include "gtest/gtest.h"
#include "capture/capture_header.h"
#include "tests/support/fake_root_fs.h"
#include "tests/support/load_tree.h"
#include "tests/support/test_paths.h"

namespace memfleet::agent {
namespace {

TEST(RewriteCaptureHeaderTest, ReplacesDeviceAndTimeKeepsTheRest) {
  // tests/data/captures/qcom-sm8450/tree/capture.json: device sim-qcom-101, 2026-11-30T08:00:00Z,
  // page_size 4096, ddr_size_kb 16777216.
  std::string original = testing::ReadFileForTest(testing::TestData("captures/qcom-sm8450/tree/capture.json"));
  ASSERT_NE(original.find("sim-qcom-101"), std::string::npos);
  absl::StatusOr<std::string> rewritten = RewriteCaptureHeader(original, "lab-7", "2026-12-02T16:15:00Z");
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  absl::StatusOr<capture::CaptureHeader> h = capture::ParseCaptureHeader(*rewritten);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->device_id, "lab-7");
  EXPECT_EQ(h->captured_at, "2026-12-02T16:15:00Z");
  EXPECT_EQ(h->page_size, 4096u);
  EXPECT_FALSE(h->page_size_defaulted);
  EXPECT_EQ(h->ddr_size_kb, 16777216u);
  EXPECT_EQ(rewritten->find("sim-qcom-101"), std::string::npos);
  // Field order is kept: "format" still leads, device_id still precedes captured_at.
  EXPECT_LT(rewritten->find("\"format\""), rewritten->find("\"device_id\""));
  EXPECT_LT(rewritten->find("\"device_id\""), rewritten->find("\"captured_at\""));
  EXPECT_LT(rewritten->find("\"captured_at\""), rewritten->find("\"ddr_size_kb\""));
}

TEST(RewriteCaptureHeaderTest, KeepsBuildFactsAndUnknownFields) {
  std::string original = R"({"format": 1, "device_id": "old", "captured_at": "2020-01-01T00:00:00Z",
    "model": "Pixel 9", "soc": "tensor-g4", "android_version": 15, "vendor_x": {"a": [1, 2]}})";
  absl::StatusOr<std::string> rewritten = RewriteCaptureHeader(original, "lab-7", "2026-12-02T16:15:00Z");
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  absl::StatusOr<capture::CaptureHeader> h = capture::ParseCaptureHeader(*rewritten);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->facts.at("model"), "Pixel 9");
  EXPECT_EQ(h->facts.at("soc"), "tensor-g4");
  EXPECT_EQ(h->android_version, 15);
  EXPECT_NE(rewritten->find("\"vendor_x\""), std::string::npos);
  EXPECT_TRUE(h->page_size_defaulted);  // no page_size was invented
}

TEST(RewriteCaptureHeaderTest, AddsMissingDeviceAndTime) {
  absl::StatusOr<std::string> rewritten = RewriteCaptureHeader(R"({"format": 1})", "lab-7", "2026-12-02T16:15:00Z");
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  absl::StatusOr<capture::CaptureHeader> h = capture::ParseCaptureHeader(*rewritten);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->device_id, "lab-7");
  EXPECT_EQ(h->captured_at, "2026-12-02T16:15:00Z");
}

TEST(RewriteCaptureHeaderTest, WritesTheAgentsLabelsOverTheTreesOwn) {
  const std::string original = R"({"format": 1, "device_id": "old", "captured_at": "2020-01-01T00:00:00Z",
    "labels": {"run": "recorded", "bench": "x"}})";
  absl::StatusOr<std::string> labelled =
      RewriteCaptureHeader(original, "lab-7", "2026-12-02T16:15:00Z", {{"rack", "7"}, {"run", "1234"}});
  ASSERT_TRUE(labelled.ok()) << labelled.status();
  absl::StatusOr<capture::CaptureHeader> h = capture::ParseCaptureHeader(*labelled);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->labels, (capture::Labels{{"rack", "7"}, {"run", "1234"}}));
  // No --label: the replayed tree's labels are not this agent's, so none are sent.
  absl::StatusOr<std::string> unlabelled = RewriteCaptureHeader(original, "lab-7", "2026-12-02T16:15:00Z");
  ASSERT_TRUE(unlabelled.ok()) << unlabelled.status();
  EXPECT_EQ(unlabelled->find("\"labels\""), std::string::npos) << *unlabelled;
}

TEST(RewriteCaptureHeaderTest, RefusesWhatIsNotAJsonObject) {
  for (const char* text : {"", "[1, 2]", "\"text\"", "{\"format\": 1", "\x89PNG\r\n", "null", "{\"a\": \"\xff\"}"}) {
    absl::StatusOr<std::string> r = RewriteCaptureHeader(text, "lab-7", "2026-12-02T16:15:00Z");
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << "input: " << text;
  }
}

TEST(RewriteCaptureHeaderTest, DeeplyNestedHeaderIsRefusedNotACrash) {
  // Valid JSON under the 1 MiB header cap: it parsed, and dump() then recursed 100,000 levels deep and
  // overflowed the agent's stack.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string text = R"({"format": 1, "vendor_x": )" + deep + "}";
  absl::StatusOr<std::string> r = RewriteCaptureHeader(text, "lab-7", "2026-12-02T16:15:00Z");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "capture.json: nested more than 64 levels deep (at byte 89); fix or re-record the capture tree");

  capture::Capture c;
  c.AddFile("capture.json", text);
  EXPECT_EQ(RewriteCaptureHeaderOf(c, "lab-7", "2026-12-02T16:15:00Z").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*c.FileContent("capture.json"), text);  // left as it was
}

TEST(RewriteCaptureHeaderTest, RefusesAHeaderOverTheServersSizeCap) {
  const std::string text = R"({"format": 1, "model": ")" + std::string(capture::kMaxCaptureHeaderBytes, 'x') + "\"}";
  absl::StatusOr<std::string> r = RewriteCaptureHeader(text, "lab-7", "2026-12-02T16:15:00Z");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(r.status().message().size(), 200u);
}

TEST(RewriteCaptureHeaderTest, RefusesATimeThatIsNotRfc3339Utc) {
  for (const char* at : {"", "2026-12-02 16:15:00", "2026-12-02T16:15:00", "2026-12-02T16:15:00+01:00",
                         "2026-13-02T16:15:00Z", "2026-12-02T24:00:00Z", "2026-12-02T16:15:00.12Z",
                         "2026-12-02T16:15:00.1234Z", "2026-12-02T16:15:00.12xZ", "2026-12-02T16:15:00,123Z"}) {
    EXPECT_EQ(RewriteCaptureHeader("{}", "lab-7", at).status().code(), absl::StatusCode::kInvalidArgument) << at;
    EXPECT_FALSE(IsRfc3339Utc(at)) << at;
  }
  EXPECT_TRUE(IsRfc3339Utc("2026-12-31T23:59:60Z"));      // a leap second
  EXPECT_TRUE(IsRfc3339Utc("2026-12-02T16:15:00.123Z"));  // what the agent writes
  EXPECT_TRUE(IsRfc3339Utc("2026-12-02T16:15:00Z"));      // what earlier agents wrote
}

TEST(RewriteCaptureHeaderTest, DeviceIdThatIsNotUtf8DoesNotThrow) {
  absl::StatusOr<std::string> r = RewriteCaptureHeader("{}", "lab\xff-7", "2026-12-02T16:15:00Z");
  EXPECT_TRUE(r.ok()) << r.status();
}

TEST(RewriteCaptureHeaderTest, RewritesTheNodeOfACapture) {
  capture::Capture c;
  c.AddFile("capture.json", R"({"format": 1, "device_id": "old", "captured_at": "2020-01-01T00:00:00Z"})");
  c.AddFile("proc/meminfo", "MemTotal: 1 kB\n");
  ASSERT_TRUE(RewriteCaptureHeaderOf(c, "lab-7", "2026-12-02T16:15:00Z").ok());
  absl::StatusOr<capture::CaptureHeader> h = capture::ParseCaptureHeader(*c.FileContent("capture.json"));
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->device_id, "lab-7");
  EXPECT_EQ(*c.FileContent("proc/meminfo"), "MemTotal: 1 kB\n");

  capture::Capture no_header;
  EXPECT_EQ(RewriteCaptureHeaderOf(no_header, "lab-7", "2026-12-02T16:15:00Z").code(),
            absl::StatusCode::kInvalidArgument);
  capture::Capture failed_header;
  failed_header.AddError("capture.json", "EACCES");
  EXPECT_EQ(RewriteCaptureHeaderOf(failed_header, "lab-7", "2026-12-02T16:15:00Z").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DeviceFactsTest, FromAHeader) {
  absl::StatusOr<DeviceFacts> f = DeviceFactsFromHeader(
      R"({"format": 1, "device_id": "d", "captured_at": "2026-12-02T16:15:00Z", "page_size": 16384,
          "model": "Pixel 9", "soc": "tensor-g4", "build_fingerprint": "google/x/y:15/AP/1:user/release-keys",
          "kernel": "6.1.75-android14"})");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->model, "Pixel 9");
  EXPECT_EQ(f->soc, "tensor-g4");
  EXPECT_EQ(f->build_fingerprint, "google/x/y:15/AP/1:user/release-keys");
  EXPECT_EQ(f->kernel, "6.1.75-android14");
  EXPECT_EQ(f->page_size, 16384u);
}

TEST(DeviceFactsTest, SampleTreeHasNoBuildFacts) {
  // The bundled qcom-sm8450 header names no model or SoC: they stay empty (--model / --soc fill them).
  absl::StatusOr<DeviceFacts> f =
      DeviceFactsFromHeader(testing::ReadFileForTest(testing::TestData("captures/qcom-sm8450/tree/capture.json")));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->model, "");
  EXPECT_EQ(f->soc, "");
  EXPECT_EQ(f->page_size, 4096u);
}

TEST(DeviceFactsTest, DeviceIdsTheServerAccepts) {
  EXPECT_TRUE(CheckDeviceId("sim-qcom-101").ok());
  EXPECT_TRUE(CheckDeviceId("lab.rack-3:slot_7@farm+a").ok());
  EXPECT_TRUE(CheckDeviceId(std::string(128, 'a')).ok());
  EXPECT_EQ(CheckDeviceId("").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckDeviceId(std::string(129, 'a')).code(), absl::StatusCode::kInvalidArgument);
  for (const char* bad : {"a b", "a/b", "dev\n", "caf\xc3\xa9", "a\"b"}) {
    EXPECT_EQ(CheckDeviceId(bad).code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(DeviceFactsTest, LiveRootKernelFromOsrelease) {
  testing::FakeRootFs fs;
  fs.AddFile("proc/sys/kernel/osrelease", "6.1.0-28-amd64\n");
  DeviceFacts f = LiveRootFacts(fs, 16384, 1000);
  EXPECT_EQ(f.kernel, "6.1.0-28-amd64");  // without its newline
  EXPECT_EQ(f.model, "linux-host");       // no cmd/getprop: the root has no getprop
  EXPECT_EQ(f.soc, "");
  EXPECT_EQ(f.android_version, std::nullopt);
  EXPECT_EQ(f.page_size, 16384u);
  EXPECT_EQ(f.access, "shell");
  EXPECT_EQ(f.selinux, "none");  // no sys/fs/selinux
  EXPECT_EQ(fs.commands(), (std::vector<std::string>{"cmd/getprop"}));

  testing::FakeRootFs denied;
  denied.AddError("proc/sys/kernel/osrelease", "EACCES");
  denied.AddError("sys/fs/selinux/enforce", "EACCES");
  DeviceFacts d = LiveRootFacts(denied, 4096, 0);
  EXPECT_EQ(d.kernel, "");
  EXPECT_EQ(d.access, "root");
  EXPECT_EQ(d.selinux, "unknown");
}

TEST(DeviceFactsTest, LiveAndroidRootFactsFromGetprop) {
  testing::FakeRootFs fs;
  fs.AddFile("cmd/getprop", testing::ReadFileForTest(testing::TestData("nodes/getprop/pixel7_a14.txt")));
  fs.AddFile("sys/fs/selinux/enforce", "1");
  DeviceFacts f = LiveRootFacts(fs, 4096, 2000);
  EXPECT_EQ(f.model, "Pixel 7");
  EXPECT_EQ(f.manufacturer, "Google");
  EXPECT_EQ(f.soc, "GS201");
  EXPECT_EQ(f.build_fingerprint, "google/panther/panther:14/UQ1A.240205.004/11269751:user/release-keys");
  EXPECT_EQ(f.build_type, "user");
  EXPECT_EQ(f.abi, "arm64-v8a");
  EXPECT_EQ(f.android_sdk, "34");
  EXPECT_EQ(f.android_version, 14);
  EXPECT_EQ(f.access, "shell");  // uid 2000 is adb shell
  EXPECT_EQ(f.selinux, "enforcing");
  EXPECT_EQ(f.getprop_problem, "");

  // The header a capture of it gets: what docs/capture-format.md names, in its order, empty ones left out.
  using Facts = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(HeaderFactsOf(f),
            (Facts{{"model", "Pixel 7"},
                   {"manufacturer", "Google"},
                   {"soc", "GS201"},
                   {"build_fingerprint", "google/panther/panther:14/UQ1A.240205.004/11269751:user/release-keys"},
                   {"build_type", "user"},
                   {"android_sdk", "34"},
                   {"abi", "arm64-v8a"},
                   {"access", "shell"},
                   {"selinux", "enforcing"}}));

  testing::FakeRootFs permissive;
  permissive.AddFile("sys/fs/selinux/enforce", "0\n");
  permissive.AddError("cmd/getprop", "ETIMEDOUT");
  DeviceFacts p = LiveRootFacts(permissive, 4096, 0);
  EXPECT_EQ(p.selinux, "permissive");
  EXPECT_EQ(p.model, "");  // getprop exists but failed: not a Linux host, and no model is known
  EXPECT_EQ(p.getprop_problem, "getprop failed (ETIMEDOUT)");
}

TEST(DeviceFactsTest, AndroidFactsReadBackFromTheHeader) {
  absl::StatusOr<DeviceFacts> f = DeviceFactsFromHeader(
      R"({"format": 1, "device_id": "d", "captured_at": "2026-12-02T16:15:00Z", "android_version": 14,
          "manufacturer": "Google", "build_type": "userdebug", "abi": "arm64-v8a", "android_sdk": "34",
          "access": "shell", "selinux": "enforcing"})");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->manufacturer, "Google");
  EXPECT_EQ(f->build_type, "userdebug");
  EXPECT_EQ(f->abi, "arm64-v8a");
  EXPECT_EQ(f->android_sdk, "34");
  EXPECT_EQ(f->android_version, 14);
  EXPECT_EQ(f->access, "shell");
  EXPECT_EQ(f->selinux, "enforcing");
}

TEST(DeviceFactsTest, BadHeaderIsAnError) {
  EXPECT_FALSE(DeviceFactsFromHeader("not json").ok());
  EXPECT_FALSE(DeviceFactsFromHeader(R"({"format": 2, "device_id": "d", "captured_at": "x"})").ok());
}

}  // namespace
}  // namespace memfleet::agent
