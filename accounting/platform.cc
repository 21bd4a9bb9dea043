#include "accounting/platform.h"

#include "accounting/mali_gpu_memory.h"

namespace memfleet::accounting {

Platform DetectPlatform(const Capture& capture) {
  // A KGSL root recorded as an error (EACCES on listing) still proves the driver is there.
  if (const Node* kgsl = capture.Find(kKgslRoot); kgsl != nullptr && !kgsl->is_file()) {
    return Platform::kQcom;
  }
  // An error node of any errno, ENOENT included, means the agent saw the name: it still decides.
  if (capture.Find(kMtkGpuMemory) != nullptr) return Platform::kMtk;
  if (capture.Find(kXgpuGpuMemory) != nullptr) return Platform::kXring;
  if (capture.Find(kMaliDebugfsGpuMemory) != nullptr) return Platform::kMali;
  return Platform::kGeneric;
}

}  // namespace memfleet::accounting
