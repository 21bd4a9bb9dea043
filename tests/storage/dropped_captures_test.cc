// The per-device count of captures an agent's full spool dropped (docs/reliability.md, "Spool full"):
// each Hello adds the agent's drops since its last report, so the server's total only grows and survives
// a reopen. On both backends (SQLite, PostgreSQL).
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "storage/store.h"
#include "tests/support/store_backends.h"

namespace memfleet::storage {
namespace {

// Open() opens another store on the test's database (store_ stays unused).
class DroppedCapturesTest : public testing::StoreOnBackendTest {
 protected:
  std::unique_ptr<Store> Open() { return testing::OpenStoreAt(location_); }

  static DeviceRecord Hello(uint64_t dropped, const std::string& at) {
    DeviceRecord d;
    d.device_id = "lab-7";
    d.model = "Xiaomi 12";
    d.last_seen_at = at;
    d.dropped_captures = dropped;
    return d;
  }
};

TEST_P(DroppedCapturesTest, ReportsAddUpAndSurviveAReopen) {
  {
    std::unique_ptr<Store> store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->UpsertDevice(Hello(3, "2026-12-01T08:00:00Z")).ok());
    ASSERT_TRUE(store->UpsertDevice(Hello(0, "2026-12-01T09:00:00Z")).ok());  // nothing new: keeps 3
    ASSERT_TRUE(store->UpsertDevice(Hello(2, "2026-12-01T10:00:00Z")).ok());  // 3 + 2
  }
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  absl::StatusOr<std::optional<DeviceRecord>> device = store->GetDevice("lab-7");
  ASSERT_TRUE(device.ok()) << device.status();
  ASSERT_TRUE(device->has_value());
  EXPECT_EQ((*device)->dropped_captures, 5u);
  absl::StatusOr<std::vector<DeviceSummaryRow>> rows = store->ListDevices();
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].device.dropped_captures, 5u);
}

TEST_P(DroppedCapturesTest, ADeviceThatNeverDroppedShowsZero) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->UpsertDevice(Hello(0, "2026-12-01T08:00:00Z")).ok());
  absl::StatusOr<std::optional<DeviceRecord>> device = store->GetDevice("lab-7");
  ASSERT_TRUE(device.ok() && device->has_value());
  EXPECT_EQ((*device)->dropped_captures, 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, DroppedCapturesTest, testing::kBothBackends, testing::StoreBackendName);

}  // namespace
}  // namespace memfleet::storage
