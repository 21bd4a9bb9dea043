// Platform detection (docs/accounting.md section 1): which vendor's GPU nodes a capture carries.
//
//   Platform p = DetectPlatform(capture);   // kQcom when sys/class/kgsl/kgsl exists, ...
#ifndef MEMFLEET_ACCOUNTING_PLATFORM_H_
#define MEMFLEET_ACCOUNTING_PLATFORM_H_

#include "accounting/model.h"

namespace memfleet::accounting {

inline constexpr char kKgslRoot[] = "sys/class/kgsl/kgsl";
inline constexpr char kKgslProcRoot[] = "sys/class/kgsl/kgsl/proc";
inline constexpr char kMtkGpuMemory[] = "proc/mtk_mali/gpu_memory";
inline constexpr char kXgpuGpuMemory[] = "proc/xgpu/gpu_memory";

// First match wins: qcom (KGSL directory), mtk, xring, mali (their gpu_memory node, even when recorded as an
// error: the file's existence decides), else generic.
Platform DetectPlatform(const Capture& capture);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_PLATFORM_H_
