#include "accounting/smaps_parser.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

// One hand-written pass over the text. A phone has hundreds of processes with thousands of VMAs
// each and the server accounts whole device farms, so: no regex, no allocation per line, names stay
// views into the input, and the kernel's exact line shapes take a fast path. Anything off that path
// (tabs, a missing newline, huge numbers, garbage) goes through the slow, checked path, which
// either accepts it or says why not. Both paths must give the same result for every text:
// ParseSmapsSummaryGenericPath runs the generic one alone, and a differential fuzzer compares them.
#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MEMFLEET_SMAPS_FAST_KEYS 1
#else
#define MEMFLEET_SMAPS_FAST_KEYS 0
#endif

#include "common/decimal.h"
#include "accounting/dmabuf_name.h"
#include "accounting/gfxdev_mapping.h"
#include "accounting/text_util.h"

namespace memfleet::accounting {
namespace {

enum class Mode { kSmaps, kMaps, kRollup };

// The smaps keys the parsers keep; the values index kVmaFields and kRollupFields.
enum class FieldKey : uint8_t {
  kUnknown,
  kSize,
  kRss,
  kPss,
  kSharedClean,
  kSharedDirty,
  kPrivateClean,
  kPrivateDirty,
  kSwap,
  kSwapPss,
};

constexpr uint64_t Vma::*kVmaFields[] = {
    nullptr,
    &Vma::size_kb,
    &Vma::rss_kb,
    &Vma::pss_kb,
    &Vma::shared_clean_kb,
    &Vma::shared_dirty_kb,
    &Vma::private_clean_kb,
    &Vma::private_dirty_kb,
    &Vma::swap_kb,
    &Vma::swap_pss_kb,
};

// SmapsOrRollupFromFile sums only these (not Size:, Shared_*:, Swap:).
constexpr uint64_t SmapsRollup::*kRollupFields[] = {
    nullptr,
    nullptr,
    &SmapsRollup::rss_kb,
    &SmapsRollup::pss_kb,
    nullptr,
    nullptr,
    &SmapsRollup::private_clean_kb,
    &SmapsRollup::private_dirty_kb,
    nullptr,
    &SmapsRollup::swap_pss_kb,
};

// Why a line was rejected. Overflow is kept apart because it is never a sign of truncation: a
// number that is already too long cannot become valid by reading more.
enum class Failure { kNone, kMalformed, kOverflow };

struct LineError {
  Failure failure = Failure::kNone;
  const char* reason = "";
};

constexpr LineError kOk{};
constexpr LineError Malformed(const char* reason) { return {Failure::kMalformed, reason}; }
constexpr LineError Overflow(const char* reason) { return {Failure::kOverflow, reason}; }

constexpr bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Characters of a smaps field key (THPeligible, Pss_Dirty, ...). Anything else in the first token
// means the line is not a field, so it must be a header.
constexpr bool IsKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '(' || c == ')';
}

struct KeyCharTable {
  bool is_key[256] = {};
  constexpr KeyCharTable() {
    for (int c = 0; c < 256; ++c) is_key[c] = IsKeyChar(static_cast<char>(c));
  }
  constexpr bool operator[](unsigned char c) const { return is_key[c]; }
};
constexpr KeyCharTable kKeyChars;

constexpr int HexDigitValue(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

struct HexTable {
  int8_t value[256] = {};
  constexpr HexTable() {
    for (int c = 0; c < 256; ++c) value[c] = static_cast<int8_t>(HexDigitValue(c));
  }
  constexpr int operator[](unsigned char c) const { return value[c]; }
};
constexpr HexTable kHexDigits;

// Spaces pad smaps values and the name column of VMA headers (up to ~30 of them): skip 8 at a time.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline const char* SkipSpaces(const char* q, const char* end) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  constexpr uint64_t kSpaces = 0x2020202020202020ull;
  while (end - q >= 8) {
    uint64_t word;
    std::memcpy(&word, q, sizeof(word));
    const uint64_t diff = word ^ kSpaces;
    if (diff != 0) return q + (__builtin_ctzll(diff) >> 3);
    q += 8;
  }
#endif
  while (q < end && *q == ' ') ++q;
  return q;
}

// Parses [0-9a-fA-F]+ at *pos. kOverflow when the value does not fit 64 bits.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline Failure ParseHex(std::string_view s, size_t* pos, uint64_t* out) {
  size_t i = *pos;
  uint64_t v = 0;
  // 16 digits always fit; only a longer run needs the check.
  const size_t fits = s.size() - i < 16 ? s.size() : i + 16;
  for (; i < fits; ++i) {
    const int d = kHexDigits[static_cast<unsigned char>(s[i])];
    if (d < 0) break;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  if (i == *pos) return Failure::kMalformed;
  for (; i < s.size(); ++i) {
    const int d = kHexDigits[static_cast<unsigned char>(s[i])];
    if (d < 0) break;
    if (v >> 60) return Failure::kOverflow;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  *pos = i;
  *out = v;
  return Failure::kNone;
}

// Parses [0-9]+ at *pos. kOverflow when the value does not fit 64 bits.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline Failure ParseDec(std::string_view s, size_t* pos, uint64_t* out) {
  size_t digit_count = 0;
  switch (ReadDecimalPrefix(std::string_view(s.data() + *pos, s.size() - *pos), out, &digit_count)) {
    case DecimalResult::kOk:
      *pos += digit_count;
      return Failure::kNone;
    case DecimalResult::kOverflow:
      return Failure::kOverflow;
    case DecimalResult::kNoDigits:
      break;
  }
  return Failure::kMalformed;
}

// Skips one or more blanks; false when there is none.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool SkipSeparator(std::string_view s, size_t* pos) {
  const char* const begin = s.data() + *pos;
  const char* const end = s.data() + s.size();
  const char* q = begin;
  for (;;) {
    q = SkipSpaces(q, end);
    if (q == end || *q != '\t') break;
    ++q;
  }
  if (q == begin) return false;
  *pos = static_cast<size_t>(q - s.data());
  return true;
}

