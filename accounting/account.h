// Account: the engine's entry point — turns one raw Capture into its Report, by the rules of
// docs/accounting.md, identically for every platform.
//
//   Report r = Account(capture);                       // built-in graphics library list
//   Report r2 = Account(capture, {.graphics_libraries = &lab_list});
//
// Pure: no I/O, no clock. Never fails: bad or missing nodes make their figures null with a warning.
#ifndef MEMFLEET_ACCOUNTING_ACCOUNT_H_
#define MEMFLEET_ACCOUNTING_ACCOUNT_H_

#include <optional>

#include "accounting/model.h"
#include "accounting/graphics_libraries.h"

namespace memfleet::accounting {

struct AccountOptions {
  const GraphicsLibraries* graphics_libraries = nullptr;  // nullptr: GraphicsLibraries::Default()
  // Android version of the dumpsys-compatible view; nullopt: capture.json's android_version, else 14.
  std::optional<int> android_version;
};

Report Account(const Capture& capture, const AccountOptions& options = {});

}  // namespace memfleet::accounting

#endif  // MEMFLEET_ACCOUNTING_ACCOUNT_H_
