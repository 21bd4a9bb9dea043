// DeltaKeyframes: the keyframe each device's new captures are stored as deltas against (delta storage,
// docs/performance.md "Storage"), under one byte budget (`--delta-cache-mb`) that bounds all it holds. A
// device with no keyframe (its first capture, after a restart) stores its next capture whole, which becomes
// its keyframe; so does every `keyframe_every`-th capture, which bounds what one keyframe's loss or a
// re-accounting has to touch.
//
// Per device it keeps the keyframe's id (a few hundred bytes) and, while there is room, its digest: zstd's
// dictionary of the keyframe, ~1.5x the keyframe's raw size, which a delta is encoded with. A device whose
// digest has no room is "cold": its keyframe is read back from the store and digested for the capture at
// hand (about as much CPU as a whole encode; a delta stays ~20x smaller on disk than a whole capture), so
// a fleet larger than the budget still stores deltas. When the budget is full a digest (and, for a new
// device, its entry) gets room only from devices unused for `stale_after` (gone from the farm): a fleet
// that captures in rounds would make plain LRU evict each device just before its next capture.
//
//   DeltaKeyframes::StoredForm form = keyframes.Encode(capture, id, device, at, 3);  // delta or whole
//   ... store form.codec / form.blob / form.base ...
//   keyframes.Stored(device, id, form.base, form.blob.size());   // after the commit: cheap bookkeeping
//
// Thread-safe. Encode does the work (on the ingest's workers); Stored only records (on the store's writer).
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
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "capture/capture.h"
#include "proto/capture_codec.h"
#include "storage/capture_store.h"

namespace memfleet::server {

struct DeltaOptions {
  bool enabled = true;
  // One whole capture in this many, per device. 64, not 32: the ~20 kB keyframe is most of a capture's
  // stored bytes, and retention keeps fewer of them (docs/performance.md "Bytes per stored capture").
  uint32_t keyframe_every = 64;
  // Everything kept: every device's entry and the digests that fit (a sample device's is ~0.3 MB).
  size_t cache_bytes = size_t{128} << 20;
  int compression_level = 3;               // of the deltas (the level the digest is built for)
  std::chrono::seconds stale_after{3600};  // a device unused this long may make room for another
  // A keyframe this server has not used this long is not used again: the device's next capture is stored
  // whole. Retention's raw window (at least a day) may drop a keyframe's raw text once no delta in the
  // window names it and another keyframe of the device is newer — which is so when the device was away on
  // another server sharing the database. Under a day, this server's own last delta of it still holds it.
  std::chrono::seconds idle_keyframe_limit{12 * 3600};
  std::function<std::chrono::steady_clock::time_point()> clock;  // null: steady_clock::now (tests set it)
};

class DeltaKeyframes {
 public:
  // `store`: where a cold device's keyframe is read back; null: cold devices store whole captures.
  DeltaKeyframes(DeltaOptions options, storage::CaptureStore* store) : options_(std::move(options)), store_(store) {}

  // A raw capture in the form the server stores: codec, blob and (for a delta) its keyframe's id.
  struct StoredForm {
    std::string codec;
    std::string blob;  // "" when compression failed
    std::string base;  // "" for a whole capture
  };
  // A delta of the device's keyframe when it has one and the delta is at most half the keyframe's blob
  // (a device changed beyond recognition gets a new keyframe instead); else whole at `whole_level`.
  StoredForm Encode(const capture::Capture& capture, const std::string& capture_id, const std::string& device_id,
                    const std::string& captured_at, int whole_level) ABSL_LOCKS_EXCLUDED(mu_);
  // After the store committed a capture: a delta (`base` its keyframe) counts towards keyframe_every, a
  // whole one (`base` "") becomes the device's keyframe, digested when the device's next capture needs it.
  void Stored(const std::string& device_id, const std::string& capture_id, const std::string& base, size_t blob_bytes)
      ABSL_LOCKS_EXCLUDED(mu_);

  size_t memory_bytes() const ABSL_LOCKS_EXCLUDED(mu_);  // everything, at most cache_bytes (or one device)
  size_t devices() const ABSL_LOCKS_EXCLUDED(mu_);       // devices with a keyframe
  size_t digested_devices() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  using Digest = std::shared_ptr<const wire::DeltaKeyframe>;
  struct Entry {
    std::string keyframe_id;
    size_t keyframe_blob_bytes = 0;  // its stored (whole) size: a delta larger than half of it is not worth it
    uint32_t deltas = 0;
    Digest digest;  // null: cold
    size_t digest_bytes = 0;
    std::chrono::steady_clock::time_point last_used;
    std::list<std::string>::iterator lru;  // position in lru_
  };
  struct Base {
    std::string keyframe_id;
    size_t keyframe_blob_bytes = 0;
    Digest digest;
  };
  std::chrono::steady_clock::time_point Now() const;
  // The keyframe to encode the device's next capture against; nullopt when it should be stored whole.
  std::optional<Base> For(const std::string& device_id) ABSL_LOCKS_EXCLUDED(mu_);
  // A cold device's keyframe, read back and digested; null (the capture is stored whole) on any failure.
  Digest DigestOf(const std::string& keyframe_id);
  // Keeps `digest` for the device if its keyframe is still `keyframe_id` and there is room.
  void Keep(const std::string& device_id, const std::string& keyframe_id, Digest digest) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether `bytes` more fit, after dropping what devices unused for stale_after hold (their digests
  // first, then — when `entries_too` — their entries); `own` is what the asking device holds already.
  bool MakeRoom(size_t bytes, size_t own, bool entries_too, std::chrono::steady_clock::time_point now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropDigest(Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static size_t EntryBytes(const std::string& device_id, const std::string& keyframe_id);

  const DeltaOptions options_;
  storage::CaptureStore* const store_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::list<std::string> lru_ ABSL_GUARDED_BY(mu_);  // device ids, most recently used first
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  size_t digested_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_INGEST_DELTA_KEYFRAMES_H_
