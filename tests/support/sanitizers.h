// Test support: whether this build runs under ASan or TSan, for the few tests whose subject the
// sanitizer's runtime changes (it takes file descriptors of its own, it replaces malloc). Header-only.
//
//   if (testing::kSanitizerRuntime) GTEST_SKIP() << "a sanitizer's malloc has no glibc arenas";
#ifndef MEMFLEET_TESTS_SUPPORT_SANITIZERS_H_
#define MEMFLEET_TESTS_SUPPORT_SANITIZERS_H_

namespace memfleet::testing {

// GCC says so with __SANITIZE_*__, Clang with __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerRuntime = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizerRuntime = true;
#else
inline constexpr bool kSanitizerRuntime = false;
#endif
#else
inline constexpr bool kSanitizerRuntime = false;
#endif

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_SANITIZERS_H_
