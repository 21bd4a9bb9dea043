// Happens-before edges that ThreadSanitizer cannot see because the hand-over goes through a library not
// built with TSan (gRPC's completion queue hands a callback call from the thread that starts an operation
// to the one that completes it). No-ops outside a TSan build (docs/testing.md, "Threads").
//
//   tsan::HandOver(this);  StartRead(&message);      // the thread giving the object to the library
//   void OnReadDone(bool ok) { tsan::TakeOver(this); ... }  // the thread it comes back on
#ifndef MEMFLEET_COMMON_TSAN_HAPPENS_BEFORE_H_
#define MEMFLEET_COMMON_TSAN_HAPPENS_BEFORE_H_

#if defined(__SANITIZE_THREAD__)
#define MEMFLEET_TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MEMFLEET_TSAN_BUILD 1
#endif
#endif

#ifdef MEMFLEET_TSAN_BUILD
#include <sanitizer/tsan_interface.h>
#endif

namespace memfleet::tsan {

#ifdef MEMFLEET_TSAN_BUILD
inline void HandOver(const void* object) { __tsan_release(const_cast<void*>(object)); }
inline void TakeOver(const void* object) { __tsan_acquire(const_cast<void*>(object)); }
#else
inline void HandOver(const void*) {}
inline void TakeOver(const void*) {}
#endif

}  // namespace memfleet::tsan

#endif  // MEMFLEET_COMMON_TSAN_HAPPENS_BEFORE_H_
