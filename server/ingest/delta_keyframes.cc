#include "server/ingest/delta_keyframes.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/core/clock.h"

namespace memfleet::server {

std::chrono::steady_clock::time_point DeltaKeyframes::Now() const {
  return options_.clock ? options_.clock() : std::chrono::steady_clock::now();
}

// An entry as the heap holds it: the entry and its map node, its LRU node, and the ids' characters (the
// device id twice: the map's key and the LRU's copy).
size_t DeltaKeyframes::EntryBytes(const std::string& device_id, const std::string& keyframe_id) {
  constexpr size_t kNodesBytes = 96;  // a std::map node's and a std::list node's links and allocation headers
  return sizeof(Entry) + 2 * sizeof(std::string) + kNodesBytes + 2 * device_id.size() + keyframe_id.size();
}

DeltaKeyframes::StoredForm DeltaKeyframes::Encode(const capture::Capture& capture, const std::string& capture_id,
                                                  const std::string& device_id, const std::string& captured_at,
                                                  int whole_level) {
  // One a thread (the workers encode captures concurrently): its zstd buffers stay allocated between captures.
  thread_local wire::StoredCaptureEncoder encoder;
  StoredForm form;
  if (std::optional<Base> base = For(device_id)) {
    Digest digest = base->digest;
    if (digest == nullptr) {
      digest = DigestOf(base->keyframe_id);
      if (digest == nullptr) {
        LogLine(absl::StrCat("capture ", capture_id, " of ", device_id, ": its keyframe ", base->keyframe_id,
                             " cannot be read back; stored whole, as the device's next keyframe"));
      } else {
        Keep(device_id, base->keyframe_id, digest);
      }
    }
    if (digest != nullptr) {
      form.blob = encoder.EncodeDelta(capture, capture_id, device_id, captured_at, *digest);
      if (!form.blob.empty() && form.blob.size() <= base->keyframe_blob_bytes / 2) {
        form.codec = wire::kDeltaCodec;
        form.base = base->keyframe_id;
        return form;
      }
    }
  }
  form.blob = encoder.Encode(capture, capture_id, device_id, captured_at, whole_level);
  form.codec = wire::kStoredCodec;
  return form;
}

std::optional<DeltaKeyframes::Base> DeltaKeyframes::For(const std::string& device_id) {
  if (!options_.enabled) return std::nullopt;
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(device_id);
  if (it == entries_.end()) return std::nullopt;
  Entry& e = it->second;
  // keyframe_every counts the keyframe itself: 1 whole + (keyframe_every - 1) deltas.
  if (e.deltas + 1 >= options_.keyframe_every) return std::nullopt;
  const auto now = Now();
  if (now - e.last_used >= options_.idle_keyframe_limit) return std::nullopt;
  e.last_used = now;
  lru_.splice(lru_.begin(), lru_, e.lru);
  return Base{e.keyframe_id, e.keyframe_blob_bytes, e.digest};
}

DeltaKeyframes::Digest DeltaKeyframes::DigestOf(const std::string& keyframe_id) {
  if (store_ == nullptr) return nullptr;
  absl::StatusOr<std::optional<storage::CaptureStore::RawCapture>> raw = store_->GetRawCapture(keyframe_id);
  if (!raw.ok() || !raw->has_value()) return nullptr;
  // Retention keeps each device's latest keyframe's raw text; a server whose keyframe another server
  // replaced since may still name an older one: say why the capture is stored whole.
  if (absl::Status kept = storage::RawTextKept(**raw); !kept.ok()) {
    LogLine(absl::StrCat("keyframe ", keyframe_id, " of a delta: ", kept.message()));
    return nullptr;
  }
  if ((*raw)->raw_codec != wire::kStoredCodec) return nullptr;
  absl::StatusOr<std::string> bytes = wire::DecompressStoredCapture(wire::kStoredCodec, (*raw)->raw_blob);
  if (!bytes.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<const wire::DeltaKeyframe>> digest =
      wire::DeltaKeyframe::Create(*bytes, options_.compression_level);
  if (!digest.ok()) return nullptr;
  return Digest(std::move(*digest));
}

void DeltaKeyframes::Keep(const std::string& device_id, const std::string& keyframe_id, Digest digest) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(device_id);
  // A new keyframe was stored meanwhile, or another capture of the device kept its digest first.
  if (it == entries_.end() || it->second.keyframe_id != keyframe_id || it->second.digest != nullptr) return;
  const size_t size = digest->memory_bytes();
  if (!MakeRoom(size, EntryBytes(device_id, keyframe_id), /*entries_too=*/false, Now())) return;
  it->second.digest = std::move(digest);
  it->second.digest_bytes = size;
  bytes_ += size;
  ++digested_;
}

void DeltaKeyframes::Stored(const std::string& device_id, const std::string& capture_id, const std::string& base,
                            size_t blob_bytes) {
  if (!options_.enabled) return;
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(device_id);
  if (!base.empty()) {
    if (it != entries_.end() && it->second.keyframe_id == base) ++it->second.deltas;
    return;
  }
  const auto now = Now();
  if (it == entries_.end()) {
    const size_t need = EntryBytes(device_id, capture_id);
    if (!MakeRoom(need, 0, /*entries_too=*/true, now)) return;  // its next capture is stored whole again
    lru_.push_front(device_id);
    it = entries_.emplace(device_id, Entry{}).first;
    it->second.lru = lru_.begin();
    bytes_ += need;
  } else {
    // A device that holds a keyframe keeps its place; the old keyframe's digest is of no more use.
    DropDigest(it->second);
    bytes_ -= EntryBytes(device_id, it->second.keyframe_id);
    bytes_ += EntryBytes(device_id, capture_id);
    lru_.splice(lru_.begin(), lru_, it->second.lru);
  }
  Entry& e = it->second;
  e.keyframe_id = capture_id;
  e.keyframe_blob_bytes = blob_bytes;
  e.deltas = 0;
  e.last_used = now;
}

void DeltaKeyframes::DropDigest(Entry& e) {
  if (e.digest == nullptr) return;
  bytes_ -= e.digest_bytes;
  --digested_;
  e.digest.reset();  // a capture being encoded with it keeps its own reference
  e.digest_bytes = 0;
}

bool DeltaKeyframes::MakeRoom(size_t bytes, size_t own, bool entries_too, std::chrono::steady_clock::time_point now) {
  // The device asking may hold everything there is: one device is always served, whatever the budget.
  auto fits = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return bytes_ + bytes <= options_.cache_bytes || bytes_ <= own;
  };
  if (fits()) return true;
  // Digests of devices gone for stale_after, least recently used first; the entries stay (small).
  for (auto it = lru_.rbegin(); it != lru_.rend() && !fits(); ++it) {
    Entry& e = entries_.find(*it)->second;
    if (now - e.last_used < options_.stale_after) break;  // the rest were used more recently
    DropDigest(e);
  }
  if (fits() || !entries_too) return fits();
  while (!fits() && !lru_.empty()) {
    auto it = entries_.find(lru_.back());
    if (now - it->second.last_used < options_.stale_after) return false;
    DropDigest(it->second);
    bytes_ -= EntryBytes(it->first, it->second.keyframe_id);
    entries_.erase(it);
    lru_.pop_back();
  }
  return fits();
}

size_t DeltaKeyframes::memory_bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

size_t DeltaKeyframes::devices() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

size_t DeltaKeyframes::digested_devices() const {
  absl::MutexLock lock(&mu_);
  return digested_;
}

}  // namespace memfleet::server