inline bool IsPermChar(char c, char allowed) { return c == allowed || c == '-'; }

// `start-end perms offset dev inode [name]`, as printed by show_vma_header_prefix().
LineError ParseHeader(std::string_view line, Vma* vma) {
  size_t i = 0;
  Failure f = ParseHex(line, &i, &vma->start);
  if (f == Failure::kOverflow) return Overflow("start address does not fit 64 bits");
  if (f != Failure::kNone) {
    return Malformed("not a VMA header (no hex start address) nor a 'Key:' field");
  }
  if (i >= line.size() || line[i] != '-') {
    return Malformed("not a VMA header (no '-' after the start address) nor a 'Key:' field");
  }
  ++i;
  f = ParseHex(line, &i, &vma->end);
  if (f == Failure::kOverflow) return Overflow("end address does not fit 64 bits");
  if (f != Failure::kNone) return Malformed("VMA header: bad end address");
  if (vma->end < vma->start) return Malformed("VMA header: end address below start address");
  if (!SkipSeparator(line, &i)) return Malformed("VMA header: missing permissions");

  if (line.size() - i < 4) return Malformed("VMA header: permissions cut short");
  const char* p = line.data() + i;
  if (!IsPermChar(p[0], 'r') || !IsPermChar(p[1], 'w') || !IsPermChar(p[2], 'x') || (p[3] != 'p' && p[3] != 's')) {
    return Malformed("VMA header: permissions are not [r-][w-][x-][ps]");
  }
  vma->perms = line.substr(i, 4);
  i += 4;
  if (!SkipSeparator(line, &i)) return Malformed("VMA header: missing offset");

  f = ParseHex(line, &i, &vma->offset);
  if (f == Failure::kOverflow) return Overflow("VMA header: offset does not fit 64 bits");
  if (f != Failure::kNone) return Malformed("VMA header: bad offset");
  if (!SkipSeparator(line, &i)) return Malformed("VMA header: missing device");

  const size_t dev_begin = i;
  uint64_t unused = 0;
  f = ParseHex(line, &i, &unused);
  if (f == Failure::kNone && i < line.size() && line[i] == ':') {
    ++i;
    f = ParseHex(line, &i, &unused);
  } else if (f == Failure::kNone) {
    f = Failure::kMalformed;
  }
  if (f == Failure::kOverflow) return Overflow("VMA header: device number does not fit 64 bits");
  if (f != Failure::kNone) return Malformed("VMA header: device is not MAJ:MIN");
  vma->dev = line.substr(dev_begin, i - dev_begin);
  if (!SkipSeparator(line, &i)) return Malformed("VMA header: missing inode");

  f = ParseDec(line, &i, &vma->inode);
  if (f == Failure::kOverflow) return Overflow("VMA header: inode does not fit 64 bits");
  if (f != Failure::kNone) return Malformed("VMA header: bad inode");

  if (i == line.size()) {
    vma->name = {};
    return kOk;
  }
  // The name is padded to a column; an unnamed VMA may still end in a space (perfetto's
  // kTestSmaps).
  if (!SkipSeparator(line, &i)) return Malformed("VMA header: garbage after the inode");
  vma->name = line.substr(i);
  // Paths cannot hold NUL; one here means binary garbage, not a kernel line.
  if (!vma->name.empty() && std::memchr(vma->name.data(), '\0', vma->name.size()) != nullptr) {
    return Malformed("VMA header: NUL byte in the name");
  }
  return kOk;
}

