#include "server/delta_keyframes.h"

#include <utility>

#include "absl/status/statusor.h"

namespace memfleet::server {

DeltaKeyframes::StoredForm DeltaKeyframes::Encode(const accounting::Capture& capture, const std::string& capture_id,
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

std::optional<DeltaKeyframes::Base> DeltaKeyframes::For(const std::string& device_id) {
  if (!options_.enabled) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(device_id);
  if (it == entries_.end()) return std::nullopt;
  // keyframe_every counts the keyframe itself: 1 whole + (keyframe_every - 1) deltas.
  if (it->second.deltas + 1 >= options_.keyframe_every) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.base;
}

void DeltaKeyframes::CountDelta(const std::string& device_id, const std::string& keyframe_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(device_id);
  if (it != entries_.end() && it->second.base.keyframe_id == keyframe_id) ++it->second.deltas;
}

absl::Status DeltaKeyframes::Install(const std::string& device_id, const std::string& capture_id,
                                     std::string_view whole_blob) {
  if (!options_.enabled) return absl::OkStatus();
  absl::StatusOr<std::string> bytes = wire::DecompressStoredCapture(wire::kStoredCodec, whole_blob);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<std::unique_ptr<const wire::DeltaKeyframe>> keyframe =
      wire::DeltaKeyframe::Create(*bytes, options_.compression_level);
  if (!keyframe.ok()) return keyframe.status();

  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(device_id);
  if (it == entries_.end()) {
    lru_.push_front(device_id);
    it = entries_.emplace(device_id, Entry{}).first;
    it->second.lru = lru_.begin();
  } else {
    bytes_ -= it->second.bytes;
    lru_.splice(lru_.begin(), lru_, it->second.lru);
  }
  Entry& e = it->second;
  e.bytes = (*keyframe)->memory_bytes();
  e.base.keyframe_id = capture_id;
  e.base.keyframe = std::move(*keyframe);
  e.base.keyframe_blob_bytes = whole_blob.size();
  e.deltas = 0;
  bytes_ += e.bytes;
  Evict();
  return absl::OkStatus();
}

void DeltaKeyframes::Evict() {
  // The newest entry stays even alone over the budget: a budget smaller than one keyframe still deltas
  // the device that captured last.
  while (bytes_ > options_.cache_bytes && lru_.size() > 1) {
    auto it = entries_.find(lru_.back());
    bytes_ -= it->second.bytes;
    entries_.erase(it);
    lru_.pop_back();
  }
}

size_t DeltaKeyframes::memory_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

size_t DeltaKeyframes::devices() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace memfleet::server
