// The per-device count of captures an agent's full spool dropped (docs/reliability.md, "Spool full"):
// each Hello adds the agent's drops since its last report, so the server's total only grows and survives
// a reopen.
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "storage/sqlite_store.h"

namespace memfleet::storage {
namespace {

class DroppedCapturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "memfleet_dropped_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string db() const { return dir_ + "/memfleet.db"; }

  static DeviceRecord Hello(uint64_t dropped, const std::string& at) {
    DeviceRecord d;
    d.device_id = "lab-7";
    d.model = "Xiaomi 12";
    d.last_seen_at = at;
    d.dropped_captures = dropped;
    return d;
  }

  std::string dir_;
};

TEST_F(DroppedCapturesTest, ReportsAddUpAndSurviveAReopen) {
  {
    absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore(db());
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->UpsertDevice(Hello(3, "2026-12-01T08:00:00Z")).ok());
    ASSERT_TRUE((*store)->UpsertDevice(Hello(0, "2026-12-01T09:00:00Z")).ok());  // nothing new: keeps 3
    ASSERT_TRUE((*store)->UpsertDevice(Hello(2, "2026-12-01T10:00:00Z")).ok());  // 3 + 2
  }
  absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore(db());
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::optional<DeviceRecord>> device = (*store)->GetDevice("lab-7");
  ASSERT_TRUE(device.ok()) << device.status();
  ASSERT_TRUE(device->has_value());
  EXPECT_EQ((*device)->dropped_captures, 5u);
  absl::StatusOr<std::vector<DeviceSummaryRow>> rows = (*store)->ListDevices();
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].device.dropped_captures, 5u);
}

TEST_F(DroppedCapturesTest, ADeviceThatNeverDroppedShowsZero) {
  absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore(db());
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->UpsertDevice(Hello(0, "2026-12-01T08:00:00Z")).ok());
  absl::StatusOr<std::optional<DeviceRecord>> device = (*store)->GetDevice("lab-7");
  ASSERT_TRUE(device.ok() && device->has_value());
  EXPECT_EQ((*device)->dropped_captures, 0u);
}

}  // namespace
}  // namespace memfleet::storage
