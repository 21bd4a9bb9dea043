// The agent's own memory is part of what it reports, so its heap is set up small before anything
// allocates: one malloc arena for all threads (glibc gives each thread that allocates its own arena,
// whose touched pages stay resident), and freed memory handed back to the kernel promptly.
// docs/performance.md ("Agent footprint") has the measured effect.
#ifndef MEMFLEET_AGENT_SMALL_HEAP_H_
#define MEMFLEET_AGENT_SMALL_HEAP_H_

namespace memfleet::agent {

// Also run by a constructor before the static initializers (gRPC++'s starts threads); main() calls it
// too, which links it in. Idempotent; a no-op where the C library is not glibc.
void UseASmallHeap();

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_SMALL_HEAP_H_
