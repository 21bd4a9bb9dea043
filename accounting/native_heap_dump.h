// Parses bionic's "Android Native Heap Dump" text (am dumpheap -n <pid>) and attributes its
// allocations to graphics libraries.
//
//   absl::StatusOr<NativeHeapDump> d = ParseNativeHeapDump(text);
//   uint64_t bytes = GraphicsNativeBytes(*d, GraphicsLibraries::Default());
//
// An allocation record counts when any frame pc of its backtrace lies in a MAPS mapping (start <= pc <
// end) whose file's base name starts with a graphics library name (docs/accounting.md sections 2 and 5).
#ifndef MEMFLEET_ACCOUNTING_NATIVE_HEAP_DUMP_H_
#define MEMFLEET_ACCOUNTING_NATIVE_HEAP_DUMP_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "accounting/graphics_libraries.h"

namespace memfleet::accounting {

struct HeapRecord {
  bool zygote = false;           // "z 1"
  uint64_t size_bytes = 0;       // "sz"
  uint64_t count = 0;            // "num"
  std::vector<uint64_t> frames;  // "bt" pcs, hexadecimal in the text
};

struct HeapMapping {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string path;  // may be empty (anonymous)
};

struct NativeHeapDump {
  std::vector<HeapRecord> records;
  std::vector<HeapMapping> maps;  // the MAPS section, in file order
};

// InvalidArgument (line number) when the text does not start with "Android Native Heap Dump", a record
// line does not parse, or a MAPS line does not parse; DataLoss when the MAPS section is not closed by
// "END" (a truncated dump). Header lines (Build fingerprint, Total memory, ...) are skipped.
absl::StatusOr<NativeHeapDump> ParseNativeHeapDump(std::string_view text);

// Sum over records with a graphics frame of size_bytes * count (saturating, never overflowing).
uint64_t GraphicsNativeBytes(const NativeHeapDump& dump, const GraphicsLibraries& libraries);

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_NATIVE_HEAP_DUMP_H_
