// The capture id grammar: what the agent writes, what the server takes as naming a device, and the two
// ways a capture of one device could be filed under another's id (a device id that is a prefix of
// another; two agents sharing a device id).
#include "proto/capture_id.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace memfleet::wire {
namespace {

constexpr char kAt[] = "2026-12-02T16:15:00Z";

TEST(CaptureIdTest, DeviceCompactTimeInstanceAndSixDigitSequence) {
  EXPECT_EQ(*MakeCaptureId("lab-7", kAt, "3f9a0c1e", 42), "lab-7-20261202T161500Z-3f9a0c1e-000042");
  // The sequence wraps rather than growing the id.
  EXPECT_EQ(*MakeCaptureId("lab-7", kAt, "3f9a0c1e", 1000001), "lab-7-20261202T161500Z-3f9a0c1e-000001");
  // The agent's millisecond time: the id names the whole second.
  EXPECT_EQ(*MakeCaptureId("lab-7", "2026-12-02T16:15:00.987Z", "3f9a0c1e", 42),
            "lab-7-20261202T161500Z-3f9a0c1e-000042");
  EXPECT_EQ(MakeCaptureId("lab-7", "2026-12-02T16:15:00.98Z", "3f9a0c1e", 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeCaptureId("", kAt, "3f9a0c1e", 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeCaptureId("lab-7", "yesterday", "3f9a0c1e", 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeCaptureId("lab-7", "2026-12-02T16:15:00+01", "3f9a0c1e", 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeCaptureId("lab-7", kAt, "3F9A0C1E", 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeCaptureId("lab-7", kAt, "3f9a0c1", 1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CaptureIdTest, TheDeviceIsWhatPrecedesTheFixedSuffix) {
  EXPECT_EQ(CaptureIdDevice("lab-7-20261202T161500Z-3f9a0c1e-000042"), "lab-7");
  EXPECT_EQ(CaptureIdDevice("phone-42-20261202T161500Z-3f9a0c1e-000001"), "phone-42");
  // Ids of earlier agents (no instance part) still name their device: their spools drain after an upgrade.
  EXPECT_EQ(CaptureIdDevice("lab-7-20261202T161500Z-000042"), "lab-7");
  EXPECT_EQ(CaptureIdDevice("phone-42-20261202T161500Z-000001"), "phone-42");
}

TEST(CaptureIdTest, IdsOffTheGrammarNameNoDevice) {
  for (const char* id :
       {"", "cap-1", "phone-42", "-20261202T161500Z-3f9a0c1e-000042", "-20261202T161500Z-000042",
        "lab-7-20261202T161500Z-3f9a0c1e-00042", "lab-7-20261202T161500Z-3f9a0c1e-0000042",
        "lab-7-20261202T161500Z-3f9a0c1g-000042", "lab-7-20261302T161500Z-3f9a0c1e-000042",
        "lab-7-20261202T241500Z-000042", "lab-7-20261202T161500X-000042", "lab-7-20261202t161500Z-000042",
        "lab-7-20261202T161500Z_000042", "lab-7-20261202T161500Z-3f9a0c1e-00004x"}) {
    EXPECT_FALSE(CaptureIdDevice(id).has_value()) << id;
  }
}

TEST(CaptureIdTest, ADeviceIdThatIsAPrefixOfAnotherCannotWriteItsIds) {
  // Device "phone" claiming phone-42's next id: the id names phone-42, so it is refused for "phone".
  const std::string victim = *MakeCaptureId("phone-42", kAt, "3f9a0c1e", 1);
  absl::Status s = CheckCaptureIdOf("phone", victim);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("names device \"phone-42\""), std::string::npos) << s.message();
  EXPECT_TRUE(CheckCaptureIdOf("phone-42", victim).ok());
  EXPECT_EQ(CheckCaptureIdOf("phone", "phone-42-20261202T161500Z-000001").code(), absl::StatusCode::kInvalidArgument);
  // Only the grammar, not a prefix, makes an id the device's.
  absl::Status loose = CheckCaptureIdOf("phone", "phone-anything-at-all");
  EXPECT_EQ(loose.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(loose.message().find("is not <device id>-"), std::string::npos) << loose.message();
}

TEST(CaptureIdTest, TwoInstancesNeverWriteTheSameIdForTheSameSecondAndSequence) {
  absl::StatusOr<std::string> a = NewCaptureInstance();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->size(), kCaptureInstanceChars);
  EXPECT_TRUE(MakeCaptureId("lab-7", kAt, *a, 1).ok()) << *a;  // the generator writes the grammar's alphabet
  std::set<std::string> instances;
  for (int i = 0; i < 64; ++i) instances.insert(*NewCaptureInstance());
  // 64 draws of 32 random bits: a repeat has probability ~5e-7, so one means the source is not random.
  EXPECT_EQ(instances.size(), 64u);
  std::set<std::string> ids;
  for (const std::string& instance : instances) ids.insert(*MakeCaptureId("lab-7", kAt, instance, 1));
  EXPECT_EQ(ids.size(), instances.size());
}

}  // namespace
}  // namespace memfleet::wire
