#include "accounting/dumpsys_view.h"

#include "accounting/kb_math.h"

namespace memfleet::accounting {
namespace {

Kb Field(const Meminfo& m, const char* key) {
  std::optional<uint64_t> v = m.Get(key);
  if (!v) return std::nullopt;
  return ToKb(*v);
}

Kb FieldOr0(const Meminfo& m, const char* key) {
  Kb v = Field(m, key);
  return v ? v : Kb(0);
}

}  // namespace

DumpsysView ComputeDumpsysSummary(const DumpsysInputs& in) {
  DumpsysView v;
  v.android_version = in.android_version;
  const bool a16 = in.android_version >= 16;
  v.total_pss_kb = in.total_pss_kb;
  v.total_swap_pss_kb = in.total_swap_pss_kb;
  v.memtrack_graphics_kb = in.memtrack_graphics_kb;
  v.memtrack_gl_kb = in.memtrack_gl_kb;
  v.zram_kb = in.zram_kb;
  if (in.meminfo == nullptr) return v;
  const Meminfo& m = *in.meminfo;

  v.total_ram_kb = Field(m, "MemTotal");
  v.free_kb = Field(m, "MemFree");

  // MemInfoReader.getCachedSizeKb: KReclaimable falls back to SReclaimable when it is 0 or absent.
  Kb kreclaimable = FieldOr0(m, "KReclaimable");
  if (*kreclaimable == 0) kreclaimable = FieldOr0(m, "SReclaimable");
  Kb cached = SubKb(AddKb(AddKb(Field(m, "Buffers"), kreclaimable), Field(m, "Cached")), Field(m, "Mapped"));
  if (a16) cached = AddKb(cached, FieldOr0(m, "SwapCached"));
  v.cached_kernel_kb = cached;
  v.cached_pss_kb = in.cached_pss_kb;
  v.free_ram_kb = AddKb(AddKb(in.cached_pss_kb, cached), v.free_kb);

  // MemInfoReader.getKernelUsedSizeKb.
  Kb kernel_used =
      AddKb(AddKb(Field(m, "Shmem"), Field(m, "SUnreclaim")), AddKb(Field(m, "VmallocUsed"), Field(m, "PageTables")));
  if (!in.vmap_stack) kernel_used = AddKb(kernel_used, Field(m, "KernelStack"));
  if (a16) {
    kernel_used = AddKb(kernel_used, AddKb(FieldOr0(m, "SecPageTables"), FieldOr0(m, "Percpu")));
    if (in.kernel_cma_kb && *in.kernel_cma_kb > 0) {
      kernel_used = AddKb(kernel_used, in.kernel_cma_kb);
      v.kernel_cma_kb = in.kernel_cma_kb;
    }
  }

  Kb total_pss = in.total_pss_kb;
  if (in.ion_heaps_kb && in.ion_pools_kb && *in.ion_heaps_kb >= 0 && *in.ion_pools_kb >= 0) {
    Kb unmapped = SubKb(in.ion_heaps_kb, in.dmabuf_mapped_kb);
    kernel_used = AddKb(kernel_used, unmapped);
    total_pss = SubKb(AddKb(total_pss, in.dmabuf_mapped_kb), in.memtrack_graphics_kb);
    v.dmabuf_total_kb = in.ion_heaps_kb;
    v.dmabuf_mapped_kb = in.dmabuf_mapped_kb;
    v.dmabuf_unmapped_kb = unmapped;
  } else if (in.dmabuf_total_exported_kb && *in.dmabuf_total_exported_kb >= 0) {
    Kb unmapped = SubKb(in.dmabuf_total_exported_kb, in.dmabuf_mapped_kb);
    kernel_used = AddKb(kernel_used, unmapped);
    total_pss = SubKb(AddKb(total_pss, in.dmabuf_mapped_kb), in.memtrack_graphics_kb);
    v.dmabuf_total_kb = in.dmabuf_total_exported_kb;
    v.dmabuf_mapped_kb = in.dmabuf_mapped_kb;
    v.dmabuf_unmapped_kb = unmapped;
  }
  if (in.gpu_private_kb && *in.gpu_private_kb >= 0) {
    total_pss = SubKb(total_pss, in.memtrack_gl_kb);
    kernel_used = AddKb(kernel_used, in.gpu_private_kb);
    v.gpu_private_kb = in.gpu_private_kb;
  }
  v.kernel_used_kb = kernel_used;

  v.used_pss_kb = SubKb(total_pss, in.cached_pss_kb);
  v.used_ram_kb = AddKb(v.used_pss_kb, kernel_used);
  // Lost RAM = MemTotal - (TOTAL_PSS - TOTAL_SWAP_PSS) - MemFree - cached - kernelUsed - ZRAM.
  Kb lost = SubKb(v.total_ram_kb, SubKb(total_pss, in.total_swap_pss_kb));
  lost = SubKb(SubKb(SubKb(SubKb(lost, v.free_kb), cached), kernel_used), in.zram_kb);
  // Android 16: NR_SHMEM was subtracted twice (in Cached and in kernelUsed).
  if (a16) lost = AddKb(lost, Field(m, "Shmem"));
  v.lost_ram_kb = lost;

  Kb check = SubKb(AddKb(AddKb(AddKb(v.free_ram_kb, v.used_ram_kb), v.lost_ram_kb), in.zram_kb), in.total_swap_pss_kb);
  // On Android 16 the +Shmem correction makes the sum exceed MemTotal by exactly Shmem.
  Kb expected = a16 ? AddKb(v.total_ram_kb, Field(m, "Shmem")) : v.total_ram_kb;
  if (check && expected) v.identity_holds = *check == *expected;
  return v;
}

}  // namespace memfleet::accounting
