#include "cli/sweep_progress.h"

#include <algorithm>
#include <string>

namespace memfleet::cli {

using State = v1::SweepProgress::State;

std::string RenderProgressBar(const SweepTally& tally, int width) {
  width = std::max(width, 1);
  const uint64_t total = std::max(tally.total, tally.done());
  size_t stored_cells = 0, done_cells = 0;
  if (total > 0) {
    stored_cells = static_cast<size_t>(uint64_t{tally.stored} * static_cast<uint64_t>(width) / total);
    done_cells = static_cast<size_t>(uint64_t{tally.done()} * static_cast<uint64_t>(width) / total);
  }
  std::string out = "[";
  out.append(stored_cells, '=');
  out.append(done_cells - stored_cells, 'x');
  out.append(static_cast<size_t>(width) - done_cells, ' ');
  out += "] " + std::to_string(tally.stored) + "/" + std::to_string(total) + " stored, " +
         std::to_string(tally.failed) + " failed, " + std::to_string(tally.offline) + " offline";
  if (tally.timed_out > 0) out += ", " + std::to_string(tally.timed_out) + " timed out";
  return out;
}

const char* SweepStateName(State state) {
  switch (state) {
    case v1::SweepProgress::SENT:
      return "sent";
    case v1::SweepProgress::CAPTURING:
      return "capturing";
    case v1::SweepProgress::STORED:
      return "stored";
    case v1::SweepProgress::FAILED:
      return "failed";
    case v1::SweepProgress::OFFLINE:
      return "offline";
    case v1::SweepProgress::TIMED_OUT:
      return "timed out";
    default:
      return "pending";
  }
}

bool IsFinalState(State state) {
  return state == v1::SweepProgress::STORED || state == v1::SweepProgress::FAILED ||
         state == v1::SweepProgress::OFFLINE || state == v1::SweepProgress::TIMED_OUT;
}

bool SweepTracker::Apply(const v1::SweepProgress& progress) {
  bool changed = false;
  if (!progress.sweep_id().empty()) sweep_id_ = progress.sweep_id();
  if (progress.devices_total() != total_) {
    total_ = progress.devices_total();
    changed = true;
  }
  if (progress.finished()) finished_ = true;
  if (progress.device_id().empty()) return changed;
  auto [it, inserted] = index_.emplace(progress.device_id(), devices_.size());
  if (inserted) {
    devices_.push_back(Device{progress.device_id(), v1::SweepProgress::STATE_UNSPECIFIED, "", ""});
    changed = true;
  }
  Device& d = devices_[it->second];
  if (IsFinalState(d.state) && !IsFinalState(progress.state())) return changed;
  if (d.state != progress.state()) changed = true;
  d.state = progress.state();
  if (!progress.message().empty()) d.message = progress.message();
  if (!progress.capture_id().empty()) d.capture_id = progress.capture_id();
  return changed;
}

SweepTally SweepTracker::tally() const {
  SweepTally t;
  for (const Device& d : devices_) {
    switch (d.state) {
      case v1::SweepProgress::STORED:
        ++t.stored;
        break;
      case v1::SweepProgress::FAILED:
        ++t.failed;
        break;
      case v1::SweepProgress::OFFLINE:
        ++t.offline;
        break;
      case v1::SweepProgress::TIMED_OUT:
        ++t.timed_out;
        break;
      default:
        break;
    }
  }
  t.total = std::max<uint32_t>(total_, static_cast<uint32_t>(devices_.size()));
  return t;
}

std::string PlainProgressLine(const v1::SweepProgress& p) {
  if (p.device_id().empty()) {
    std::string line = "sweep " + p.sweep_id() + ": " + std::to_string(p.devices_done()) + "/" +
                       std::to_string(p.devices_total()) + " devices done";
    if (p.finished()) line += ", finished";
    if (!p.message().empty()) line += " (" + p.message() + ")";
    return line;
  }
  std::string line = p.device_id() + ": " + SweepStateName(p.state());
  if (!p.capture_id().empty()) line += " (capture " + p.capture_id() + ")";
  if (!p.message().empty()) line += ": " + p.message();
  return line;
}

}  // namespace memfleet::cli
