// BaselineStore: imported baseline files, every version kept (docs/baselines.md). Every method is pure:
// a wrapper must forward or fail each one explicitly.
#ifndef MEMFLEET_STORAGE_BASELINE_STORE_H_
#define MEMFLEET_STORAGE_BASELINE_STORE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace memfleet::storage {

// One imported baseline file, as stored.
struct BaselineRecord {
  int64_t version = 0;      // 1, 2, ... in import order
  std::string name;         // the file's "name"
  std::string imported_at;  // RFC 3339
  std::string raw_text;     // the file verbatim
};

class BaselineStore {
 public:
  virtual ~BaselineStore() = default;

  // Stores a new version (the previous ones stay) and returns its number.
  virtual absl::StatusOr<int64_t> PutBaseline(const std::string& name, const std::string& imported_at,
                                              const std::string& raw_text) = 0;
  // version 0 = the latest; nullopt: no such version (or none imported).
  virtual absl::StatusOr<std::optional<BaselineRecord>> GetBaseline(int64_t version) = 0;
};

}  // namespace memfleet::storage

#endif  // MEMFLEET_STORAGE_BASELINE_STORE_H_
