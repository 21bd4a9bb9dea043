// DeltaKeyframes: the keyframe each device's new captures are stored as deltas against (delta storage,
// docs/performance.md "Storage"), kept in memory under a byte budget. A device with no entry (its first
// capture, after a restart) stores its next capture whole, which becomes its keyframe; so does every
// `keyframe_every`-th capture, which bounds what one keyframe's loss or a re-accounting has to touch.
// When the budget is full a new device gets a keyframe only by evicting one unused for `stale_after`
// (a device gone from the farm): a fleet that captures in rounds would make plain LRU evict each
// device just before its next capture, and no one would get a delta.
//
//   DeltaKeyframes::StoredForm form = keyframes.Encode(capture, id, device, at, 3);  // delta or whole
//   ... store form.codec / form.blob / form.base ...
//   keyframes.Stored(device, id, form);   // after the store committed it: counts it or makes it the keyframe
//
// Thread-safe.
#ifndef MEMFLEET_SERVER_INGEST_DELTA_KEYFRAMES_H_
#define MEMFLEET_SERVER_INGEST_DELTA_KEYFRAMES_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "proto/capture_codec.h"
#include "capture/capture.h"

namespace memfleet::server {

struct DeltaOptions {
  bool enabled = true;
  // One whole capture in this many, per device. 64, not 32: the ~20 kB keyframe is most of a capture's
  // stored bytes, and retention keeps fewer of them (docs/performance.md "Bytes per stored capture").
  uint32_t keyframe_every = 64;
  size_t cache_bytes = size_t{512} << 20;  // zstd dictionaries of all devices together (~1 MB each)
  int compression_level = 3;             // of the deltas (the level the dictionary is built for)
  std::chrono::seconds stale_after{3600};  // a keyframe unused this long may make room for another device
  std::function<std::chrono::steady_clock::time_point()> clock;  // null: steady_clock::now (tests set it)
};

class DeltaKeyframes {
 public:
  explicit DeltaKeyframes(DeltaOptions options) : options_(std::move(options)) {}

  // A raw capture in the form the server stores: codec, blob and (for a delta) its keyframe's id.
  struct StoredForm {
    std::string codec;
    std::string blob;  // "" when compression failed
    std::string base;  // "" for a whole capture
  };
  // A delta of the device's keyframe when it has one and the delta is at most half the keyframe's blob
  // (a device changed beyond recognition gets a new keyframe instead); else whole at `whole_level`.
  StoredForm Encode(const capture::Capture& capture, const std::string& capture_id, const std::string& device_id,
                    const std::string& captured_at, int whole_level);
  // After the store committed `form`: a delta counts towards keyframe_every, a whole capture becomes the
  // device's keyframe. The error only means the device's next capture is stored whole again.
  absl::Status Stored(const std::string& device_id, const std::string& capture_id, const StoredForm& form);

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
    std::chrono::steady_clock::time_point last_used;
    std::list<std::string>::iterator lru;  // position in lru_
  };
  std::chrono::steady_clock::time_point Now() const;
  // Drops stale entries, least recently used first, until `bytes` more fit; false when they still do not.
  bool MakeRoom(size_t bytes, std::chrono::steady_clock::time_point now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const DeltaOptions options_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::list<std::string> lru_ ABSL_GUARDED_BY(mu_);  // device ids, most recently used first
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_INGEST_DELTA_KEYFRAMES_H_
