// Following a sweep as the server streams it: each device's latest state, the tallies, and the
// progress line — a redrawn bar on a terminal, one plain line per change otherwise.
//
//   SweepTracker tracker;
//   while (reader->Read(&msg)) if (tracker.Apply(msg)) err << "\r" << RenderProgressBar(tracker.tally());
//   // "[=====x    ] 3/6 stored, 1 failed, 0 offline"
//
// Plain value types; not thread-safe.
#ifndef MEMFLEET_CLI_SWEEP_PROGRESS_H_
#define MEMFLEET_CLI_SWEEP_PROGRESS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "memfleet/v1/query_service.pb.h"

namespace memfleet::cli {

struct SweepTally {
  uint32_t total = 0;
  uint32_t stored = 0;
  uint32_t failed = 0;
  uint32_t offline = 0;
  uint32_t timed_out = 0;
  uint32_t done() const { return stored + failed + offline + timed_out; }
};

// "[=====x    ] 3/6 stored, 1 failed, 0 offline": '=' for the stored share of the devices, 'x' for the
// share that ended without a capture (failed, offline, timed out), spaces for those still pending.
// ", N timed out" is added only when some did.
std::string RenderProgressBar(const SweepTally& tally, int width = 10);

// "stored", "failed", ... (lower case, for people).
const char* SweepStateName(v1::SweepProgress::State state);

// True for stored, failed, offline and timed out: the device's part of the sweep is over.
bool IsFinalState(v1::SweepProgress::State state);

class SweepTracker {
 public:
  struct Device {
    std::string device_id;
    v1::SweepProgress::State state = v1::SweepProgress::STATE_UNSPECIFIED;
    std::string message;
    std::string capture_id;
  };

  // Takes one streamed message; returns true when it changed what the progress line shows (a device's
  // state, or the total). A device that reached a final state keeps it unless another final state
  // follows, so a late "capturing" cannot undo "stored".
  bool Apply(const v1::SweepProgress& progress);

  SweepTally tally() const;
  const std::vector<Device>& devices() const { return devices_; }  // first-seen order
  const std::string& sweep_id() const { return sweep_id_; }
  bool finished() const { return finished_; }

 private:
  std::vector<Device> devices_;
  std::map<std::string, size_t> index_;
  std::string sweep_id_;
  uint32_t total_ = 0;
  bool finished_ = false;
};

// One line for a log (no terminal): "pixel-7: stored (capture pixel-7-20261202T161500Z-000001)".
std::string PlainProgressLine(const v1::SweepProgress& progress);

}  // namespace memfleet::cli

#endif  // MEMFLEET_CLI_SWEEP_PROGRESS_H_