inline FieldKey ClassifyKey(std::string_view key) {
  switch (key.size()) {
    case 3:
      if (key == "Pss") return FieldKey::kPss;
      if (key == "Rss") return FieldKey::kRss;
      break;
    case 4:
      if (key == "Size") return FieldKey::kSize;
      if (key == "Swap") return FieldKey::kSwap;
      break;
    case 7:
      if (key == "SwapPss") return FieldKey::kSwapPss;
      break;
    case 12:
      if (key == "Shared_Clean") return FieldKey::kSharedClean;
      if (key == "Shared_Dirty") return FieldKey::kSharedDirty;
      break;
    case 13:
      if (key == "Private_Clean") return FieldKey::kPrivateClean;
      if (key == "Private_Dirty") return FieldKey::kPrivateDirty;
      break;
    default:
      break;
  }
  return FieldKey::kUnknown;
}

// `<blanks><digits><blanks>kB<blanks>` after the colon of a kept key: the checked slow path.
LineError ParseKbValue(std::string_view line, size_t pos, uint64_t* out) {
  SkipSeparator(line, &pos);
  const Failure f = ParseDec(line, &pos, out);
  if (f == Failure::kOverflow) return Overflow("value does not fit 64 bits");
  if (f != Failure::kNone) return Malformed("field value is not a number");
  SkipSeparator(line, &pos);
  if (line.size() - pos < 2 || line[pos] != 'k' || line[pos + 1] != 'B') {
    return Malformed("field value lacks the ' kB' unit");
  }
  pos += 2;
  SkipSeparator(line, &pos);
  if (pos != line.size()) return Malformed("garbage after ' kB'");
  return kOk;
}

// The kernel's exact shape of a kB field, `<spaces><digits> kB\n`, parsed without looking for the
// end of the line first. Returns the start of the next line, or nullptr for anything else, which
// the caller then hands to the slow path.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline const char* FastKbValue(const char* q, const char* end, uint64_t* out) {
  q = SkipSpaces(q, end);
  uint64_t v = 0;
  size_t digit_count = 0;
  // An overflow is left to the slow path, which says so.
  if (ReadDecimalPrefix(std::string_view(q, static_cast<size_t>(end - q)), &v, &digit_count) != DecimalResult::kOk) {
    return nullptr;
  }
  q += digit_count;
  if (end - q < 4 || std::memcmp(q, " kB\n", 4) != 0) return nullptr;
  *out = v;
  return q + 4;
}

