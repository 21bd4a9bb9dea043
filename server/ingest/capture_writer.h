// CaptureWriter: the one writer of the server's captures — group commit. The ingest's workers hand it
// captures already accounted and encoded (CaptureIngestor::Prepare); its own thread stores every capture
// waiting at that moment in one transaction (CaptureStore::PutCaptures: one commit, one disk flush for the
// lot), then answers each. So the captures that arrive while a commit is on the disk share the next one,
// the workers go on with the engine meanwhile, and the commit rate is no longer the capture rate.
//
//   CaptureWriter writer(store, ingestor, CaptureWriter::Options{});
//   writer.Submit(std::move(prepared), /*urgent=*/false, [session](v1::ServerMessage answer) { session->Write(answer);
//   }); writer.Shutdown();   // stores what is queued, then stops
//
// An ack goes out only after its transaction's COMMIT. A batch the store refuses (one capture it will not
// take, a full disk) is stored again one capture a transaction, so only the captures that fail on their
// own are rejected (retry=true: the agent keeps them spooled). Urgent captures (sweeps') go into the next
// batch before the others. Thread-safe; `done` runs on the writer's thread and must not wait.
#ifndef MEMFLEET_SERVER_INGEST_CAPTURE_WRITER_H_
#define MEMFLEET_SERVER_INGEST_CAPTURE_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "memfleet/v1/agent_service.pb.h"
#include "server/core/worker_pool.h"
#include "server/ingest/capture_ingestor.h"
#include "storage/capture_store.h"

namespace memfleet::server {

class CaptureWriter {
 public:
  struct Options {
    // Captures in one transaction at most: bounds how long the captures at the end of a batch wait for
    // those at its start (a transaction of 256 sample captures commits in ~50 ms here).
    size_t max_batch = 256;
  };
  using Done = std::function<void(v1::ServerMessage answer)>;

  CaptureWriter(storage::CaptureStore& store, CaptureIngestor& ingestor, Options options);
  CaptureWriter(const CaptureWriter&) = delete;
  CaptureWriter& operator=(const CaptureWriter&) = delete;
  ~CaptureWriter();  // Shutdown()

  // Queues a prepared capture (one without an answer yet). False, and `done` is not called, once the
  // writer shut down: the caller answers the capture itself.
  bool Submit(CaptureIngestor::Prepared prepared, bool urgent, Done done) ABSL_LOCKS_EXCLUDED(mu_);
  // Stores and answers what is queued, then stops. Idempotent.
  void Shutdown();

  struct Stats {
    uint64_t transactions = 0;  // commits tried, a batch's one-by-one retries included
    uint64_t captures = 0;      // answered
    uint64_t largest_batch = 0;
  };
  Stats stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Item {
    CaptureIngestor::Prepared prepared;
    Done done;
  };
  // Runs on the writer's thread until the queue is empty.
  void Drain() ABSL_LOCKS_EXCLUDED(mu_);
  void Write(std::vector<Item>& batch);

  storage::CaptureStore& store_;
  CaptureIngestor& ingestor_;
  const Options options_;
  mutable absl::Mutex mu_;
  std::deque<Item> urgent_ ABSL_GUARDED_BY(mu_);
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);
  bool draining_ ABSL_GUARDED_BY(mu_) = false;  // a Drain is posted or running
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  WorkerPool thread_{WorkerPool::Options{1, 1}};  // last: its thread runs Drain, which uses the rest
};

}  // namespace memfleet::server

#endif  // MEMFLEET_SERVER_INGEST_CAPTURE_WRITER_H_
