// Test support: how a test waits for another thread or process — it polls the condition until it holds
// or a timeout passes, never sleeps a fixed time. The one polling helper of the tests. Header-only.
//
//   ASSERT_TRUE(testing::WaitFor([&] { return OnlineDevices() == 3; }, std::chrono::seconds(60)));
//   EXPECT_TRUE(testing::WaitFor([&] { return cli_sees_two(); }, 60s, /*every=*/200ms));  // a costly check
#ifndef MEMFLEET_TESTS_SUPPORT_WAIT_FOR_H_
#define MEMFLEET_TESTS_SUPPORT_WAIT_FOR_H_

#include <chrono>
#include <functional>
#include <thread>

namespace memfleet::testing {

// True as soon as `done()` holds, checked every `every`; false when `timeout` passes first (checked once
// more at the end, so a condition that became true meanwhile is not missed).
inline bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout,
                    std::chrono::milliseconds every = std::chrono::milliseconds(10)) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(every);
  }
  return done();
}

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_WAIT_FOR_H_