#if MEMFLEET_SMAPS_FAST_KEYS
// Every key the kernel prints in smaps (fs/proc/task_mmu.c, 4.19 to 6.x, plus Android's Name:), so
// that a field line is recognised by one hash probe and two word compares instead of a character
// loop. Keys not listed still work through the generic path.
struct KernelKey {
  std::string_view key;
  FieldKey field;
  bool kb;  // the value is `<number> kB`
};

constexpr KernelKey kKernelKeys[] = {
    {"Size", FieldKey::kSize, true},
    {"KernelPageSize", FieldKey::kUnknown, true},
    {"MMUPageSize", FieldKey::kUnknown, true},
    {"Rss", FieldKey::kRss, true},
    {"Pss", FieldKey::kPss, true},
    {"Pss_Dirty", FieldKey::kUnknown, true},
    {"Pss_Anon", FieldKey::kUnknown, true},
    {"Pss_File", FieldKey::kUnknown, true},
    {"Pss_Shmem", FieldKey::kUnknown, true},
    {"Shared_Clean", FieldKey::kSharedClean, true},
    {"Shared_Dirty", FieldKey::kSharedDirty, true},
    {"Private_Clean", FieldKey::kPrivateClean, true},
    {"Private_Dirty", FieldKey::kPrivateDirty, true},
    {"Referenced", FieldKey::kUnknown, true},
    {"Anonymous", FieldKey::kUnknown, true},
    {"KSM", FieldKey::kUnknown, true},
    {"LazyFree", FieldKey::kUnknown, true},
    {"AnonHugePages", FieldKey::kUnknown, true},
    {"ShmemPmdMapped", FieldKey::kUnknown, true},
    {"FilePmdMapped", FieldKey::kUnknown, true},
    {"Shared_Hugetlb", FieldKey::kUnknown, true},
    {"Private_Hugetlb", FieldKey::kUnknown, true},
    {"Swap", FieldKey::kSwap, true},
    {"SwapPss", FieldKey::kSwapPss, true},
    {"Locked", FieldKey::kUnknown, true},
    {"THPeligible", FieldKey::kUnknown, false},
    {"ProtectionKey", FieldKey::kUnknown, false},
    {"VmFlags", FieldKey::kUnknown, false},
    {"Name", FieldKey::kUnknown, false},
};

constexpr size_t kKeySlots = 64;

// Collision-free over kKernelKeys (checked at compile time below).
constexpr size_t KeyHash(unsigned first, unsigned middle, unsigned last, size_t len) {
  return (first + last * 39 + middle * 24 + len) & (kKeySlots - 1);
}

struct KeySlot {
  uint64_t word0 = 0, word1 = 0;  // the key's bytes, little-endian, zero-padded to 16
  uint64_t mask0 = 0, mask1 = 0;  // which bytes of the two words belong to the key
  uint64_t pad0 = 0, pad1 = 0;    // the bytes between the ':' and column 16
  uint8_t len = 0;                // 0: empty slot
  FieldKey field = FieldKey::kUnknown;
  bool kb = false;
};

struct KeyTable {
  KeySlot slots[kKeySlots] = {};
  bool collision = false;
  constexpr KeyTable() {
    for (const KernelKey& k : kKernelKeys) {
      const size_t len = k.key.size();
      KeySlot& s = slots[KeyHash(static_cast<unsigned char>(k.key[0]), static_cast<unsigned char>(k.key[len / 2]),
                                 static_cast<unsigned char>(k.key[len - 1]), len)];
      if (s.len != 0 || len > 15) collision = true;
      s.len = static_cast<uint8_t>(len);
      s.field = k.field;
      s.kb = k.kb;
      for (size_t i = 0; i < len; ++i) {
        const uint64_t byte = static_cast<unsigned char>(k.key[i]);
        uint64_t& word = i < 8 ? s.word0 : s.word1;
        uint64_t& mask = i < 8 ? s.mask0 : s.mask1;
        word |= byte << (8 * (i % 8));
        mask |= uint64_t{0xff} << (8 * (i % 8));
      }
      for (size_t i = len + 1; i < 16; ++i) {
        (i < 8 ? s.pad0 : s.pad1) |= uint64_t{0xff} << (8 * (i % 8));
      }
    }
  }
};
constexpr KeyTable kKeyTable;
static_assert(!kKeyTable.collision, "KeyHash collides on kKernelKeys: change its constants");

