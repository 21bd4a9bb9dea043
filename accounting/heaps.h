// heaps (docs/accounting.md, "Heaps and the App Summary"): every mapping of a full smaps goes to one
// Android heap by its name — the classification `dumpsys meminfo <pid>` prints — and the heap sums its
// Pss, SwapPss, Private_Clean and Private_Dirty. Two code-cache keys sum the JIT code caches inside
// dalvik_other beside it.
//
//   HeapTally tally;
//   for (const Vma& v : vmas) {
//     tally.Add(v.start, v.end, v.name, v.pss_kb, v.swap_pss_kb, v.private_clean_kb, v.private_dirty_kb);
//   }
//   std::optional<report::Heaps> heaps = tally.Figures();   // nullopt when a sum overflowed
//
// Pure; a HeapTally is a plain value that one thread fills.
#ifndef MEMFLEET_ACCOUNTING_HEAPS_H_
#define MEMFLEET_ACCOUNTING_HEAPS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "accounting/model.h"

namespace memfleet::accounting {

// The heaps in the order dumpsys lists them (report::kHeapNames), then the two code-cache keys.
enum class Heap : uint8_t {
  kNative,
  kDalvik,
  kDalvikOther,
  kStack,
  kCursor,
  kAshmem,
  kGfxDev,
  kOtherDev,
  kSo,
  kJar,
  kApk,
  kTtf,
  kDex,
  kOat,
  kArt,
  kOtherMmap,
  kUnknown,
  kJitZygoteCodeCache,  // inside dalvik_other, not added to it
  kJitAppCodeCache,     // likewise
};
inline constexpr size_t kHeapSlots = static_cast<size_t>(Heap::kJitAppCodeCache) + 1;
static_assert(kHeapSlots == sizeof(report::kHeapNames) / sizeof(report::kHeapNames[0]),
              "Heap and report::kHeapNames list the same heaps in the same order");

struct MappingHeap {
  Heap heap = Heap::kUnknown;
  std::optional<Heap> code_cache;  // kJitZygoteCodeCache or kJitAppCodeCache when it is one
};

// The heap of a mapping named `name` (a trailing " (deleted)" is ignored). `follows_library`: the
// mapping starts where the previous one ended and that one went to `so` — an unnamed mapping there is
// the library's bss.
MappingHeap HeapOfMapping(std::string_view name, bool follows_library);

class HeapTally {
 public:
  // Adds one mapping, in smaps order (the bss rule looks at the previous one).
  void Add(uint64_t start, uint64_t end, std::string_view name, uint64_t pss_kb, uint64_t swap_pss_kb,
           uint64_t private_clean_kb, uint64_t private_dirty_kb);

  bool overflowed() const { return overflowed_; }
  // The heaps with any non-zero figure, by name; nullopt when a sum overflowed.
  std::optional<report::Heaps> Figures() const;

  bool operator==(const HeapTally& o) const;

 private:
  struct Sums {
    uint64_t pss_kb = 0;
    uint64_t swap_pss_kb = 0;
    uint64_t private_clean_kb = 0;
    uint64_t private_dirty_kb = 0;
  };
  void AddTo(Heap heap, uint64_t pss_kb, uint64_t swap_pss_kb, uint64_t private_clean_kb, uint64_t private_dirty_kb);

  std::array<Sums, kHeapSlots> sums_{};
  bool overflowed_ = false;
  bool has_previous_ = false;
  uint64_t previous_end_ = 0;
  Heap previous_heap_ = Heap::kUnknown;
};

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_HEAPS_H_
