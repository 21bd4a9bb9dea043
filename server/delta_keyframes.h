// DeltaKeyframes: the keyframe each device's new captures are stored as deltas against (delta storage,
// docs/performance.md "Storage"), kept in memory under a byte budget, least recently used dropped first.
// A device with no entry (first capture, a restart, an eviction) stores its next capture whole, which
// becomes its keyframe; so does every `keyframe_every`-th capture, which bounds what one keyframe's
// loss or a re-accounting has to touch.
//
//   std::optional<DeltaKeyframes::Base> base = keyframes.For(device_id);   // nullopt: store it whole
//   keyframes.Install(device_id, capture_id, whole_blob);                  // after the store committed it
//
// Thread-safe.
#ifndef MEMFLEET_SERVER_DELTA_KEYFRAMES_H_
#define MEMFLEET_SERVER_DELTA_KEYFRAMES_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "proto/capture_codec.h"

namespace memfleet::server {

struct DeltaOptions {
  bool enabled = true;
  uint32_t keyframe_every = 32;          // one whole capture in this many, per device
  size_t cache_bytes = size_t{512} << 20;  // zstd dictionaries of all devices together (~1 MB each)
  int compression_level = 3;             // of the deltas (the level the dictionary is built for)
};

class DeltaKeyframes {
 public:
  explicit DeltaKeyframes(DeltaOptions options) : options_(options) {}

  struct Base {
    std::string keyframe_id;
    std::shared_ptr<const wire::DeltaKeyframe> keyframe;
    size_t keyframe_blob_bytes = 0;  // its stored (whole) size: a delta larger than half of it is not worth it
  };
  // The keyframe to encode the device's next capture against; nullopt when it should be stored whole.
  std::optional<Base> For(const std::string& device_id);
  // Counts a delta stored against `keyframe_id` (towards keyframe_every).
  void CountDelta(const std::string& device_id, const std::string& keyframe_id);
  // Makes a just-stored whole capture the device's keyframe. The error (a corrupt blob, zstd out of
  // memory) only means the device's next capture is stored whole again.
  absl::Status Install(const std::string& device_id, const std::string& capture_id, std::string_view whole_blob);

  size_t memory_bytes() const;
  size_t devices() const;

 private:
  struct Entry {
    Base base;
    uint32_t deltas = 0;
    size_t bytes = 0;
    std::list<std::string>::iterator lru;  // position in lru_
  };
  void Evict();  // under mu_

  const DeltaOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
  std::list<std::string> lru_;  // device ids, most recently used first
  size_t bytes_ = 0;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_DELTA_KEYFRAMES_H_