// The kernel key that `p` starts with (followed by ':'), or nullptr.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline const KeySlot* MatchKernelKey(const char* p, const char* end) {
  if (end - p < 16) return nullptr;
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const unsigned colons = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(':'))));
  if (colons == 0) return nullptr;
  const size_t len = static_cast<size_t>(__builtin_ctz(colons));
  if (len == 0) return nullptr;
  const KeySlot& slot =
      kKeyTable.slots[KeyHash(static_cast<unsigned char>(p[0]), static_cast<unsigned char>(p[len / 2]),
                              static_cast<unsigned char>(p[len - 1]), len)];
  uint64_t word0;
  uint64_t word1;
  std::memcpy(&word0, p, sizeof(word0));
  std::memcpy(&word1, p + 8, sizeof(word1));
  if (slot.len != len || (word0 & slot.mask0) != slot.word0 || (word1 & slot.mask1) != slot.word1) {
    return nullptr;
  }
  return &slot;
}

// 0x80 in every byte of x that is not zero.
constexpr uint64_t NonZeroBytes(uint64_t x) {
  return (x | ((x & 0x7f7f7f7f7f7f7f7full) + 0x7f7f7f7f7f7f7f7full)) & 0x8080808080808080ull;
}

// show_smap() prints every kB field as a 16-column label and an 8-column right-aligned value:
// "Rss:                2048 kB\n". For that exact layout the value is read with a few word
// operations and no loop (SWAR; the digit conversion is Lemire's parse_eight_digits_unrolled).
// False for any other layout (wider values, tabs, the end of the text), which FastKbValue takes.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool FixedKbValue(const char* p, const char* end, const KeySlot& slot,
                                                      uint64_t* out) {
  if (end - p < 28 || std::memcmp(p + 24, " kB\n", 4) != 0) return false;
  constexpr uint64_t kSpaces = 0x2020202020202020ull;
  constexpr uint64_t kHighBits = 0x8080808080808080ull;
  uint64_t word0;
  uint64_t word1;
  uint64_t value;
  std::memcpy(&word0, p, sizeof(word0));
  std::memcpy(&word1, p + 8, sizeof(word1));
  std::memcpy(&value, p + 16, sizeof(value));
  if ((word0 & slot.pad0) != (kSpaces & slot.pad0) || (word1 & slot.pad1) != (kSpaces & slot.pad1)) {
    return false;
  }
  const uint64_t non_digit =
      NonZeroBytes(((value & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull) |
                   (((value + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull));
  const uint64_t non_space = NonZeroBytes(value ^ kSpaces);
  const uint64_t digits = ~non_digit & kHighBits;
  // Every byte a space or a digit, the last one a digit, and no space after the first digit.
  if ((non_digit & non_space) != 0 || (digits >> 63) == 0 || digits != (kHighBits << (__builtin_ctzll(digits) & ~7))) {
    return false;
  }
  const uint64_t digit_bytes = (digits >> 7) * 0xff;
  uint64_t v = (value & digit_bytes) - (0x3030303030303030ull & digit_bytes);
  v = v * 10 + (v >> 8);
  v = (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
       (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
      32;
  *out = v;
  return true;
}

// True when the line at `p` is exactly the kernel's 28-byte kB layout ("Key:<spaces><value> kB\n"
// with no earlier newline), so that a key whose value is not summed is skipped without reading it:
// the generic path ignores such a value whatever it is, and only needs the end of the line.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool IsFixedKbLine(const char* p, const char* end) {
  if (end - p < 28 || std::memcmp(p + 24, " kB\n", 4) != 0) return false;
  const __m128i newline = _mm_set1_epi8('\n');
  const __m128i head = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i tail = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8));
  return _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(head, newline), _mm_cmpeq_epi8(tail, newline))) == 0;
}
#endif  // MEMFLEET_SMAPS_FAST_KEYS

