// ThreadSanitizer annotations for absl::Mutex and absl::CondVar, linked into every target of a
// MEMFLEET_SANITIZE=thread build (and nothing else).
//
// Why: Debian's libabsl is not built with TSan, so the annotations absl's own mutex.cc carries under
// TSan are compiled out. TSan then sees neither lock nor unlock and reports every access to
// ABSL_GUARDED_BY data as a race. These definitions take the place of absl's entry points in the
// executable (the dynamic linker prefers the executable's symbols), tell TSan what happened, and call
// absl's own implementation (found with dlsym(RTLD_NEXT)).
//
// Model: an unlock is a release before absl's unlock runs; a lock is an acquire after it returns.
// Inside absl's code TSan ignores accesses, which covers absl::Condition callbacks: they run with the
// mutex held, but possibly on another thread (the one unlocking), which TSan could not know.
// Only calls from the executable are annotated (absl's own calls between its entry points, and gRPC's
// locking inside libgrpc, are not). ReleasableMutexLock::Release is annotated here because absl's
// Release calls Unlock from inside libabsl. absl::Notification, BlockingCounter and Barrier lock inside
// libabsl and stay invisible to TSan: memfleet does not use them.
#include <dlfcn.h>
#include <link.h>
#include <sanitizer/tsan_interface.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/base/options.h"
#include "absl/synchronization/mutex.h"

namespace {

#define MEMFLEET_STR2(x) #x
#define MEMFLEET_STR(x) MEMFLEET_STR2(x)

// The Itanium-mangled name of an absl symbol: "_ZN4absl" + inline namespace + the rest.
std::string Mangled(const char* prefix, const char* rest) {
  std::string name = prefix;
  name += "4absl";
#if ABSL_OPTION_USE_INLINE_NAMESPACE
  const std::string ns = MEMFLEET_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  name += std::to_string(ns.size()) + ns;
#endif
  return name + rest;
}

template <typename F>
F Real(const char* prefix, const char* rest) {
  const std::string name = Mangled(prefix, rest);
  void* f = dlsym(RTLD_NEXT, name.c_str());
  if (f == nullptr) {
    std::fprintf(stderr, "tsan absl shim: %s not found in libabsl\n", name.c_str());
    std::abort();
  }
  return reinterpret_cast<F>(f);
}

// absl's entry points call each other (WaitWithTimeout calls WaitWithDeadline): the inner call must
// not release or acquire a second time.
thread_local int depth = 0;
struct Outermost {
  Outermost() : outer(depth++ == 0) {}
  ~Outermost() { --depth; }
  const bool outer;
};

// Only calls from the executable (memfleet's code, instrumented) are annotated. gRPC's own mutexes,
// locked inside uninstrumented libgrpc, stay invisible to TSan as before: annotating them would make
// TSan check the mutex objects themselves, which gRPC hands between threads in ways it cannot see.
struct TextRange {
  uintptr_t begin = UINTPTR_MAX;
  uintptr_t end = 0;
};

int AddMainProgram(struct dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* range = static_cast<TextRange*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    range->begin = std::min(range->begin, begin);
    range->end = std::max(range->end, static_cast<uintptr_t>(begin + ph.p_memsz));
  }
  return 1;  // the main program comes first; stop there
}

bool FromExecutable(const void* return_address) {
  static const TextRange text = [] {
    TextRange range;
    dl_iterate_phdr(AddMainProgram, &range);
    return range;
  }();
  const auto pc = reinterpret_cast<uintptr_t>(return_address);
  return pc >= text.begin && pc < text.end;
}

#define MEMFLEET_REAL(type, prefix, rest, ...)                            \
  static const auto real = Real<type>(prefix, rest);                      \
  Outermost outermost;                                                    \
  if (!outermost.outer || !FromExecutable(__builtin_return_address(0))) { \
    return real(__VA_ARGS__);                                             \
  }                                                                       \
  static_assert(true, "")

constexpr unsigned kRead = __tsan_mutex_read_lock;
constexpr unsigned kTry = __tsan_mutex_try_lock;
constexpr unsigned kTryFailed = __tsan_mutex_try_lock_failed;

void AfterLock(void* mu, unsigned flags) {
  __tsan_mutex_pre_lock(mu, flags);
  __tsan_mutex_post_lock(mu, flags, 0);
}
void BeginUnlock(void* mu, unsigned flags) { __tsan_mutex_pre_unlock(mu, flags); }
void EndUnlock(void* mu, unsigned flags) { __tsan_mutex_post_unlock(mu, flags); }

// Wait-style calls release the mutex and hold it again when they return.
template <typename Call>
auto Waiting(void* mu, Call call) {
  BeginUnlock(mu, 0);
  auto result = call();
  EndUnlock(mu, 0);
  AfterLock(mu, 0);
  return result;
}

