#include "accounting/gfxdev_mapping.h"

namespace memfleet::accounting {

GpuDeviceNaming GpuDeviceNamingOf(Platform platform) {
  switch (platform) {
    case Platform::kQcom:
      return GpuDeviceNaming::kKgsl;
    case Platform::kMtk:
    case Platform::kXring:
    case Platform::kMali:
      return GpuDeviceNaming::kMali;
    case Platform::kGeneric:
      return GpuDeviceNaming::kNone;
  }
  return GpuDeviceNaming::kNone;
}

const char* GpuDeviceMappingNames(GpuDeviceNaming naming) {
  switch (naming) {
    case GpuDeviceNaming::kNone:
      return "no GPU device";
    case GpuDeviceNaming::kKgsl:
      return "/dev/kgsl* and *kgsl-3d0*";
    case GpuDeviceNaming::kMali:
      return "/dev/mali*";
  }
  return "";
}

}  // namespace memfleet::accounting