inline const char* EndOfLine(const char* p, const char* end) {
  const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
  return nl != nullptr ? static_cast<const char*>(nl) : end;
}

const char* FileName(Mode mode) {
  switch (mode) {
    case Mode::kSmaps:
      return "smaps";
    case Mode::kMaps:
      return "maps";
    case Mode::kRollup:
      return "smaps_rollup";
  }
  return "smaps";
}

absl::Status LineStatus(Mode mode, size_t line_no, bool terminated, const LineError& error, std::string_view line) {
  std::string message =
      absl::StrCat(FileName(mode), " line ", line_no, ": ", error.reason, ": \"", Snippet(line, 100), "\"");
  // A last line without its newline that does not parse was most likely cut by a short read.
  if (!terminated && error.failure == Failure::kMalformed) {
    return absl::DataLossError(absl::StrCat(message, " (text ends in the middle of this line)"));
  }
  return absl::InvalidArgumentError(message);
}

constexpr size_t kFieldCount = static_cast<size_t>(FieldKey::kSwapPss) + 1;
static_assert(sizeof(kVmaFields) / sizeof(kVmaFields[0]) == kFieldCount);
static_assert(sizeof(kRollupFields) / sizeof(kRollupFields[0]) == kFieldCount);

// Collects one Vma per header. Fields land through a table of pointers into the newest Vma, where
// unknown keys point at a scratch word, so the fast path stores without branching on the key.
class VmaSink {
 public:
  explicit VmaSink(std::vector<Vma>* vmas) : vmas_(vmas) {
    for (uint64_t*& slot : slots_) slot = &scratch_;
  }

  Vma* NewVma() {
    Vma* vma = &vmas_->emplace_back();
    for (size_t i = 1; i < kFieldCount; ++i) slots_[i] = &(vma->*kVmaFields[i]);
    return vma;
  }

  void OnKnownKey(FieldKey key, uint64_t value_kb) { *slots_[static_cast<size_t>(key)] = value_kb; }

  bool OnField(FieldKey key, uint64_t value_kb) {
    OnKnownKey(key, value_kb);
    return true;
  }

  bool overflowed() const { return false; }

 private:
  std::vector<Vma>* vmas_;
  uint64_t scratch_ = 0;
  uint64_t* slots_[kFieldCount];
};

// Folds each VMA into SmapsSummary when the next header (or the end) shows it is complete, so a
// VMA's value is its last line of each key, as with VmaSink.
class SummarySink {
 public:
  SummarySink(SmapsSummary* summary, GpuDeviceNaming gpu_naming) : summary_(summary), gpu_naming_(gpu_naming) {
    for (uint64_t*& slot : slots_) slot = &scratch_;
  }

  Vma* NewVma() {
    Fold();
    current_ = Vma();
    has_current_ = true;
    ++summary_->vma_count;
    for (size_t i = 1; i < kFieldCount; ++i) slots_[i] = &(current_.*kVmaFields[i]);
    return &current_;
  }

  void OnKnownKey(FieldKey key, uint64_t value_kb) { *slots_[static_cast<size_t>(key)] = value_kb; }

  bool OnField(FieldKey key, uint64_t value_kb) {
    OnKnownKey(key, value_kb);
    return true;
  }

  // Folds the last VMA; called once after the scan.
  void Finish() {
    Fold();
    has_current_ = false;
  }

  bool overflowed() const { return false; }

 private:
  void Fold() {
    if (!has_current_) return;
    SmapsSummary& s = *summary_;
    s.overflowed |= __builtin_add_overflow(s.pss_kb, current_.pss_kb, &s.pss_kb);
    s.overflowed |= __builtin_add_overflow(s.swap_pss_kb, current_.swap_pss_kb, &s.swap_pss_kb);
    const std::string_view name = current_.name;
    s.heaps.Add(current_.start, current_.end, name, current_.pss_kb, current_.swap_pss_kb, current_.private_clean_kb,
                current_.private_dirty_kb);
    if (IsGpuDeviceMapping(gpu_naming_, name)) {
      s.overflowed |= __builtin_add_overflow(s.gpu_device_pss_kb, current_.pss_kb, &s.gpu_device_pss_kb);
    }
    if (!name.empty() && name[0] == '/') {
      if (IsDmaBufMappingName(name)) s.dmabuf_vmas.push_back(current_);
    } else if (IsLegacyDmaBufMappingName(name)) {
      s.legacy_dmabuf_vmas.push_back(current_);
    }
  }

