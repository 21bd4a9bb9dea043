#include "accounting/heaps.h"

#include <string>

namespace memfleet::accounting {
namespace {

constexpr bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

constexpr bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The Java heap proper: the spaces the garbage collector allocates objects in.
constexpr std::string_view kDalvikSpaces[] = {
    "[anon:dalvik-alloc space",        "[anon:dalvik-main space",
    "[anon:dalvik-large object space", "[anon:dalvik-free list large object space",
    "[anon:dalvik-non moving space",   "[anon:dalvik-zygote space",
};

MappingHeap Of(Heap heap) { return MappingHeap{heap, std::nullopt}; }
MappingHeap CodeCache(Heap code_cache) { return MappingHeap{Heap::kDalvikOther, code_cache}; }

// Device files: ashmem regions by their name, everything else "other dev".
MappingHeap DeviceHeap(std::string_view name) {
  if (StartsWith(name, "/dev/ashmem/CursorWindow")) return Of(Heap::kCursor);
  if (StartsWith(name, "/dev/ashmem/jit-zygote-cache")) return CodeCache(Heap::kJitZygoteCodeCache);
  if (StartsWith(name, "/dev/ashmem")) return Of(Heap::kAshmem);
  return Of(Heap::kOtherDev);
}

// Named anonymous memory ("[anon:...]"): the runtime's regions by their prefix, the rest unknown.
MappingHeap AnonymousHeap(std::string_view name) {
  if (!StartsWith(name, "[anon:dalvik-")) return Of(Heap::kUnknown);
  for (std::string_view space : kDalvikSpaces) {
    if (StartsWith(name, space)) return Of(Heap::kDalvik);
  }
  if (StartsWith(name, "[anon:dalvik-jit-code-cache") || StartsWith(name, "[anon:dalvik-data-code-cache")) {
    return CodeCache(Heap::kJitAppCodeCache);
  }
  return Of(Heap::kDalvikOther);
}

// Files mapped by what they are, told by their extension.
std::optional<Heap> FileHeap(std::string_view name) {
  if (EndsWith(name, ".so")) return Heap::kSo;
  if (EndsWith(name, ".jar")) return Heap::kJar;
  if (EndsWith(name, ".apk")) return Heap::kApk;
  if (EndsWith(name, ".ttf")) return Heap::kTtf;
  if (EndsWith(name, ".odex") || (name.size() > 4 && name.find(".dex") != std::string_view::npos) ||
      EndsWith(name, ".vdex")) {
    return Heap::kDex;
  }
  if (EndsWith(name, ".oat")) return Heap::kOat;
  if (EndsWith(name, ".art") || EndsWith(name, ".art]")) return Heap::kArt;
  return std::nullopt;
}

}  // namespace

MappingHeap HeapOfMapping(std::string_view name, bool follows_library) {
  constexpr std::string_view kDeleted = " (deleted)";
  if (EndsWith(name, kDeleted)) name.remove_suffix(kDeleted.size());
  // The order matters and is dumpsys' own: the first rule that matches wins.
  if (StartsWith(name, "[heap]") || StartsWith(name, "[anon:libc_malloc]") || StartsWith(name, "[anon:scudo:") ||
      StartsWith(name, "[anon:GWP-ASan")) {
    return Of(Heap::kNative);
  }
  if (StartsWith(name, "[stack") || StartsWith(name, "[anon:stack_and_tls:")) return Of(Heap::kStack);
  if (std::optional<Heap> file = FileHeap(name)) return Of(*file);
  if (name.find("kgsl-3d0") != std::string_view::npos) return Of(Heap::kGfxDev);
  if (StartsWith(name, "/dev/")) return DeviceHeap(name);
  if (StartsWith(name, "/memfd:jit-cache")) return CodeCache(Heap::kJitAppCodeCache);
  if (StartsWith(name, "/memfd:jit-zygote-cache")) return CodeCache(Heap::kJitZygoteCodeCache);
  if (StartsWith(name, "[anon:")) return AnonymousHeap(name);
  if (!name.empty()) return Of(Heap::kOtherMmap);
  return Of(follows_library ? Heap::kSo : Heap::kUnknown);
}

void HeapTally::AddTo(Heap heap, uint64_t pss_kb, uint64_t swap_pss_kb, uint64_t private_clean_kb,
                      uint64_t private_dirty_kb) {
  Sums& s = sums_[static_cast<size_t>(heap)];
  overflowed_ |= __builtin_add_overflow(s.pss_kb, pss_kb, &s.pss_kb);
  overflowed_ |= __builtin_add_overflow(s.swap_pss_kb, swap_pss_kb, &s.swap_pss_kb);
  overflowed_ |= __builtin_add_overflow(s.private_clean_kb, private_clean_kb, &s.private_clean_kb);
  overflowed_ |= __builtin_add_overflow(s.private_dirty_kb, private_dirty_kb, &s.private_dirty_kb);
}

void HeapTally::Add(uint64_t start, uint64_t end, std::string_view name, uint64_t pss_kb, uint64_t swap_pss_kb,
                    uint64_t private_clean_kb, uint64_t private_dirty_kb) {
  const bool follows_library = has_previous_ && start == previous_end_ && previous_heap_ == Heap::kSo;
  const MappingHeap m = HeapOfMapping(name, follows_library);
  AddTo(m.heap, pss_kb, swap_pss_kb, private_clean_kb, private_dirty_kb);
  if (m.code_cache) AddTo(*m.code_cache, pss_kb, swap_pss_kb, private_clean_kb, private_dirty_kb);
  has_previous_ = true;
  previous_end_ = end;
  previous_heap_ = m.heap;
}

std::optional<report::Heaps> HeapTally::Figures() const {
  if (overflowed_) return std::nullopt;
  report::Heaps heaps;
  for (size_t i = 0; i < kHeapSlots; ++i) {
    const Sums& s = sums_[i];
    if (s.pss_kb == 0 && s.swap_pss_kb == 0 && s.private_clean_kb == 0 && s.private_dirty_kb == 0) continue;
    // The JSON form is signed: a sum beyond int64 is as unusable as an overflow.
    constexpr uint64_t kMax = static_cast<uint64_t>(INT64_MAX);
    if (s.pss_kb > kMax || s.swap_pss_kb > kMax || s.private_clean_kb > kMax || s.private_dirty_kb > kMax) {
      return std::nullopt;
    }
    heaps[report::kHeapNames[i]] =
        report::HeapFigures{static_cast<int64_t>(s.pss_kb), static_cast<int64_t>(s.swap_pss_kb),
                            static_cast<int64_t>(s.private_clean_kb), static_cast<int64_t>(s.private_dirty_kb)};
  }
  return heaps;
}

bool HeapTally::operator==(const HeapTally& o) const {
  for (size_t i = 0; i < kHeapSlots; ++i) {
    const Sums& a = sums_[i];
    const Sums& b = o.sums_[i];
    if (a.pss_kb != b.pss_kb || a.swap_pss_kb != b.swap_pss_kb || a.private_clean_kb != b.private_clean_kb ||
        a.private_dirty_kb != b.private_dirty_kb) {
      return false;
    }
  }
  return overflowed_ == o.overflowed_;
}

}  // namespace memfleet::accounting
