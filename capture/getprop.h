// Android system properties as `getprop` prints them ("[ro.product.model]: [Pixel 7]", one a line), and
// the device facts a capture header takes from them (docs/capture-format.md, "The header"). A static
// agent cannot read bionic's property area itself, so it runs getprop and parses its text here.
//
//   GetpropValues props = ParseGetprop(output);
//   AndroidFacts facts = AndroidFactsOf(props);   // facts.model == "Pixel 7", facts.android_version == 14
//
// Pure functions; thread-safe.
#ifndef MEMFLEET_CAPTURE_GETPROP_H_
#define MEMFLEET_CAPTURE_GETPROP_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace memfleet::capture {

// A phone prints some 1,000 properties in about 60 KB; these bound what a garbage output may cost.
inline constexpr size_t kMaxGetpropBytes = size_t{1} << 20;
inline constexpr size_t kMaxGetpropProperties = 8192;
inline constexpr size_t kMaxPropertyNameBytes = 256;
inline constexpr size_t kMaxPropertyValueBytes = 4096;

struct GetpropValues {
  std::map<std::string, std::string> values;
  // Lines that were not "[name]: [value]" (a value spanning lines, garbage), or over the limits above.
  size_t skipped_lines = 0;
  // The text was longer than kMaxGetpropBytes or held more than kMaxGetpropProperties properties:
  // only what came before the limit was parsed.
  bool truncated = false;
};

// Never fails: what cannot be parsed is counted in skipped_lines. A name is non-empty and holds no
// '[', ']' or whitespace; a value is everything between "]: [" and the line's last ']'.
GetpropValues ParseGetprop(std::string_view text);

// What the header records of a device, from its properties; a property absent, empty, longer than 256
// bytes or holding a control character leaves its fact empty (the server refuses such text in a Hello).
struct AndroidFacts {
  std::string model;                   // ro.product.model
  std::string manufacturer;            // ro.product.manufacturer
  std::string soc;                     // ro.soc.model (Android 12+), else ro.board.platform
  std::string build_fingerprint;       // ro.build.fingerprint
  std::string build_type;              // ro.build.type: user, userdebug, eng
  std::string abi;                     // ro.product.cpu.abi
  std::optional<int> android_sdk;      // ro.build.version.sdk
  std::optional<int> android_version;  // from android_sdk (AndroidVersionOfSdk)
};

AndroidFacts AndroidFactsOf(const GetpropValues& props);

// The Android release of an API level: 21 → 5, ..., 30 → 11, 31 and 32 → 12, 33 → 13, ... 36 → 16 and
// on at one release per level, as since 33. Nullopt below 21 (before Android 5) or above 1000.
std::optional<int> AndroidVersionOfSdk(int sdk);

}  // namespace memfleet::capture

#endif  // MEMFLEET_CAPTURE_GETPROP_H_