  SmapsSummary* summary_;
  GpuDeviceNaming gpu_naming_;
  Vma current_;
  bool has_current_ = false;
  uint64_t scratch_ = 0;
  uint64_t* slots_[kFieldCount];
};

// Sums over every VMA, as SmapsOrRollupFromFile does.
class RollupSink {
 public:
  explicit RollupSink(SmapsRollup* rollup) : rollup_(rollup) {
    for (size_t i = 0; i < kFieldCount; ++i) {
      slots_[i] = kRollupFields[i] != nullptr ? &(rollup->*kRollupFields[i]) : &scratch_;
    }
  }

  Vma* NewVma() { return &scratch_vma_; }

  // The fast path only sees values below 10^8, so a sum could only overflow after ~10^11 lines;
  // a sticky flag is checked once at the end instead of a branch per line.
  void OnKnownKey(FieldKey key, uint64_t value_kb) {
    uint64_t* slot = slots_[static_cast<size_t>(key)];
    overflowed_ |= __builtin_add_overflow(*slot, value_kb, slot) && slot != &scratch_;
    rollup_->has_pss |= key == FieldKey::kPss;
  }

  // False when the sum overflows.
  bool OnField(FieldKey key, uint64_t value_kb) {
    uint64_t* slot = slots_[static_cast<size_t>(key)];
    if (slot == &scratch_) return true;
    if (__builtin_add_overflow(*slot, value_kb, slot)) return false;
    rollup_->has_pss |= key == FieldKey::kPss;
    return true;
  }

  bool overflowed() const { return overflowed_; }

 private:
  SmapsRollup* rollup_;
  uint64_t scratch_ = 0;
  uint64_t* slots_[kFieldCount];
  bool overflowed_ = false;
  Vma scratch_vma_;
};

// Which lines may take the fast path; kGenericOnly is the reference the fast path is checked against.
enum class Path { kFast, kGenericOnly };

