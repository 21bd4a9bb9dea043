// Spool: the captures an agent has taken but the server has not yet acked, kept on disk so that a network
// outage or an agent restart loses nothing. Bounded by total bytes: when full, the oldest captures are
// dropped and counted (Hello.dropped_captures), newest data being the most useful.
//
// A capture the transport is sending (MarkInFlight) may still be deleted to make room, but it is counted
// as dropped only once its send ends without an ack (SendFailed): a capture the server stored is not lost.
// That decision is held in memory, so an agent killed before the send ends counts no drop for it.
//
//   absl::StatusOr<std::unique_ptr<Spool>> spool = Spool::Open({"/data/local/tmp/memfleet", 64 << 20});
//   (*spool)->Put(id, captured_at, sweep_id, wire::EncodeStoredCapture(...));
//   for (const Spool::Entry& e : (*spool)->List()) ...   // oldest first
//   (*spool)->Remove(id);                                  // on the server's ack
//
// One file per capture, "<20-digit order>.cap": magic "MFSPOOL1", u32 meta length, meta (three u32
// length-prefixed strings: capture_id, captured_at, sweep_id), u64 blob length, blob, u32 CRC-32 of
// everything after the magic (little-endian). Written to a .tmp, fsynced and renamed, so a crash leaves
// either the whole file or none. Files "dropped" and "sequence" hold the persisted counters. A corrupt or
// truncated file is logged, deleted and counted as dropped; it never stops the agent.
//
// The folder must be private: Open refuses one that is a symlink, not owned by the agent's uid, or
// writable by its group or others (another user could plant captures the agent would send under its
// token, or symlinks it would write through), and creates missing folders 0700. Files are reached only
// through the folder's descriptor; temporary files are created afresh (O_EXCL|O_NOFOLLOW), and entries
// that are symlinks, not regular files or not owned by the agent are never read, sent or deleted.
//
// Thread-safe (one mutex): the scheduler puts while the transport loads and removes.
#ifndef MEMFLEET_AGENT_SPOOL_H_
#define MEMFLEET_AGENT_SPOOL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/scoped_fd.h"

namespace memfleet::agent {

class Spool {
 public:
  struct Options {
    std::string dir;                   // created (with its parents, mode 0700) when missing
    uint64_t max_bytes = 64ull << 20;  // total size of the capture files
  };

  struct Entry {
    std::string capture_id;
    std::string captured_at;
    std::string sweep_id;
    uint64_t size_bytes = 0;  // of the file on disk
    uint64_t order = 0;       // increases with each Put; survives restarts
  };

  struct Loaded {
    Entry entry;
    std::string blob;  // as given to Put
  };

  // Reads the index of an existing spool (or creates an empty one). Internal when the folder cannot be
  // created or listed, FailedPrecondition (naming the folder and what is wrong) when it is not private;
  // corrupt or foreign files inside it are not an error.
  static absl::StatusOr<std::unique_ptr<Spool>> Open(Options options);

  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  // Stores a capture durably, first dropping (and counting) the oldest ones until it fits. A capture with
  // the id of a spooled one replaces it. ResourceExhausted when the capture alone exceeds max_bytes, and
  // Internal when the file cannot be written (disk full): in both cases the capture is lost and counted.
  absl::Status Put(const std::string& capture_id, const std::string& captured_at, const std::string& sweep_id,
                   std::string_view blob);

  // Oldest first.
  std::vector<Entry> List() const;
  bool Contains(const std::string& capture_id) const;

  // NotFound when the capture is not (or no longer) spooled; DataLoss when its file is corrupt — the file
  // is then deleted and counted as dropped.
  absl::StatusOr<Loaded> Load(const std::string& capture_id);

  // Deletes a capture's file (acked, or rejected for good). OK when it is not spooled. A capture a full
  // spool deleted while it was in flight is then not counted as dropped.
  absl::Status Remove(const std::string& capture_id);
  // Deletes a capture that can never be delivered (it does not decode) and counts it as dropped.
  void Discard(const std::string& capture_id);

  // The transport starts sending a spooled capture (nothing when it is not spooled). Until Remove,
  // Discard or SendFailed, a full spool that deletes it does not count it yet.
  void MarkInFlight(const std::string& capture_id);
  // The capture's send ended without an ack (the stream broke, no ack in time, rejected for now): still
  // spooled, it is resent later; deleted by a full spool meanwhile, it is lost and now counted as dropped.
  void SendFailed(const std::string& capture_id);

  // Captures dropped since the server last acknowledged the count (persisted).
  uint64_t dropped() const;
  // The server has been told about `reported` drops (Welcome after a Hello that said so): subtracts them,
  // keeping drops that happened since.
  void ClearDropped(uint64_t reported);

  // The next value of the agent's capture sequence (1, 2, ...), persisted so that a restarted agent does
  // not reuse one.
  uint64_t NextSequence();

  size_t count() const;
  uint64_t total_bytes() const;
  uint64_t max_bytes() const { return options_.max_bytes; }
  const std::string& dir() const { return options_.dir; }

 private:
  Spool(Options options, ScopedFd dir_fd) : options_(std::move(options)), dir_fd_(std::move(dir_fd)) {}
  absl::Status Scan();
  static std::string FileName(uint64_t order);  // "<20 digits>.cap"
  std::string FilePath(uint64_t order) const;   // for messages; files are opened through dir_fd_
  // Deletes the file of `order` and forgets it.
  void RemoveLocked(uint64_t order) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes room for `file_size` more bytes, oldest first; counts what it drops (not what is in flight).
  void EvictForLocked(uint64_t file_size) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CountDroppedLocked(uint64_t n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PersistCounterLocked(const char* name, uint64_t value) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const ScopedFd dir_fd_;  // the spool folder, opened once (O_NOFOLLOW) and checked by Open
  mutable absl::Mutex mu_;
  std::map<uint64_t, Entry> by_order_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, uint64_t> order_of_ ABSL_GUARDED_BY(mu_);
  uint64_t total_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_order_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t sequence_ ABSL_GUARDED_BY(mu_) = 0;
  std::set<std::string> in_flight_ ABSL_GUARDED_BY(mu_);          // spooled, being sent
  std::set<std::string> deleted_in_flight_ ABSL_GUARDED_BY(mu_);  // deleted to make room while being sent
};

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_SPOOL_H_
