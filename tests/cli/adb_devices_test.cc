#include "cli/adb_devices.h"

#include <gtest/gtest.h>

namespace memfleet::cli {
namespace {

// What adb prints when its server starts on this call, with one phone of each state a farm sees.
constexpr char kListing[] =
    "* daemon not running; starting now at tcp:5037\n"
    "* daemon started successfully\n"
    "List of devices attached\n"
    "R58M123ABC\tdevice\n"
    "emulator-5554\toffline\n"
    "0123456789ABCDEF\tunauthorized\n"
    "192.168.1.20:5555\tdevice\n"
    "\n";

TEST(ParseAdbDevices, EveryListedPhoneWithItsStateInOrder) {
  std::vector<AdbDevice> devices = ParseAdbDevices(kListing);
  ASSERT_EQ(devices.size(), 4u);
  EXPECT_EQ(devices[0].serial, "R58M123ABC");
  EXPECT_TRUE(devices[0].usable());
  EXPECT_EQ(devices[1].serial, "emulator-5554");
  EXPECT_EQ(devices[1].state, "offline");
  EXPECT_FALSE(devices[1].usable());
  EXPECT_EQ(devices[2].state, "unauthorized");
  EXPECT_FALSE(devices[2].usable());
  EXPECT_EQ(devices[3].serial, "192.168.1.20:5555");
  EXPECT_TRUE(devices[3].usable());
}

TEST(ParseAdbDevices, LongListingKeepsSerialAndState) {
  std::vector<AdbDevice> devices =
      ParseAdbDevices("List of devices attached\nR58M123ABC     device usb:1-1 product:a55 model:SM_A556B\n");
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].serial, "R58M123ABC");
  EXPECT_EQ(devices[0].state, "device");
}

TEST(ParseAdbDevices, ASerialEndsAtTheTabNotAtASpace) {
  std::vector<AdbDevice> devices = ParseAdbDevices(
      "List of devices attached\nsp ace\tdevice\nR58 \xe2\x80\xae"
      "1\tunauthorized\r\n");
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].serial, "sp ace");
  EXPECT_EQ(devices[0].state, "device");
  EXPECT_EQ(devices[1].serial,
            "R58 \xe2\x80\xae"
            "1");
  EXPECT_EQ(devices[1].state, "unauthorized");
}

TEST(ParseAdbDevices, NoPhonesIsEmpty) {
  EXPECT_TRUE(ParseAdbDevices("List of devices attached\n\n").empty());
  EXPECT_TRUE(ParseAdbDevices("").empty());
}

TEST(UnusableReason, SaysWhatToDo) {
  EXPECT_NE(UnusableReason("unauthorized").find("accept the USB debugging prompt"), std::string::npos);
  EXPECT_NE(UnusableReason("offline").find("reconnect"), std::string::npos);
  EXPECT_NE(UnusableReason("recovery").find("\"recovery\""), std::string::npos);
}

}  // namespace
}  // namespace memfleet::cli