template <Path kPath = Path::kFast, typename Sink>
absl::Status Scan(std::string_view text, Mode mode, Sink* sink) {
  const char* p = text.data();
  const char* const end = p + text.size();
  size_t line_no = 0;
  bool seen_header = false;
  while (p < end) {
    ++line_no;
    if (*p == '\n') {
      ++p;
      continue;
    }

#if MEMFLEET_SMAPS_FAST_KEYS
    if (kPath == Path::kFast && mode != Mode::kMaps && seen_header) {
      if (const KeySlot* key = MatchKernelKey(p, end)) {
        const char* after_colon = p + key->len + 1;
        if (key->kb && key->field == FieldKey::kUnknown && IsFixedKbLine(p, end) && *after_colon == ' ') {
          p += 28;
          continue;
        }
        if (key->kb) {
          uint64_t value_kb = 0;
          if (FixedKbValue(p, end, *key, &value_kb)) {
            sink->OnKnownKey(key->field, value_kb);
            p += 28;
            continue;
          }
          // FastKbValue takes "Pss:12 kB" too, which the generic path rejects: insist on the blank.
          const char* next =
              after_colon < end && *after_colon == ' ' ? FastKbValue(after_colon, end, &value_kb) : nullptr;
          if (next != nullptr && (key->field == FieldKey::kUnknown || sink->OnField(key->field, value_kb))) {
            p = next;
            continue;
          }
        } else if (after_colon == end || IsBlank(*after_colon) || *after_colon == '\n') {
          const char* eol = EndOfLine(after_colon, end);
          p = eol < end ? eol + 1 : end;
          continue;
        }
        // Not the kernel's exact shape: the generic path below re-reads the line.
      }
    }
#endif

    if (mode != Mode::kMaps) {
      // A field line: its first token is `Key:` followed by a blank or the end of the line.
      const char* q = p;
      while (q < end && kKeyChars[static_cast<unsigned char>(*q)]) ++q;
      if (q != p && q < end && *q == ':' && (q + 1 == end || IsBlank(q[1]) || q[1] == '\n')) {
        const char* eol = EndOfLine(q, end);
        const bool terminated = eol < end;
        const std::string_view line(p, static_cast<size_t>(eol - p));
        if (!seen_header) {
          return LineStatus(mode, line_no, /*terminated=*/true, Malformed("field line before any VMA header"), line);
        }
        p = terminated ? eol + 1 : end;
        const FieldKey key = ClassifyKey(line.substr(0, static_cast<size_t>(q - line.data())));
        if (key == FieldKey::kUnknown) continue;  // VmFlags:, THPeligible:, Pss_Dirty: ...
        uint64_t value_kb = 0;
        const LineError error = ParseKbValue(line, static_cast<size_t>(q - line.data()) + 1, &value_kb);
        if (error.failure != Failure::kNone) {
          return LineStatus(mode, line_no, terminated, error, line);
        }
        if (!sink->OnField(key, value_kb)) {
          return LineStatus(mode, line_no, terminated, Overflow("sum of the values overflows 64 bits"), line);
        }
        continue;
      }
    }

    const char* eol = EndOfLine(p, end);
    const bool terminated = eol < end;
    const std::string_view line(p, static_cast<size_t>(eol - p));
    p = terminated ? eol + 1 : end;
    const LineError error = ParseHeader(line, sink->NewVma());
    if (error.failure != Failure::kNone) return LineStatus(mode, line_no, terminated, error, line);
    seen_header = true;
  }
  if (sink->overflowed()) {
    return absl::InvalidArgumentError(absl::StrCat(FileName(mode), ": the sum of the values overflows 64 bits"));
  }
  return absl::OkStatus();
}

template <Path kPath>
absl::StatusOr<SmapsSummary> Summarize(std::string_view text, GpuDeviceNaming gpu_naming) {
  SmapsSummary summary;
  SummarySink sink(&summary, gpu_naming);
  const absl::Status status = Scan<kPath>(text, Mode::kSmaps, &sink);
  if (!status.ok()) return status;
  sink.Finish();
  return summary;
}

}  // namespace

absl::StatusOr<std::vector<Vma>> ParseSmaps(std::string_view text) {
  std::vector<Vma> vmas;
  // A full smaps VMA is ~22 lines of ~30 bytes; reserving avoids most regrowth on big processes.
  vmas.reserve(text.size() / 640 + 1);
  VmaSink sink(&vmas);
  const absl::Status status = Scan(text, Mode::kSmaps, &sink);
  if (!status.ok()) return status;
  return vmas;
}

absl::StatusOr<std::vector<Vma>> ParseMaps(std::string_view text) {
  std::vector<Vma> vmas;
  vmas.reserve(text.size() / 96 + 1);
  VmaSink sink(&vmas);
  const absl::Status status = Scan(text, Mode::kMaps, &sink);
  if (!status.ok()) return status;
  return vmas;
}

absl::StatusOr<SmapsSummary> ParseSmapsSummary(std::string_view text, GpuDeviceNaming gpu_naming) {
  return Summarize<Path::kFast>(text, gpu_naming);
}

absl::StatusOr<SmapsSummary> ParseSmapsSummaryGenericPath(std::string_view text, GpuDeviceNaming gpu_naming) {
  return Summarize<Path::kGenericOnly>(text, gpu_naming);
}

absl::StatusOr<SmapsRollup> ParseSmapsRollup(std::string_view text) {
  SmapsRollup rollup;
  RollupSink sink(&rollup);
  const absl::Status status = Scan(text, Mode::kRollup, &sink);
  if (!status.ok()) return status;
  return rollup;
}

}  // namespace memfleet::accounting
