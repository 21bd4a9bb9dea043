#include "agent/small_heap.h"

#include <cstdlib>  // defines __GLIBC__ (features.h) on glibc
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace memfleet::agent {

void UseASmallHeap() {
#if defined(__GLIBC__)
  // The agent's threads (transport, gRPC's pollers and timers) allocate little and rarely at once, so one
  // arena costs no contention worth measuring, and saves the ~1 MB a second arena keeps resident.
  mallopt(M_ARENA_MAX, 1);
  // No extra padding when the heap grows, and trim it when 128 kB are free at the top (a capture is freed
  // whole once it is spooled).
  mallopt(M_TOP_PAD, 0);
  mallopt(M_TRIM_THRESHOLD, 128 * 1024);
#endif
}

namespace {

// gRPC++'s own static initializer calls grpc_init(), which starts gRPC's timer and event-engine threads,
// each allocating (and so fixing the arena limit) before main() runs. A constructor of priority 101 runs
// before every unprioritised static initializer of the executable: in the static build that is all of
// gRPC's. (In a dynamic build the shared libraries initialise first and this comes too late.)
__attribute__((constructor(101))) void UseASmallHeapBeforeStaticInitializers() { UseASmallHeap(); }

}  // namespace

}  // namespace memfleet::agent