using MuFn = void (*)(absl::Mutex*);
using MuTryFn = bool (*)(absl::Mutex*);
using MuCondFn = void (*)(absl::Mutex*, const absl::Condition&);
using MuCondTimeoutFn = bool (*)(absl::Mutex*, const absl::Condition&, absl::Duration);
using MuCondDeadlineFn = bool (*)(absl::Mutex*, const absl::Condition&, absl::Time);
using CvFn = void (*)(absl::CondVar*, absl::Mutex*);
using CvTimeoutFn = bool (*)(absl::CondVar*, absl::Mutex*, absl::Duration);
using CvDeadlineFn = bool (*)(absl::CondVar*, absl::Mutex*, absl::Time);

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  MEMFLEET_REAL(MuFn, "_ZN", "5Mutex4LockEv", this);
  __tsan_mutex_pre_lock(this, 0);
  real(this);
  __tsan_mutex_post_lock(this, 0, 0);
}

void Mutex::ReaderLock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  MEMFLEET_REAL(MuFn, "_ZN", "5Mutex10ReaderLockEv", this);
  __tsan_mutex_pre_lock(this, kRead);
  real(this);
  __tsan_mutex_post_lock(this, kRead, 0);
}

bool Mutex::TryLock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  MEMFLEET_REAL(MuTryFn, "_ZN", "5Mutex7TryLockEv", this);
  __tsan_mutex_pre_lock(this, kTry);
  const bool locked = real(this);
  __tsan_mutex_post_lock(this, locked ? kTry : kTry | kTryFailed, 0);
  return locked;
}

void Mutex::Unlock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  MEMFLEET_REAL(MuFn, "_ZN", "5Mutex6UnlockEv", this);
  BeginUnlock(this, 0);
  real(this);
  EndUnlock(this, 0);
}

void Mutex::ReaderUnlock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  MEMFLEET_REAL(MuFn, "_ZN", "5Mutex12ReaderUnlockEv", this);
  BeginUnlock(this, kRead);
  real(this);
  EndUnlock(this, kRead);
}

void Mutex::LockWhen(const Condition& cond) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  MEMFLEET_REAL(MuCondFn, "_ZN", "5Mutex8LockWhenERKNS0_9ConditionE", this, cond);
  __tsan_mutex_pre_lock(this, 0);
  real(this, cond);
  __tsan_mutex_post_lock(this, 0, 0);
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, Duration timeout) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  MEMFLEET_REAL(MuCondTimeoutFn, "_ZN", "5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE", this, cond,
                timeout);
  __tsan_mutex_pre_lock(this, 0);
  const bool met = real(this, cond, timeout);
  __tsan_mutex_post_lock(this, 0, 0);
  return met;
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, Time deadline) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  MEMFLEET_REAL(MuCondDeadlineFn, "_ZN", "5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE", this, cond,
                deadline);
  __tsan_mutex_pre_lock(this, 0);
  const bool met = real(this, cond, deadline);
  __tsan_mutex_post_lock(this, 0, 0);
  return met;
}

void Mutex::Await(const Condition& cond) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  MEMFLEET_REAL(MuCondFn, "_ZN", "5Mutex5AwaitERKNS0_9ConditionE", this, cond);
  Waiting(this, [&] {
    real(this, cond);
    return true;
  });
}

bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  MEMFLEET_REAL(MuCondTimeoutFn, "_ZN", "5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE", this, cond,
                timeout);
  return Waiting(this, [&] { return real(this, cond, timeout); });
}

bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  MEMFLEET_REAL(MuCondDeadlineFn, "_ZN", "5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE", this, cond, deadline);
  return Waiting(this, [&] { return real(this, cond, deadline); });
}

void ReleasableMutexLock::Release() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  // Its only member is the Mutex*; absl's Release unlocks it and clears it.
  static_assert(sizeof(ReleasableMutexLock) == sizeof(Mutex*), "ReleasableMutexLock layout changed");
  Mutex* const mu = *reinterpret_cast<Mutex* const*>(this);
  MEMFLEET_REAL(void (*)(ReleasableMutexLock*), "_ZN", "19ReleasableMutexLock7ReleaseEv", this);
  BeginUnlock(mu, 0);
  real(this);
  EndUnlock(mu, 0);
}

void CondVar::Wait(Mutex* mu) {
  MEMFLEET_REAL(CvFn, "_ZN", "7CondVar4WaitEPNS0_5MutexE", this, mu);
  Waiting(mu, [&] {
    real(this, mu);
    return true;
  });
}

bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  MEMFLEET_REAL(CvTimeoutFn, "_ZN", "7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE", this, mu, timeout);
  return Waiting(mu, [&] { return real(this, mu, timeout); });
}

bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  MEMFLEET_REAL(CvDeadlineFn, "_ZN", "7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE", this, mu, deadline);
  return Waiting(mu, [&] { return real(this, mu, deadline); });
}

ABSL_NAMESPACE_END
}  // namespace absl

// The same blindness, for memory: Debian's gRPC, protobuf and Abseil libraries hand buffers between
// their threads with synchronization TSan cannot see, so the libc calls they make (memcpy, free, ...)
// are not checked. memfleet's own code is instrumented and fully checked. TSAN_OPTIONS adds to this.
extern "C" const char* __tsan_default_options() { return "ignore_noninstrumented_modules=1"; }
