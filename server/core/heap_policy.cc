#include "server/core/heap_policy.h"

#include <cstdlib>  // defines __GLIBC__ (features.h) on glibc
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <utility>

namespace memfleet::server {
namespace {

void LimitArenas(int max_arenas) {
#if defined(__GLIBC__)
  if (max_arenas > 0) mallopt(M_ARENA_MAX, max_arenas);
#else
  (void)max_arenas;
#endif
}

void ReturnFreeHeapPages() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace

HeapPolicy::HeapPolicy(HeapPolicyOptions options)
    : trim_(options.trim ? std::move(options.trim) : std::function<void()>(ReturnFreeHeapPages)) {
  LimitArenas(options.max_arenas);
  if (options.trim_period <= std::chrono::milliseconds::zero()) return;
  SteadyClock& clock = options.clock != nullptr ? *options.clock : RealSteadyClock();
  runner_ = std::make_unique<TaskRunner>(clock);
  runner_->RunEvery(
      options.trim_period, [this] { trim_(); }, clock.Now() + options.trim_period);
}

HeapPolicy::~HeapPolicy() { Stop(); }

void HeapPolicy::Stop() {
  if (runner_ != nullptr) runner_->Stop();
}

}  // namespace memfleet::server
