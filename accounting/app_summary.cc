#include "accounting/app_summary.h"

#include <string_view>

#include "accounting/kb_math.h"

namespace memfleet::accounting {
namespace {

// Checked sums over the heaps: any overflow leaves the whole summary unknown.
class Sum {
 public:
  explicit Sum(const report::Heaps& heaps) : heaps_(heaps) {}

  Kb Private(std::string_view heap) const {
    const report::HeapFigures* h = Find(heap);
    return h == nullptr ? Kb(0) : AddKb(h->private_clean_kb, h->private_dirty_kb);
  }
  Kb PrivateDirty(std::string_view heap) const {
    const report::HeapFigures* h = Find(heap);
    return h == nullptr ? Kb(0) : Kb(h->private_dirty_kb);
  }

 private:
  const report::HeapFigures* Find(std::string_view heap) const {
    auto it = heaps_.find(std::string(heap));
    return it == heaps_.end() ? nullptr : &it->second;
  }
  const report::Heaps& heaps_;
};

bool IsCodeCacheKey(std::string_view name) { return name == "jit_zygote_code_cache" || name == "jit_app_code_cache"; }

}  // namespace

std::optional<report::AppSummary> AppSummaryOf(const report::Heaps& heaps) {
  const Sum sum(heaps);
  // Totals run over the heaps only: the code-cache keys are already inside dalvik_other.
  Kb total_private = 0;
  Kb total_pss = 0;
  Kb total_swap_pss = 0;
  for (const auto& [name, h] : heaps) {
    if (IsCodeCacheKey(name)) continue;
    total_private = AddKb(total_private, AddKb(h.private_clean_kb, h.private_dirty_kb));
    total_pss = AddKb(total_pss, AddKb(h.pss_kb, h.swap_pss_kb));
    total_swap_pss = AddKb(total_swap_pss, h.swap_pss_kb);
  }
  const Kb java_heap = AddKb(sum.PrivateDirty("dalvik"), sum.Private("art"));
  const Kb native_heap = sum.PrivateDirty("native");
  Kb code = 0;
  for (std::string_view heap :
       {"so", "jar", "apk", "ttf", "dex", "oat", "jit_zygote_code_cache", "jit_app_code_cache"}) {
    code = AddKb(code, sum.Private(heap));
  }
  const Kb stack = sum.PrivateDirty("stack");
  const Kb graphics = sum.Private("gfx_dev");
  const Kb named = AddKb(AddKb(AddKb(java_heap, native_heap), AddKb(code, stack)), graphics);
  const Kb private_other = SubKb(total_private, named);
  const Kb system = SubKb(total_pss, total_private);
  for (const Kb& v :
       {java_heap, native_heap, code, stack, graphics, private_other, system, total_pss, total_swap_pss}) {
    if (!v) return std::nullopt;
  }
  report::AppSummary s;
  s.java_heap_kb = *java_heap;
  s.native_heap_kb = *native_heap;
  s.code_kb = *code;
  s.stack_kb = *stack;
  s.graphics_kb = *graphics;
  s.private_other_kb = *private_other;
  s.system_kb = *system;
  s.total_pss_kb = *total_pss;
  s.total_swap_pss_kb = *total_swap_pss;
  return s;
}

}  // namespace memfleet::accounting
