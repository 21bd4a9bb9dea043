#include "server/ingest/delta_keyframes.h"

#include <utility>

#include "absl/status/statusor.h"

namespace memfleet::server {

DeltaKeyframes::StoredForm DeltaKeyframes::Encode(const capture::Capture& capture, const std::string& capture_id,
                                                  const std::string& device_id, const std::string& captured_at,
                                                  int whole_level) {
  StoredForm form;
  if (std::optional<Base> base = For(device_id)) {
    form.blob = wire::EncodeStoredCaptureDelta(capture, capture_id, device_id, captured_at, *base->keyframe);
    if (!form.blob.empty() && form.blob.size() <= base->keyframe_blob_bytes / 2) {
      form.codec = wire::kDeltaCodec;
      form.base = base->keyframe_id;
      return form;
    }
  }
  form.blob = wire::EncodeStoredCapture(capture, capture_id, device_id, captured_at, whole_level);
  form.codec = wire::kStoredCodec;
  return form;
}

absl::Status DeltaKeyframes::Stored(const std::string& device_id, const std::string& capture_id,
                                    const StoredForm& form) {
  if (!form.base.empty()) {
    CountDelta(device_id, form.base);
    return absl::OkStatus();
  }
  return Install(device_id, capture_id, form.blob);
}

std::chrono::steady_clock::time_point DeltaKeyframes::Now() const {
  return options_.clock ? options_.clock() : std::chrono::steady_clock::now();
}

std::optional<DeltaKeyframes::Base> DeltaKeyframes::For(const std::string& device_id) {
  if (!options_.enabled) return std::nullopt;
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(device_id);
  if (it == entries_.end()) return std::nullopt;
  // keyframe_every counts the keyframe itself: 1 whole + (keyframe_every - 1) deltas.
  if (it->second.deltas + 1 >= options_.keyframe_every) return std::nullopt;
  it->second.last_used = Now();
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.base;
}

void DeltaKeyframes::CountDelta(const std::string& device_id, const std::string& keyframe_id) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(device_id);
  if (it != entries_.end() && it->second.base.keyframe_id == keyframe_id) ++it->second.deltas;
}

absl::Status DeltaKeyframes::Install(const std::string& device_id, const std::string& capture_id,
                                     std::string_view whole_blob) {
  if (!options_.enabled) return absl::OkStatus();
  const auto now = Now();
  {
    // A new device that cannot get room would build its dictionary for nothing.
    absl::MutexLock lock(&mu_);
    if (entries_.count(device_id) == 0 && !entries_.empty() && bytes_ >= options_.cache_bytes &&
        !MakeRoom(1, now)) {
      return absl::OkStatus();
    }
  }
  absl::StatusOr<std::string> bytes = wire::DecompressStoredCapture(wire::kStoredCodec, whole_blob);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<std::unique_ptr<const wire::DeltaKeyframe>> keyframe =
      wire::DeltaKeyframe::Create(*bytes, options_.compression_level);
  if (!keyframe.ok()) return keyframe.status();
  const size_t size = (*keyframe)->memory_bytes();

  absl::MutexLock lock(&mu_);
  auto it = entries_.find(device_id);
  if (it == entries_.end()) {
    // The first keyframe always fits, so a budget below one keyframe still serves one device.
    if (!entries_.empty() && bytes_ + size > options_.cache_bytes && !MakeRoom(size, now)) return absl::OkStatus();
    lru_.push_front(device_id);
    it = entries_.emplace(device_id, Entry{}).first;
    it->second.lru = lru_.begin();
  } else {
    // A device that holds a keyframe keeps its place: replacing it changes the total only by the
    // difference in size.
    bytes_ -= it->second.bytes;
    lru_.splice(lru_.begin(), lru_, it->second.lru);
  }
  Entry& e = it->second;
  e.bytes = size;
  e.base.keyframe_id = capture_id;
  e.base.keyframe = std::move(*keyframe);
  e.base.keyframe_blob_bytes = whole_blob.size();
  e.deltas = 0;
  e.last_used = now;
  bytes_ += e.bytes;
  return absl::OkStatus();
}

bool DeltaKeyframes::MakeRoom(size_t bytes, std::chrono::steady_clock::time_point now) {
  while (bytes_ + bytes > options_.cache_bytes && !lru_.empty()) {
    auto it = entries_.find(lru_.back());
    if (now - it->second.last_used < options_.stale_after) return false;  // the least recent is in use
    bytes_ -= it->second.bytes;
    entries_.erase(it);
    lru_.pop_back();
  }
  return bytes_ + bytes <= options_.cache_bytes || entries_.empty();
}

size_t DeltaKeyframes::memory_bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

size_t DeltaKeyframes::devices() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace memfleet::server
