// Re-accounting a history on PostgreSQL: one server alone against two sharing the run
// (ReaccountSharedCaptures: claimed batches, FOR UPDATE SKIP LOCKED), on the same stored history on a
// real PostgreSQL (tests/support/postgres_server.h, started once for the binary). Each iteration is a
// whole run over every capture; the workers are threads with their own store, as two servers would be.
// docs/performance.md "Shared re-accounting" quotes the ratio.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/history/reaccount.h"
#include "storage/postgres/pg_store.h"
#include "tests/support/ingested_history.h"
#include "tests/support/postgres_server.h"

namespace memfleet {
namespace {

constexpr int kDevices = 4;
constexpr int kPerDevice = 30;
constexpr int kCaptures = kDevices * kPerDevice;

// The database, filled once for every benchmark of the binary; "" when it could not be made.
const std::string& HistoryUri() {
  static const std::string* uri = [] {
    static std::unique_ptr<testing::PostgresServer> server;
    absl::StatusOr<std::unique_ptr<testing::PostgresServer>> started = testing::PostgresServer::Start();
    if (!started.ok()) return new std::string();
    server = *std::move(started);
    absl::StatusOr<std::string> db = server->NewDatabase();
    if (!db.ok()) return new std::string();
    absl::StatusOr<std::unique_ptr<storage::SqlStore>> store = storage::OpenPgStore(*db);
    if (!store.ok() || !testing::IngestHistory(**store, kDevices, kPerDevice, /*keyframe_every=*/8).ok()) {
      return new std::string();
    }
    return new std::string(*db);
  }();
  return *uri;
}

void BM_ReaccountOnPostgres(benchmark::State& state) {
  const std::string& uri = HistoryUri();
  if (uri.empty()) {
    state.SkipWithError("no PostgreSQL (Debian package postgresql) or the history could not be stored");
    return;
  }
  const int workers = static_cast<int>(state.range(0));
  std::vector<std::unique_ptr<storage::SqlStore>> stores;
  for (int w = 0; w < workers; ++w) stores.push_back(*storage::OpenPgStore(uri));
  uint64_t reaccounted = 0;
  for (auto _ : state) {
    std::vector<std::thread> threads;
    std::vector<uint64_t> shares(static_cast<size_t>(workers));
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        absl::StatusOr<server::ReaccountResult> r =
            server::ReaccountSharedCaptures(*stores[static_cast<size_t>(w)], "", "2026-12-05T00:00:00Z");
        shares[static_cast<size_t>(w)] = r.ok() && r->failed == 0 ? r->reaccounted : 0;
      });
    }
    for (std::thread& t : threads) t.join();
    uint64_t total = 0;
    for (uint64_t share : shares) total += share;
    if (total != kCaptures) state.SkipWithError("a run did not re-account every capture exactly once");
    reaccounted += total;
  }
  state.counters["captures_per_s"] = benchmark::Counter(static_cast<double>(reaccounted), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReaccountOnPostgres)->Arg(1)->Arg(2)->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace memfleet

BENCHMARK_MAIN();
