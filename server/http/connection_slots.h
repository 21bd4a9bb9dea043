// ConnectionSlots: how many connections the HTTP port holds, in all and from each peer address, so that
// one address (idle sockets, a slow client, an attacker) cannot take every connection the port has and
// lock a scrape from another address out. A connection is let in only while both bounds leave room, and
// gives its slot back when its Slot is destroyed.
//
//   ConnectionSlots slots(/*max_total=*/64, /*max_per_peer=*/8);
//   std::optional<ConnectionSlots::Slot> slot = slots.TryTake("127.0.0.1");
//   if (!slot) close the connection at once;   // else keep *slot for as long as the connection lives
//
// Thread-safe; it must outlive its slots.
#ifndef MEMFLEET_SERVER_HTTP_CONNECTION_SLOTS_H_
#define MEMFLEET_SERVER_HTTP_CONNECTION_SLOTS_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace memfleet::server {

class ConnectionSlots {
 public:
  ConnectionSlots(size_t max_total, size_t max_per_peer) : max_total_(max_total), max_per_peer_(max_per_peer) {}
  ConnectionSlots(const ConnectionSlots&) = delete;
  ConnectionSlots& operator=(const ConnectionSlots&) = delete;

  // One connection's hold on a slot; moving it moves the hold.
  class Slot {
   public:
    Slot(Slot&& other) noexcept : owner_(other.owner_), peer_(std::move(other.peer_)) { other.owner_ = nullptr; }
    Slot& operator=(Slot&&) = delete;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot();

   private:
    friend class ConnectionSlots;
    Slot(ConnectionSlots* owner, std::string peer) : owner_(owner), peer_(std::move(peer)) {}
    ConnectionSlots* owner_;
    std::string peer_;
  };

  // A slot for a connection from `peer` (its address, without the port); nullopt when the port holds
  // max_total connections already, or max_per_peer from that address.
  std::optional<Slot> TryTake(const std::string& peer) ABSL_LOCKS_EXCLUDED(mu_);
  size_t taken() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t taken_by(const std::string& peer) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Give(const std::string& peer) ABSL_LOCKS_EXCLUDED(mu_);

  const size_t max_total_;
  const size_t max_per_peer_;
  mutable absl::Mutex mu_;
  size_t taken_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, size_t> by_peer_ ABSL_GUARDED_BY(mu_);  // no entry for a peer holding none
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_HTTP_CONNECTION_SLOTS_H_
