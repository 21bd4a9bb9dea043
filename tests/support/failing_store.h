// Test support: a Store over a real one (usually SQLite) that forwards every method, except that capture
// writes or token reads can be made to fail on demand — a full disk, a token table that cannot be read.
// Header-only.
//
//   auto failing = std::make_unique<FailingStore>(std::move(*storage::OpenSqliteStore(":memory:")));
//   failing->fail_puts = true;         // PutCapture(s): ResourceExhausted, like a full disk
//   failing->fail_token_reads = true;  // HasTokens/FindTokenByHash/ListTokens: Unavailable
//   failing->before_put = [&] { ... };  // e.g. hold a commit until the test lets it go
//
// Every Store method is pure, so a method added to an interface must be forwarded here explicitly.
#ifndef MEMFLEET_TESTS_SUPPORT_FAILING_STORE_H_
#define MEMFLEET_TESTS_SUPPORT_FAILING_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/store.h"

namespace memfleet::testing {

class FailingStore : public storage::Store {
 public:
  explicit FailingStore(std::unique_ptr<storage::Store> inner) : inner_(std::move(inner)) {}
  std::atomic<bool> fail_puts{false};
  std::atomic<bool> fail_token_reads{false};
  // Called at the start of every PutCapture(s), before it writes (a test holds a commit here); set it
  // before the store is shared.
  std::function<void()> before_put;

  // CaptureStore
  absl::Status UpsertDevice(const storage::DeviceRecord& d) override { return inner_->UpsertDevice(d); }
  absl::StatusOr<bool> RetireDevice(const std::string& id, const std::string& at) override {
    return inner_->RetireDevice(id, at);
  }
  absl::StatusOr<uint64_t> PurgeDevice(const std::string& id) override { return inner_->PurgeDevice(id); }
  absl::StatusOr<bool> PutCapture(const storage::CaptureRecord& c) override {
    if (before_put) before_put();
    if (fail_puts) return absl::ResourceExhaustedError("database or disk is full");
    return inner_->PutCapture(c);
  }
  absl::StatusOr<std::vector<bool>> PutCaptures(const std::vector<storage::CaptureRecord>& c) override {
    if (before_put) before_put();
    if (fail_puts) return absl::ResourceExhaustedError("database or disk is full");
    return inner_->PutCaptures(c);
  }
  absl::StatusOr<bool> HasCapture(const std::string& id) override { return inner_->HasCapture(id); }
  absl::StatusOr<std::optional<std::string>> CaptureDevice(const std::string& id) override {
    return inner_->CaptureDevice(id);
  }
  absl::Status ForEachRawCapture(const std::string& d, const std::function<void(const RawCapture&)>& fn) override {
    return inner_->ForEachRawCapture(d, fn);
  }
  absl::StatusOr<std::optional<RawCapture>> GetRawCapture(const std::string& id) override {
    return inner_->GetRawCapture(id);
  }
  absl::Status ReplaceReport(const std::string& id, const report::Report& r, const std::string& j) override {
    return inner_->ReplaceReport(id, r, j);
  }
  absl::StatusOr<Stats> GetStats() override { return inner_->GetStats(); }

  // QueryStore
  absl::StatusOr<std::vector<storage::DeviceSummaryRow>> ListDevices() override { return inner_->ListDevices(); }
  absl::StatusOr<storage::RetentionMarks> GetRetentionMarks(const std::string& id) override {
    return inner_->GetRetentionMarks(id);
  }
  absl::StatusOr<std::optional<storage::DeviceRecord>> GetDevice(const std::string& id) override {
    return inner_->GetDevice(id);
  }
  absl::StatusOr<std::optional<storage::StoredReport>> GetReport(const std::string& id,
                                                                 const std::string& at) override {
    return inner_->GetReport(id, at);
  }
  absl::StatusOr<std::optional<storage::StoredReport>> GetReportByCapture(const std::string& id) override {
    return inner_->GetReportByCapture(id);
  }
  absl::StatusOr<std::vector<storage::HistoryRow>> ProcessHistory(const std::string& d, const std::string& p,
                                                                  const std::string& m, const std::string& s,
                                                                  uint32_t l) override {
    return inner_->ProcessHistory(d, p, m, s, l);
  }
  absl::StatusOr<std::vector<storage::HistoryRow>> DeviceHistory(const std::string& d, const std::string& m,
                                                                 const std::string& s, uint32_t l) override {
    return inner_->DeviceHistory(d, m, s, l);
  }
  absl::StatusOr<std::vector<storage::FleetValueRow>> LatestPerDevice(const std::string& m,
                                                                      const std::string& p) override {
    return inner_->LatestPerDevice(m, p);
  }
  absl::StatusOr<std::vector<storage::StoredReport>> LatestReportsOfSweep(const std::string& id) override {
    return inner_->LatestReportsOfSweep(id);
  }
  absl::StatusOr<std::vector<storage::StoredReport>> LatestReportsSince(const std::string& since) override {
    return inner_->LatestReportsSince(since);
  }
  absl::StatusOr<std::vector<storage::StoredReport>> LatestReportsPerBuild(const std::string& since) override {
    return inner_->LatestReportsPerBuild(since);
  }
  absl::StatusOr<std::vector<storage::LabelledCapture>> LabelledCaptures(const storage::LabelSet& l) override {
    return inner_->LabelledCaptures(l);
  }
  absl::StatusOr<storage::LabelSet> CaptureLabels(const std::string& id) override { return inner_->CaptureLabels(id); }
  absl::StatusOr<std::optional<int64_t>> CaptureFigure(const std::string& id, const std::string& m,
                                                       const std::string& p) override {
    return inner_->CaptureFigure(id, m, p);
  }

  // SweepStore
  absl::Status PutSweep(const storage::SweepRecord& s) override { return inner_->PutSweep(s); }
  absl::StatusOr<std::optional<storage::SweepRecord>> GetSweep(const std::string& id) override {
    return inner_->GetSweep(id);
  }
  absl::StatusOr<std::vector<storage::SweepRecord>> UnfinishedSweeps() override { return inner_->UnfinishedSweeps(); }

  // TokenStore
  absl::Status PutToken(const storage::TokenRecord& t) override { return inner_->PutToken(t); }
  absl::StatusOr<std::optional<storage::TokenRecord>> FindTokenByHash(const std::string& h) override {
    if (fail_token_reads) return TokenReadError();
    return inner_->FindTokenByHash(h);
  }
  absl::StatusOr<std::vector<storage::TokenRecord>> ListTokens() override {
    if (fail_token_reads) return TokenReadError();
    return inner_->ListTokens();
  }
  absl::StatusOr<bool> HasTokens() override {
    if (fail_token_reads) return TokenReadError();
    return inner_->HasTokens();
  }
  absl::StatusOr<bool> RevokeToken(const std::string& n, const std::string& at) override {
    return inner_->RevokeToken(n, at);
  }

  storage::FleetStore* fleet() override { return inner_->fleet(); }

  // BaselineStore
  absl::StatusOr<int64_t> PutBaseline(const std::string& n, const std::string& at, const std::string& t) override {
    return inner_->PutBaseline(n, at, t);
  }
  absl::StatusOr<std::optional<storage::BaselineRecord>> GetBaseline(int64_t v) override {
    return inner_->GetBaseline(v);
  }

 private:
  static absl::Status TokenReadError() { return absl::UnavailableError("database is locked"); }

  std::unique_ptr<storage::Store> inner_;
};

}  // namespace memfleet::testing

#endif  // MEMFLEET_TESTS_SUPPORT_FAILING_STORE_H_
