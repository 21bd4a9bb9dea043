#include "server/ingest/capture_writer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/core/clock.h"

namespace memfleet::server {

CaptureWriter::CaptureWriter(storage::CaptureStore& store, CaptureIngestor& ingestor, Options options)
    : store_(store), ingestor_(ingestor), options_(options) {}

CaptureWriter::~CaptureWriter() { Shutdown(); }

bool CaptureWriter::Submit(CaptureIngestor::Prepared prepared, bool urgent, Done done) {
  bool post = false;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return false;
    (urgent ? urgent_ : queue_).push_back(Item{std::move(prepared), std::move(done)});
    post = !draining_;
    draining_ = true;
  }
  // Shut down between the check and here: this thread stores what it queued.
  if (post && !thread_.Post([this] { Drain(); })) Drain();
  return true;
}

void CaptureWriter::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
  }
  thread_.Shutdown();  // runs the Drain posted last, which empties the queue
}

CaptureWriter::Stats CaptureWriter::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void CaptureWriter::Drain() {
  for (;;) {
    std::vector<Item> batch;
    {
      absl::MutexLock lock(&mu_);
      for (std::deque<Item>* from : {&urgent_, &queue_}) {
        while (!from->empty() && batch.size() < std::max<size_t>(options_.max_batch, 1)) {
          batch.push_back(std::move(from->front()));
          from->pop_front();
        }
      }
      if (batch.empty()) {
        draining_ = false;
        return;
      }
    }
    Write(batch);
  }
}

void CaptureWriter::Write(std::vector<Item>& batch) {
  // The records go to the store without copies, and come back for the answers.
  std::vector<storage::CaptureRecord> records;
  records.reserve(batch.size());
  for (Item& item : batch) records.push_back(std::move(item.prepared.record));
  absl::StatusOr<std::vector<bool>> inserted = store_.PutCaptures(records);
  if (inserted.ok() && inserted->size() != records.size()) {
    inserted = absl::InternalError("the store answered for another number of captures than it was given");
  }
  uint64_t transactions = 1;
  std::vector<absl::StatusOr<bool>> results;
  results.reserve(records.size());
  if (inserted.ok() || records.size() == 1) {
    for (size_t i = 0; i < records.size(); ++i) {
      results.push_back(inserted.ok() ? absl::StatusOr<bool>((*inserted)[i]) : absl::StatusOr<bool>(inserted.status()));
    }
  } else {
    LogLine(absl::StrCat("a transaction of ", records.size(), " captures failed (", inserted.status().message(),
                         "); storing them one at a time"));
    for (const storage::CaptureRecord& record : records) results.push_back(store_.PutCapture(record));
    transactions += records.size();
  }
  {
    // Before the answers: whoever waits for an answer sees the batch counted.
    absl::MutexLock lock(&mu_);
    stats_.transactions += transactions;
    stats_.captures += batch.size();
    stats_.largest_batch = std::max<uint64_t>(stats_.largest_batch, batch.size());
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    batch[i].prepared.record = std::move(records[i]);
    v1::ServerMessage answer = ingestor_.Committed(batch[i].prepared, results[i]);
    batch[i].done(std::move(answer));
  }
}

}  // namespace memfleet::server
