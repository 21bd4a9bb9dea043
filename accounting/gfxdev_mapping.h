// Which smaps mappings are the GPU device's, whose Pss is gfxdev_kb (docs/accounting.md, gfxdev_kb):
// memory `gl_kb` already counts, so it is taken out of non_graphics_kb.
//
//   GpuDeviceNaming naming = GpuDeviceNamingOf(Platform::kQcom);
//   IsGpuDeviceMapping(naming, "/kgsl-3d0");        // true: 6.x kernels map KGSL memory from this shmem file
//
// Pure.
#ifndef MEMFLEET_ACCOUNTING_GFXDEV_MAPPING_H_
#define MEMFLEET_ACCOUNTING_GFXDEV_MAPPING_H_

#include <string_view>

#include "accounting/model.h"

namespace memfleet::accounting {

enum class GpuDeviceNaming {
  kNone,  // generic: no GPU device, gfxdev_kb 0
  kKgsl,  // qcom: a name starting with /dev/kgsl or containing kgsl-3d0
  kMali,  // mtk, xring, mali: a name starting with /dev/mali
};

GpuDeviceNaming GpuDeviceNamingOf(Platform platform);

inline bool IsGpuDeviceMapping(GpuDeviceNaming naming, std::string_view name) {
  switch (naming) {
    case GpuDeviceNaming::kNone:
      return false;
    case GpuDeviceNaming::kKgsl:
      return name.substr(0, 9) == "/dev/kgsl" || name.find("kgsl-3d0") != std::string_view::npos;
    case GpuDeviceNaming::kMali:
      return name.substr(0, 9) == "/dev/mali";
  }
  return false;
}

// How the source of gfxdev_kb names the mappings: "/dev/kgsl* and *kgsl-3d0*".
const char* GpuDeviceMappingNames(GpuDeviceNaming naming);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_GFXDEV_MAPPING_H_
